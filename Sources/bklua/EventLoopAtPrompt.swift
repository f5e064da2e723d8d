import BlocksBridge

/// What the prompt needs from the state's event loop: when work is due, a descriptor that wakes
/// the prompt when another thread schedules work, running the due work, and letting other threads
/// into Lua while the prompt waits for a key.
struct EventLoopAtPrompt {
    let state: LuaState

    /// Seconds until a block or timer is due (nil: none scheduled).
    var secondsUntilNextWork: Double? { state.eventLoop.secondsUntilNextWork }

    /// Readable when another thread schedules or finishes work (nil: no such descriptor).
    var wakeupDescriptor: Int32? { state.eventLoop.wakeupDescriptor }

    /// Runs the blocks and timers due now.
    func runDueWork() { state.eventLoop.runDueWork() }

    /// Runs `body` (a wait) with the state free for other threads' blocks.
    func waitOutsideLua<R>(_ body: () -> R) -> R { state.lock.withoutHolding(body) }
}
