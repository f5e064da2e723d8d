/// Swift `async` closures as Lua functions: called from a task they suspend it until the Swift
/// work finishes (then it resumes on the loop, the work's error raised in it); called elsewhere
/// they run the loop until it is done. Cancelling the Lua task cancels the Swift `Task`.
/// (`AsyncFunction` is the mechanism, shared with `@LuaExport`'s async members.)
extension LuaState {
    /// Registers an `async` Swift closure as the global function `name`:
    /// `state.register("fetch") { (url: String) async throws -> String in ... }`.
    public func register<each A: LuaConvertible & Sendable, R: LuaConvertible & Sendable>(
        _ name: String, _ body: @escaping @Sendable (repeat each A) async throws -> R
    ) {
        let function = AsyncFunction.make(body)
        try? setGlobal(name) { $0.push(function: name, function) }
    }

    /// Registers an `async` Swift closure returning nothing as the global function `name`.
    public func register<each A: LuaConvertible & Sendable>(
        _ name: String, _ body: @escaping @Sendable (repeat each A) async throws -> Void
    ) {
        let function = AsyncFunction.make(body)
        try? setGlobal(name) { $0.push(function: name, function) }
    }
}
