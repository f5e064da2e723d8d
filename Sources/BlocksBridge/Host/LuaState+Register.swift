import CLua
import CLuaShim

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
        lock.lock()  // background blocks may be in Lua: take the state first
        defer { lock.unlock() }
        let s = activeStack
        let base = s.top
        defer { s.top = base }
        guard s.ensureSpace(3) else { return }
        s.pushGlobalTable()
        s.push(function: name, body)
        s.rawSet(-2, field: name)
    }
}
