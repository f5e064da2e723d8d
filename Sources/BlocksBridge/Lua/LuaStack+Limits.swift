import CLua
import CLuaShim

/// The sandbox's limits on a state (`Limits.c`): the count hook that raises between Lua
/// instructions, never inside Swift (DEVELOPERS.md rule 12).
extension LuaStack {
    /// Installs the count hook that enforces the state's instruction and time limits and
    /// interrupts (coroutines created afterwards inherit it). [-0, +0]
    package func installLimitHooks() { bk_sethooks(L) }

    /// Starts a fresh instruction and time budget and clears a pending interrupt. [-0, +0]
    func resetLimits() { bk_reset_limits(L, runtime) }

    /// Has the count hook (when installed) run before the next instruction, so a stop seen by
    /// `bk_stop_requested` trips at once. [-0, +0]
    func checkLimitsSoon() { bk_check_limits_soon(L) }

    /// Whether the state's script is to stop (an interrupt not yet consumed, a tripped limit, a
    /// passed deadline): `bk_stop_requested`, which only reads.
    var isStopRequested: Bool { bk_stop_requested(runtime) != nil }

    /// Why the state's script is to stop, or nil (`bk_stop_requested`).
    var stopReason: String? { bk_stop_requested(runtime).map { String(cString: $0) } }

    /// How long (seconds) a wait on the loop may last before the limits are checked again; -1
    /// when no limit applies (`bk_limits_wait_cap`).
    var limitsWaitCap: Double { bk_limits_wait_cap(runtime, L) }

    /// Asks the state's running script to stop ("interrupted"), installing the count hook first
    /// (a worker runs without one until asked): safe from any thread. [-0, +0]
    func interruptInstallingHook() { bk_interrupt_installing_hook(L, runtime) }

    /// Opens Lua's standard libraries (`safe`: the sandbox's set, `bk_opensafelibs`) in protected
    /// mode; returns a Lua status (the error on top on failure).
    package func openLibraries(safe: Bool) -> Int32 { safe ? bk_opensafelibs(L) : bk_openlibs(L) }
}
