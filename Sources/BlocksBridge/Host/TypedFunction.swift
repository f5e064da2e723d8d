import CLua
import CLuaShim

/// Swift closures with typed parameters as Lua functions: each argument is checked with Lua's
/// wording (`bad argument #2 to 'add' (number expected, got string)`), the result is pushed, and a
/// Swift error becomes a Lua error at the caller's position.
public enum TypedFunction {
    /// A Lua function body calling `body` with its converted arguments, pushing its result.
    public static func make<each A: LuaConvertible, R: LuaConvertible>(
        _ body: @escaping (repeat each A) throws -> R
    ) -> LuaFunction {
        { stack throws(LuaRaise) in try invoke(body, stack) }
    }

    /// A Lua function body calling `body` with its converted arguments; returns nothing.
    public static func make<each A: LuaConvertible>(
        _ body: @escaping (repeat each A) throws -> Void
    ) -> LuaFunction {
        { stack throws(LuaRaise) in try invoke(body, stack) }
    }

    /// Converts the arguments, calls `body`, pushes its result.
    public static func invoke<each A: LuaConvertible, R: LuaConvertible>(
        _ body: (repeat each A) throws -> R, _ stack: LuaStack
    ) throws(LuaRaise) -> Int32 {
        var index: Int32 = 0
        let arguments = (repeat try argument((each A).self, stack, &index))
        let result: R
        do { result = try body(repeat each arguments) } catch { throw raise(error, on: stack) }
        guard stack.ensureSpace(2) else { throw .message("stack overflow") }
        result.push(on: stack)
        return 1
    }

    /// Converts the arguments and calls `body`.
    public static func invoke<each A: LuaConvertible>(
        _ body: (repeat each A) throws -> Void, _ stack: LuaStack
    ) throws(LuaRaise) -> Int32 {
        var index: Int32 = 0
        let arguments = (repeat try argument((each A).self, stack, &index))
        do { try body(repeat each arguments) } catch { throw raise(error, on: stack) }
        return 0
    }

    /// A method of a bridged class: argument 1 is the receiver, checked as `T`
    /// (`calling 'increment' on bad self (Counter expected, got table)`).
    public static func invokeMethod<T: LuaBridged & SendableMetatype, each A: LuaConvertible, R: LuaConvertible>(
        _ body: (T, repeat each A) throws -> R, _ stack: LuaStack
    ) throws(LuaRaise) -> Int32 {
        let receiver = try stack.checkObject(T.self, at: 1)
        var index: Int32 = 1
        let arguments = (repeat try argument((each A).self, stack, &index))
        let result: R
        do { result = try body(receiver, repeat each arguments) } catch { throw raise(error, on: stack) }
        guard stack.ensureSpace(2) else { throw .message("stack overflow") }
        result.push(on: stack)
        return 1
    }

    /// A method returning nothing.
    public static func invokeMethod<T: LuaBridged & SendableMetatype, each A: LuaConvertible>(
        _ body: (T, repeat each A) throws -> Void, _ stack: LuaStack
    ) throws(LuaRaise) -> Int32 {
        let receiver = try stack.checkObject(T.self, at: 1)
        var index: Int32 = 1
        let arguments = (repeat try argument((each A).self, stack, &index))
        do { try body(receiver, repeat each arguments) } catch { throw raise(error, on: stack) }
        return 0
    }

    private static func argument<T: LuaConvertible>(_ type: T.Type, _ stack: LuaStack,
                                                    _ index: inout Int32) throws(LuaRaise) -> T {
        index += 1
        return try T.check(stack, at: index)
    }

    /// The Lua error for a Swift error: `LuaRaise` as is, a `LuaError` (from a nested call) with
    /// its message and traceback unchanged, anything else as a message at the caller's position.
    static func raise(_ error: any Error, on stack: LuaStack) -> LuaRaise {
        switch error {
        case let raise as LuaRaise:
            return raise
        case let luaError as LuaError:
            _ = stack.ensureSpace(1)
            stack.push(luaError.description)
            return .valueOnTop
        default:
            return .message(String(describing: error))
        }
    }
}

extension LuaState {
    /// Registers a Swift closure as the global function `name`:
    /// `state.register("add") { (a: Int, b: Int) in a + b }`.
    public func register<each A: LuaConvertible, R: LuaConvertible>(
        _ name: String, _ body: @escaping (repeat each A) throws -> R
    ) {
        register(name, raw: TypedFunction.make(body))
    }

    /// Registers a Swift closure returning nothing as the global function `name`.
    public func register<each A: LuaConvertible>(_ name: String, _ body: @escaping (repeat each A) throws -> Void) {
        register(name, raw: TypedFunction.make(body))
    }

    /// Registers a stack-level function (any number of arguments and results) as the global `name`.
    public func register(_ name: String, raw body: @escaping LuaFunction) {
        let s = activeStack
        let base = s.top
        defer { s.top = base }
        guard s.ensureSpace(3) else { return }
        s.pushGlobalTable()
        s.push(function: name, body)
        s.rawSet(-2, field: name)
    }
}

extension BKFunction {
    /// A `bk` function or class method from a typed Sendable closure.
    public static func typed<each A: LuaConvertible, R: LuaConvertible>(
        _ name: String, _ body: @escaping @Sendable (repeat each A) throws -> R
    ) -> BKFunction {
        BKFunction(name) { stack throws(LuaRaise) in try TypedFunction.invoke(body, stack) }
    }

    /// A method of the bridged class `T`: `obj:name(args...)`.
    public static func method<T: LuaBridged & SendableMetatype, each A: LuaConvertible, R: LuaConvertible>(
        _ name: String, _ body: @escaping @Sendable (T, repeat each A) throws -> R
    ) -> BKFunction {
        BKFunction(name) { stack throws(LuaRaise) in try TypedFunction.invokeMethod(body, stack) }
    }

    /// A method of the bridged class `T` returning nothing.
    public static func method<T: LuaBridged & SendableMetatype, each A: LuaConvertible>(
        _ name: String, _ body: @escaping @Sendable (T, repeat each A) throws -> Void
    ) -> BKFunction {
        BKFunction(name) { stack throws(LuaRaise) in try TypedFunction.invokeMethod(body, stack) }
    }
}

extension LuaProperty {
    /// A property read and written through a key path (`.readWrite("count", \Counter.count)`).
    /// Assigning a value of the wrong type raises `bad value for field 'count' (number expected, got string)`.
    public static func readWrite<T: AnyObject & SendableMetatype, V: LuaConvertible>(
        _ name: String, _ keyPath: ReferenceWritableKeyPath<T, V> & Sendable
    ) -> LuaProperty {
        .readWrite(name, get: { (object: T, stack: LuaStack) throws(LuaRaise) in
            object[keyPath: keyPath].push(on: stack)
        }, set: { (object: T, stack: LuaStack, value: Int32) throws(LuaRaise) in
            guard let converted = V.read(from: stack, at: value) else {
                throw .message("bad value for field '\(name)' (\(V.luaTypeName) expected, got \(stack.typeName(at: value)))")
            }
            object[keyPath: keyPath] = converted
        })
    }

    /// A read-only property through a key path.
    public static func readOnly<T: AnyObject & SendableMetatype, V: LuaConvertible>(
        _ name: String, _ keyPath: KeyPath<T, V> & Sendable
    ) -> LuaProperty {
        .readOnly(name) { (object: T, stack: LuaStack) throws(LuaRaise) in
            object[keyPath: keyPath].push(on: stack)
        }
    }
}
