import CLuaShim

/// The state's sandbox limits, asked by each turn of the loop (`turn`): a wait runs no Lua
/// instruction, so the count hook that checks them otherwise never runs while the loop waits.
extension EventLoop {
    /// The state's sandbox limits (an interrupt, its time limit) stop the script while it waits on
    /// the loop: true when they do. The count hook of the main thread then runs before its next
    /// instruction and raises; a coroutine that called the wait raises at its own next hook.
    /// Limits are otherwise checked by that hook only, between Lua instructions, and a wait runs
    /// none: a sandboxed `bk.sleep(1e9)` or a repeating timer would outlive the budget.
    func limitsStop() -> Bool {
        guard bk_stop_requested(runtime) != nil else { return false }
        if !isClosed { LuaStack(L, runtime).checkLimitsSoon() }
        return true
    }

    /// How long a wait may last before `limitsStop` must be asked again (nil: no limits apply).
    func limitsWaitCap() -> UInt64? {
        if isClosed { return nil }
        let seconds = LuaStack(L, runtime).limitsWaitCap
        return seconds < 0 ? nil : MonotonicClock.nanoseconds(seconds)
    }
}
