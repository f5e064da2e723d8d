#if canImport(Glibc)
import Glibc
#endif
import CLua

extension EventLoop {
    /// A timer already on the loop: `body(timer)` runs every `interval` seconds when it repeats,
    /// once otherwise.
    @discardableResult
    public func scheduledTimer(interval: Double, repeats: Bool,
                               _ body: @escaping @Sendable (BlockTimer) -> Void) -> BlockTimer {
        let timer = BlockTimer(loop: self, interval: interval, repeats: repeats, body: .swift(body))
        schedule(timer)
        return timer
    }

    /// A timer that starts on `timer.schedule()`.
    public func timer(interval: Double, repeats: Bool,
                      _ body: @escaping @Sendable (BlockTimer) -> Void) -> BlockTimer {
        BlockTimer(loop: self, interval: interval, repeats: repeats, body: .swift(body))
    }

    /// A timer calling the Lua function at `function` with the timer. The caller must hold the
    /// state (be in Lua or hold `state.lock`).
    public func timer(interval: Double, repeats: Bool, functionAt function: Int32, in stack: LuaStack) -> BlockTimer {
        stack.pushCopy(of: function)
        let reference = luaL_ref(stack.L, LuaStack.registryIndex)
        return BlockTimer(loop: self, interval: interval, repeats: repeats, body: .lua(function: reference))
    }

    func schedule(_ timer: BlockTimer) {
        let deadline = MonotonicClock.now() &+ MonotonicClock.nanoseconds(timer.timeInterval)
        mutex.lock()
        guard timer.valid, timer.heapIndex < 0 else {
            mutex.unlock()
            return
        }
        let needsWake = insertLocked(timer, deadline: deadline)
        mutex.unlock()
        if needsWake { wake() }
    }

    func invalidate(_ timer: BlockTimer, on stack: LuaStack?) {
        mutex.lock()
        guard timer.valid else {
            mutex.unlock()
            return
        }
        timer.valid = false
        heap.remove(timer)
        let body = timer.body
        timer.body = .none
        let needsWake = !isLoopThreadLocked
        let waiters = takeWaiters(&timer.waiters)
        mutex.unlock()
        notify(waiters)
        if case .lua(let function) = body { release(reference: function, on: stack) }
        if needsWake { wake() }  // a loop sleeping until this timer may now be idle
    }

    func fire(_ timer: BlockTimer) {
        let isSwift = mutex.withLock { if case .swift = timer.body { true } else { false } }
        if isSwift {
            if let body = takeBodyToFire(timer) { timer.invoke(body, releasing: false, on: nil) }
        } else {
            // The body is read holding the state: a Lua body's registry slot cannot be released
            // (and reused by another function) between the validity check and the call.
            _ = withLua { stack in
                if let body = takeBodyToFire(timer) { timer.invoke(body, releasing: !timer.repeats, on: stack) }
            }
        }
    }

    /// The body to run for `fire` when the timer is still valid (a non-repeating timer is
    /// invalidated and gives its body up), else nil.
    private func takeBodyToFire(_ timer: BlockTimer) -> TimerBody? {
        mutex.withLock {
            guard timer.valid else { return nil }
            let body = timer.body
            if !timer.repeats {
                timer.valid = false
                heap.remove(timer)
                timer.body = .none
            }
            return body
        }
    }

    /// The body of a due repeating timer, read again when it is about to run (the state is held):
    /// nil when it was invalidated since it became due.
    func currentBody(of timer: BlockTimer) -> TimerBody? {
        mutex.withLock { timer.valid ? timer.body : nil }
    }

    /// A timer taken off the heap because it is due (under `mutex`): a repeating one goes back on
    /// for its next firing before its block runs (so the block may invalidate it), skipping the
    /// firings it missed, as NSTimer does.
    func timerBecameDue(_ timer: BlockTimer, now: UInt64) -> DueAction {
        guard timer.valid else { return .nothing }
        if timer.repeats {
            let interval = max(MonotonicClock.nanoseconds(timer.timeInterval), 1)
            let late = now >= timer.deadline ? now - timer.deadline : 0
            let next = timer.deadline &+ (late / interval + 1) &* interval
            _ = insertLocked(timer, deadline: next)
            return .fire(timer, nil, releasing: false)  // the body is read when it runs
        }
        timer.valid = false
        let body = timer.body
        timer.body = .none
        return .fire(timer, body, releasing: true)  // the body is the action's now: no one else frees it
    }
}
