
/// Swift closures with typed parameters as Lua functions: each argument is checked with Lua's
/// wording (`bad argument #2 to 'add' (number expected, got string)`), the result is pushed, and a
/// Swift error becomes a Lua error at the caller's position.
public enum TypedFunction {
    /// A Lua function body calling `body` with its converted arguments, pushing its result.
    @inlinable public static func make<each A: LuaConvertible, R: LuaConvertible>(
        _ body: @escaping (repeat each A) throws -> R
    ) -> LuaFunction {
        { stack throws(LuaRaise) in try invoke(body, stack) }
    }

    /// A Lua function body calling `body` with its converted arguments; returns nothing.
    @inlinable public static func make<each A: LuaConvertible>(
        _ body: @escaping (repeat each A) throws -> Void
    ) -> LuaFunction {
        { stack throws(LuaRaise) in try invoke(body, stack) }
    }

    /// Converts the arguments, calls `body`, pushes its result.
    @inlinable @inline(__always) public static func invoke<each A: LuaConvertible, R: LuaConvertible>(
        _ body: (repeat each A) throws -> R, _ stack: LuaStack
    ) throws(LuaRaise) -> Int32 {
        var index: Int32 = 0
        let arguments = (repeat try argument((each A).self, stack, &index))
        let result: R
        do { result = try body(repeat each arguments) } catch { throw raise(error, on: stack) }
        try stack.push(returned: result, what: "result")  // LUA_MINSTACK slots are free here
        return 1
    }

    /// Converts the arguments and calls `body`.
    @inlinable @inline(__always) public static func invoke<each A: LuaConvertible>(
        _ body: (repeat each A) throws -> Void, _ stack: LuaStack
    ) throws(LuaRaise) -> Int32 {
        var index: Int32 = 0
        let arguments = (repeat try argument((each A).self, stack, &index))
        do { try body(repeat each arguments) } catch { throw raise(error, on: stack) }
        return 0
    }

    /// A method of a bridged class: argument 1 is the receiver, checked as `T`
    /// (`calling 'increment' on bad self (Counter expected, got table)`).
    @inlinable @inline(__always) public static func invokeMethod<T: LuaBridged & SendableMetatype, each A: LuaConvertible, R: LuaConvertible>(
        _ body: (T, repeat each A) throws -> R, _ stack: LuaStack
    ) throws(LuaRaise) -> Int32 {
        let receiver = try stack.checkObject(T.self, at: 1)
        var index: Int32 = 1
        let arguments = (repeat try argument((each A).self, stack, &index))
        let result: R
        do { result = try body(receiver, repeat each arguments) } catch { throw raise(error, on: stack) }
        try stack.push(returned: result, what: "result")  // LUA_MINSTACK slots are free here
        return 1
    }

    /// A method returning nothing.
    @inlinable @inline(__always) public static func invokeMethod<T: LuaBridged & SendableMetatype, each A: LuaConvertible>(
        _ body: (T, repeat each A) throws -> Void, _ stack: LuaStack
    ) throws(LuaRaise) -> Int32 {
        let receiver = try stack.checkObject(T.self, at: 1)
        var index: Int32 = 1
        let arguments = (repeat try argument((each A).self, stack, &index))
        do { try body(receiver, repeat each arguments) } catch { throw raise(error, on: stack) }
        return 0
    }

    @inlinable @inline(__always) static func argument<T: LuaConvertible>(_ type: T.Type, _ stack: LuaStack,
                                                    _ index: inout Int32) throws(LuaRaise) -> T {
        index += 1
        return try T.check(stack, at: index)
    }

    /// The Lua error for a Swift error: `LuaRaise` as is, a `LuaError` (from a nested call) as the
    /// value that was raised, unchanged, anything else as a message at the caller's position.
    @usableFromInline static func raise(_ error: any Error, on stack: LuaStack) -> LuaRaise {
        switch error {
        case let raise as LuaRaise:
            return raise
        case let luaError as LuaError:
            _ = stack.ensureSpace(1)
            // The value the callback raised, unchanged (rule 4); from another state (a worker's),
            // or without one, the message with its traceback.
            if let value = luaError.value, let state = value.state, state === stack.state {
                value.push(on: stack)
            } else {
                stack.push(luaError.description)
            }
            return .valueOnTop
        default:
            return .message(String(describing: error))
        }
    }
}
