/// Bridged classes in a few lines: typed methods, and properties through key paths.
extension BKFunction {
    /// A `bk` function or class method from a typed Sendable closure.
    @inlinable public static func typed<each A: LuaConvertible, R: LuaConvertible>(
        _ name: String, _ body: @escaping @Sendable (repeat each A) throws -> R
    ) -> BKFunction {
        BKFunction(name) { stack throws(LuaRaise) in try TypedFunction.invoke(body, stack) }
    }

    /// A method of the bridged class `T`: `obj:name(args...)`.
    @inlinable public static func method<T: LuaBridged & SendableMetatype, each A: LuaConvertible, R: LuaConvertible>(
        _ name: String, _ body: @escaping @Sendable (T, repeat each A) throws -> R
    ) -> BKFunction {
        BKFunction(name) { stack throws(LuaRaise) in try TypedFunction.invokeMethod(body, stack) }
    }

    /// A method of the bridged class `T` returning nothing.
    @inlinable public static func method<T: LuaBridged & SendableMetatype, each A: LuaConvertible>(
        _ name: String, _ body: @escaping @Sendable (T, repeat each A) throws -> Void
    ) -> BKFunction {
        BKFunction(name) { stack throws(LuaRaise) in try TypedFunction.invokeMethod(body, stack) }
    }
}

extension LuaProperty {
    /// A property read and written through a key path (`.readWrite("count", \Counter.count)`).
    /// Assigning a value of the wrong type raises `bad value for field 'count' of Counter (number expected, got string)`.
    @inlinable public static func readWrite<T: AnyObject & SendableMetatype, V: LuaConvertible>(
        _ name: String, _ keyPath: ReferenceWritableKeyPath<T, V> & Sendable
    ) -> LuaProperty {
        .readWrite(name, get: { (object: T, stack: LuaStack) throws(LuaRaise) in
            try stack.push(returned: object[keyPath: keyPath], what: "value of field '\(name)'")
        }, set: { (object: T, stack: LuaStack, value: Int32) throws(LuaRaise) in
            guard let converted = V.read(from: stack, at: value) else {
                throw .message(badValue(name, of: T.self, V.conversionProblem(stack, at: value)))
            }
            object[keyPath: keyPath] = converted
        })
    }

    /// The one wording of a wrong-typed assignment, for plain and observable properties alike:
    /// `bad value for field 'count' of Counter (number expected, got string)` (the class's Lua name
    /// when `T` is bridged).
    @usableFromInline static func badValue(_ name: String, of type: AnyObject.Type, _ reason: String) -> String {
        let owner = (type as? any LuaBridged.Type).map { " of \($0.luaClass.name)" } ?? ""
        return "bad value for field '\(name)'\(owner) (\(reason))"
    }

    /// A read-only property through a key path.
    @inlinable public static func readOnly<T: AnyObject & SendableMetatype, V: LuaConvertible>(
        _ name: String, _ keyPath: KeyPath<T, V> & Sendable
    ) -> LuaProperty {
        .readOnly(name) { (object: T, stack: LuaStack) throws(LuaRaise) in
            try stack.push(returned: object[keyPath: keyPath], what: "value of field '\(name)'")
        }
    }
}
