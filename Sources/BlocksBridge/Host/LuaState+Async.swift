/// `async` entry points: run code, then give the loop's pending work (delayed blocks, timers) its
/// turn before returning, so `try await state.run(...)` sees what the script scheduled happen.
///
/// They run on the caller's executor (`nonisolated(nonsending)`): a state stays with one isolation.
extension LuaState {
    /// Runs a chunk and returns its first result as `T`, then lets pending work run.
    nonisolated(nonsending)
    public func run<T: LuaConvertible>(_ code: String, name: String? = nil, as type: T.Type) async throws(LuaError) -> T {
        let result = try runChunk(code, name: name, as: type)
        await settle()
        return result
    }

    /// Calls the global function `function` and returns its first result as `R`, then lets
    /// pending work run.
    nonisolated(nonsending)
    public func call<R: LuaConvertible>(_ function: String, _ arguments: any LuaConvertible...,
                                        as type: R.Type) async throws(LuaError) -> R {
        let s = activeStack
        let base = s.top
        defer { s.top = base }
        try s.pushGlobal(path: function)
        let result = try s.callTop(arguments: arguments, as: type)
        await settle()
        return result
    }

    /// Gives other tasks (and, with the event loop, due blocks and timers) their turn.
    nonisolated(nonsending)
    func settle() async {
        await Task.yield()
    }
}
