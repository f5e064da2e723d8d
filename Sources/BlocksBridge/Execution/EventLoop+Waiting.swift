/// A Lua function and its argument (registry slots) to call on the main queue when a handle or
/// timer something waits on changes: how `bk.await` learns that a block ran or a timer fired.
///
/// A class, so waiter lists can hold it; its call is a `BlockBody` it owns until `notify` takes
/// it for the block that makes the call (once: a second take finds `.none`). A waiter dropped
/// without being notified frees its slots through the release queue.
final class LuaWaiter: @unchecked Sendable {
    // @unchecked: `call` is touched only by the waiter's one owner at a time (the list it is on,
    // under the loop's mutex, then whoever took it from there).
    private var call: BlockBody

    /// Registry slots holding the values at the stack slots `function` and `argument`.
    init(_ stack: LuaStack, function: Int32, argument: Int32) {
        call = .lua(function: RegistrySlot(copying: function, in: stack),
                    object: RegistrySlot(copying: argument, in: stack))
    }

    /// The call, for the block that makes it.
    func takeCall() -> BlockBody { call.take() }

    /// Frees the slots now (the caller holds the state).
    func release(on stack: LuaStack) { call.take().release(on: stack) }
}

/// How a wait on the loop ended (`run(seconds:until:)`).
enum LoopWaitOutcome: String, CaseIterable {
    case done, timeout, stopped
    /// Ctrl-C at bklua's prompt (`interrupt`).
    case interrupted
    /// Nothing is scheduled that could ever make the condition true.
    case idle
    /// The state's sandbox limits stopped the script (its hook raises at the next instruction).
    case limited
}

extension EventLoop {
    /// `unref()` / `ref()` of a handle or timer: whether it keeps the loop alive.
    func setReferenced(_ work: ScheduledWork, _ referenced: Bool) {
        let wake = mutex.withLock {
            if work.referenced != referenced, let handle = work as? BlockHandle, handle.isOutsideWorkLocked {
                // Queued or running on another queue: it moves between the two counts.
                outstanding += referenced ? 1 : -1
                unreferencedOutside -= referenced ? 1 : -1
            }
            heap.setReferenced(work, referenced)
            return !isLoopThreadLocked
        }
        if wake { self.wake() }  // a loop waiting only for it may now be idle
    }

    /// Calls each waiter's function with its argument on the main queue, on the loop's next turn.
    /// Needs no state lock (it only moves references onto new blocks).
    func notify(_ waiters: [LuaWaiter]) {
        for waiter in waiters {
            let handle = BlockHandle(loop: self, queue: .main, body: waiter.takeCall())
            schedule(handle, delay: 0)
        }
    }

    /// The status of `handle` as `bk.await` sees it; while it is pending, `waiter` (when given) is
    /// added to it (with its registration for `unwatch`), else released (the caller holds the state).
    func watch(_ handle: BlockHandle, adding waiter: LuaWaiter?, on stack: LuaStack) -> (LuaAwaitState, Int?) {
        let (status, registration): (LuaAwaitState, Int?) = mutex.withLock {
            switch handle.status {
            case .finished: return (.done, nil)
            case .cancelled: return (.cancelled, nil)
            case .scheduled, .queued, .running:
                return (.pending, waiter.map { handle.waiters.add($0) })
            }
        }
        if status != .pending, let waiter { release(waiter, on: stack) }
        return (status, registration)
    }

    /// How many times `timer` fired and whether it is valid; while it is valid, `waiter` (when
    /// given) is added for its next firing or invalidation (with its registration), else released.
    func watch(_ timer: BlockTimer, adding waiter: LuaWaiter?,
               on stack: LuaStack) -> (firings: Int, valid: Bool, registration: Int?) {
        let state: (Int, Bool, Int?) = mutex.withLock {
            let registration = timer.valid ? waiter.map { timer.waiters.add($0) } : nil
            return (timer.firings, timer.valid, registration)
        }
        if !state.1, let waiter { release(waiter, on: stack) }
        return state
    }

    func release(_ waiter: LuaWaiter, on stack: LuaStack) {
        waiter.release(on: stack)
    }

    /// Runs the loop until `isDone()` (checked after each turn), `seconds` have passed, `stop` is
    /// called (consumed: a wait is the innermost run), the state's limits stop it or nothing
    /// scheduled is left that could make it true. The caller holds the state (it is in Lua).
    func run(seconds: Double?, until isDone: () -> Bool) -> LoopWaitOutcome {
        let end = seconds.map { MonotonicClock.now() &+ MonotonicClock.nanoseconds($0) }
        return drive(LoopDriver(pending: .any, end: end), until: isDone)
    }
}

extension BKFunction {
    /// The `unref()` and `ref()` methods of loop work Lua holds (handles, timers): whether it keeps
    /// the loop alive (it still runs while the loop runs). Both return self.
    static func loopReferenceMethods<Work: ScheduledWork & LuaBridged>(
        _ type: Work.Type, loop: @escaping @Sendable (Work) -> EventLoop
    ) -> [BKFunction] {
        [(name: "unref", referenced: false), (name: "ref", referenced: true)].map { method in
            BKFunction(method.name) { stack throws(LuaRaise) in
                let work = try stack.checkObject(Work.self, at: 1)
                loop(work).setReferenced(work, method.referenced)
                stack.top = 1
                return 1
            }
        }
    }
}
