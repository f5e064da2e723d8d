import CLua
import CLuaShim

extension LuaState {
    /// Creates a state limited by `sandbox`: its libraries (the safe set unless told otherwise),
    /// the `bk` module, and the memory, instruction and time limits.
    public convenience init(sandbox: Sandbox) throws(LuaError) {
        try self.init(standardLibraries: false)
        let status = stack.openLibraries(safe: sandbox.safeLibraries)
        if status != LUA_OK { throw stack.popError(status: status) }
        // The hook is installed even without instruction or time limits: it is what `interrupt`
        // relies on. Coroutines created later inherit it.
        stack.installLimitHooks()
        instructionLimit = sandbox.instructionLimit
        timeLimit = sandbox.timeLimit
        memoryLimit = sandbox.memoryLimit
        resetLimits()
    }

    /// Lua instructions each run may execute (0: no budget). Setting a budget installs the hook.
    public var instructionLimit: Int {
        get { Int(runtime.pointee.instruction_limit) }
        set {
            runtime.pointee.instruction_limit = Int64(max(0, newValue))
            if newValue > 0 { stack.installLimitHooks() }
        }
    }

    /// Wall-clock time each run may take (nil: none). Setting one installs the hook.
    public var timeLimit: Duration? {
        get {
            let seconds = runtime.pointee.time_limit
            return seconds > 0 ? .nanoseconds(Int64(seconds * 1e9)) : nil
        }
        set {
            let seconds = max(0, newValue?.inSeconds ?? 0)
            runtime.pointee.time_limit = seconds
            if seconds > 0 { stack.installLimitHooks() }
        }
    }

    /// Why the current run is to stop ("interrupted", "time limit exceeded", ...), or nil: what a
    /// host learns when `eventLoop.run()` returned early because the budget ran out while it waited.
    public var stopReason: String? {
        stack.stopReason
    }

    /// Instructions used since the budget was last reset (counted in steps of up to 1000).
    public var instructionsUsed: Int { Int(runtime.pointee.instructions_used) }

    /// Starts a fresh instruction and time budget and clears a pending interrupt. `run` and
    /// `runFile` do this themselves; hosts driving Lua another way (an event loop) call it per turn.
    public func resetLimits() {
        stack.resetLimits()
    }

    /// Resets the budget when no Lua code of this state is running (a nested `run` from inside an
    /// exported function shares the budget of the run it is part of).
    func resetLimitsForOutermostRun() {
        if runtime.pointee.pcall_depth == 0 { resetLimits() }
    }

    /// A handle that stops this state's running script from any thread.
    public var interruptHandle: LuaInterruptHandle { LuaInterruptHandle(storage: runtimeStorage) }
}

/// Stops a state's running script with the error "interrupted", from any thread. Running Lua code
/// notices only in states with the hook installed (sandboxed, or with an instruction or time
/// limit); a wait on the loop or a channel (`bk.sleep`, `ch:receive`) ends at once in any state.
/// The interrupt applies to the current run: the next `run` clears it.
public struct LuaInterruptHandle: Sendable {
    let storage: LuaRuntimeStorage

    public func interrupt() {
        bk_interrupt(storage.pointer)
        storage.wakers.wakeAll()
    }
}

extension LuaStack {
    /// After a wait on the loop: raises the reason when the state's limits stopped the script
    /// meanwhile (the calling thread's hook then raises again at its next instruction, so a pcall
    /// cannot go on).
    func raiseIfLimitsStopped() throws(LuaRaise) {
        guard let reason = stopReason else { return }
        checkLimitsSoon()
        throw .message(reason)
    }
}
