
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
        BlockTimer(loop: self, interval: interval, repeats: repeats,
                   body: .lua(function: RegistrySlot(copying: function, in: stack)))
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
        let body = timer.body.take()
        let needsWake = !isLoopThreadLocked
        let waiters = takeWaiters(&timer.waiters)
        mutex.unlock()
        notify(waiters)
        body.release(on: stack)
        if needsWake { wake() }  // a loop sleeping until this timer may now be idle
    }

    func fire(_ timer: BlockTimer) {
        if mutex.withLock({ timer.body.isSwift }) {
            fire(timer, on: nil)
        } else {
            // The body is read holding the state: a Lua body's registry slot cannot be released
            // (and reused by another function) between the validity check and the call.
            _ = withLua { stack in fire(timer, on: stack) }
        }
    }

    /// `fire`: a repeating timer keeps its body and schedule, any other is invalidated and gives
    /// its body up (nothing when it is no longer valid).
    private func fire(_ timer: BlockTimer, on stack: LuaStack?) {
        if timer.repeats {
            timer.invokeCurrentBody(on: stack)
            return
        }
        let body: TimerBody? = mutex.withLock {
            guard timer.valid else { return nil }
            timer.valid = false
            heap.remove(timer)
            return timer.body.take()
        }
        if let body { timer.invoke(taking: body, on: stack) }
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
            return .fireRepeating(timer)  // the body is read when it runs
        }
        timer.valid = false
        return .fire(timer, timer.body.take())  // the body is the action's now: no one else frees it
    }
}
