/// A Swift closure passed to Lua as a function value: how Swift code hands blocks to the `bk`
/// helpers (`try lua.call("bk.map", [1, 2, 3], LuaClosure { (x: Int) in x * 10 }, as: [Int].self)`)
/// or stores callbacks in Lua tables.
///
/// Arguments are checked with Lua's wording; a thrown Swift error is a Lua error at the caller.
///
/// Sendable, like `LuaRef`: make one on any thread and hand it to a Dispatch queue or a task, e.g.
/// as an argument of `LuaRef.callOnLoop`. The body is `@Sendable` because Lua calls it on the
/// thread that runs the state (under the state's lock), not necessarily the one that made it, and
/// one closure may be pushed into several states: what it captures must be safe to share (a
/// `Mutex`, an actor, values), which the compiler checks.
public struct LuaClosure: LuaConvertible, Sendable {
    public let name: String
    public let body: @Sendable (LuaStack) throws(LuaRaise) -> Int32

    /// A closure with typed arguments and a result. `name` is what argument errors call it.
    @inlinable public init<each A: LuaConvertible, R: LuaConvertible>(
        name: String = "?", _ body: @escaping @Sendable (repeat each A) throws -> R
    ) {
        self.name = name
        self.body = { stack throws(LuaRaise) in try TypedFunction.invoke(body, stack) }
    }

    /// A closure with typed arguments and no result.
    @inlinable public init<each A: LuaConvertible>(
        name: String = "?", _ body: @escaping @Sendable (repeat each A) throws -> Void
    ) {
        self.name = name
        self.body = { stack throws(LuaRaise) in try TypedFunction.invoke(body, stack) }
    }

    /// A stack-level function (any arguments and results).
    public init(name: String = "?", raw body: @escaping @Sendable (LuaStack) throws(LuaRaise) -> Int32) {
        self.name = name
        self.body = body
    }

    public func push(on stack: LuaStack) { stack.push(function: name, body) }
    /// Lua functions do not become Swift closures (hold them as `LuaRef` and `call` them).
    /// `@LuaExport` refuses a `LuaClosure` parameter at compile time for that reason.
    public static func read(from stack: LuaStack, at index: Int32) -> LuaClosure? { nil }
    public static var luaTypeName: String { "function" }
    /// A hand-written function taking a `LuaClosure` says why no function is accepted (rather than
    /// `function expected, got function`).
    public static func check(_ stack: LuaStack, at index: Int32) throws(LuaRaise) -> LuaClosure {
        if stack.type(at: index) == .function {
            throw .argument(index, "a Lua function cannot become a LuaClosure (the Swift side takes a LuaRef)")
        }
        throw .type(index, expected: luaTypeName)
    }
}
