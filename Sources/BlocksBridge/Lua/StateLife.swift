import CLuaShim

/// The life of a state, one state machine that every part reads (the trampoline, the tasks
/// engine's `closing()`, the loop, the release queue): never a flag of its own.
///
/// - `open`: Lua runs and bk functions answer.
/// - `closing`: the host's close (`LuaState.deinit`), `os.exit(_, true)` or bk.so's anchor began
///   it: exported functions refuse (rule 10) except finalizers, the loop schedules and enters
///   nothing, released slots go with the state.
/// - `closed`: the Swift `LuaState` is gone (`swift_state` is NULL); `lua_close` has run, or runs
///   when the outermost frame of the state releases its lock (rule 17).
///
/// It is kept in the C runtime (`bk_runtime.life`, changed only by `bk_runtime_advance_life`),
/// since the trampoline and os.exit's wrapper read and change it in C; it only moves forward.
enum LuaStateLife: Int32 {
    case open = 0, closing = 1, closed = 2
}

extension LuaRuntimeStorage {
    /// Readable from any thread (an atomic load).
    var life: LuaStateLife { LuaStateLife(rawValue: bk_runtime_life(pointer)) ?? .closed }

    /// Moves the life forward (never back); the caller holds the state's lock. `closed` also
    /// clears `swift_state`: nothing may reach the Swift state after it is gone.
    func advance(to life: LuaStateLife) {
        if life == .closed { pointer.pointee.swift_state = nil }
        bk_runtime_advance_life(pointer, life.rawValue)
    }
}
