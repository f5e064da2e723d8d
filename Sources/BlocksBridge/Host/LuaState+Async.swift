/// `async` entry points that cooperate with the state's event loop: run the code, then drive the
/// loop (`eventLoop.waitUntilIdle()`) until nothing the code scheduled is pending, so
/// `try await state.runUntilIdle(...)` returns once its delayed blocks and timers have run, the way
/// bklua runs a script. Waiting suspends the task (no thread blocks); cancelling the task ends the
/// wait. A repeating timer keeps the call waiting until it is invalidated.
///
/// They have names of their own: an `async` overload of `run` would be chosen for every `run` in
/// async code, silently adding the wait. They run on the caller's executor
/// (`nonisolated(nonsending)`): a state stays with one isolation.
extension LuaState {
    /// Runs a chunk, then the loop until idle; returns the chunk's first result as `T`.
    nonisolated(nonsending)
    public func runUntilIdle<T: LuaConvertible>(_ code: String, name: String? = nil, as type: T.Type) async throws(LuaError) -> T {
        let result = try run(code, name: name, as: type)
        await eventLoop.waitUntilIdle()
        return result
    }

    /// Runs a Lua file, then the loop until idle; returns the file's first result as `T`.
    nonisolated(nonsending)
    public func runFileUntilIdle<T: LuaConvertible>(_ path: String, as type: T.Type) async throws(LuaError) -> T {
        let result = try runFile(path, as: type)
        await eventLoop.waitUntilIdle()
        return result
    }

    /// Calls the global function `function`, then runs the loop until idle; returns the first
    /// result as `R`.
    nonisolated(nonsending)
    public func callUntilIdle<each A: LuaConvertible, R: LuaConvertible>(
        _ function: String, _ arguments: repeat each A, as type: R.Type
    ) async throws(LuaError) -> R {
        let result = try call(function, repeat each arguments, as: type)
        await eventLoop.waitUntilIdle()
        return result
    }


}
