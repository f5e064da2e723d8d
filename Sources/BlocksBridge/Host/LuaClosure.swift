/// A Swift closure passed to Lua as a function value: how Swift code hands blocks to the `bk`
/// helpers (`try lua.call("bk.map", [1, 2, 3], LuaClosure { (x: Int) in x * 10 }, as: [Int].self)`)
/// or stores callbacks in Lua tables.
///
/// Arguments are checked with Lua's wording; a thrown Swift error is a Lua error at the caller.
public struct LuaClosure: LuaConvertible {
    public let name: String
    public let body: LuaFunction

    /// A closure with typed arguments and a result. `name` is what argument errors call it.
    @inlinable public init<each A: LuaConvertible, R: LuaConvertible>(
        name: String = "?", _ body: @escaping (repeat each A) throws -> R
    ) {
        self.name = name
        self.body = TypedFunction.make(body)
    }

    /// A closure with typed arguments and no result.
    @inlinable public init<each A: LuaConvertible>(name: String = "?", _ body: @escaping (repeat each A) throws -> Void) {
        self.name = name
        self.body = TypedFunction.make(body)
    }

    /// A stack-level function (any arguments and results).
    public init(name: String = "?", raw body: @escaping LuaFunction) {
        self.name = name
        self.body = body
    }

    public func push(on stack: LuaStack) { stack.push(function: name, body) }
    /// Lua functions do not become Swift closures (hold them as `LuaRef` and `call` them).
    public static func read(from stack: LuaStack, at index: Int32) -> LuaClosure? { nil }
    public static var luaTypeName: String { "function" }
}
