
/// Swift functions as Lua globals.
extension LuaState {
    /// Registers a Swift closure as the global function `name`:
    /// `state.register("add") { (a: Int, b: Int) in a + b }`.
    @inlinable public func register<each A: LuaConvertible, R: LuaConvertible>(
        _ name: String, _ body: @escaping (repeat each A) throws -> R
    ) {
        register(name, raw: TypedFunction.make(body))
    }

    /// Registers a Swift closure returning nothing as the global function `name`.
    @inlinable public func register<each A: LuaConvertible>(_ name: String, _ body: @escaping (repeat each A) throws -> Void) {
        register(name, raw: TypedFunction.make(body))
    }

    /// Registers a stack-level function (any number of arguments and results) as the global `name`.
    public func register(_ name: String, raw body: @escaping LuaFunction) {
        // A function always pushes: this fails only when the stack cannot grow (no memory).
        try? setGlobal(name) { $0.push(function: name, body) }
    }
}
