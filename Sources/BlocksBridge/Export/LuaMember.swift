/// One member of an exported class as Lua sees it on instances, with its annotation. The macro
/// writes these; they are `@inlinable` so each method is specialized in the host's module, the
/// same fast path as a hand-written `LuaClass`.
public struct LuaMember: Sendable {
    @usableFromInline enum Kind: Sendable {
        case method(BKFunction)
        case property(LuaProperty)
        case metamethod(BKFunction)
    }
    @usableFromInline let kind: Kind
    @usableFromInline let annotation: LuaMemberAnnotation

    @usableFromInline init(_ kind: Kind, _ annotation: LuaMemberAnnotation) {
        self.kind = kind
        self.annotation = annotation
    }

    /// `obj:name(args...)`.
    @inlinable public static func method<T: LuaBridged & SendableMetatype, each A: LuaConvertible, R: LuaConvertible>(
        _ name: String, _ parameters: [String], _ body: @escaping @Sendable (T, repeat each A) throws -> R
    ) -> LuaMember {
        LuaMember(.method(.method(name, body)),
                  .function(name, parameters, LuaAnnotationTypes.names(repeat (each A).self), result: LuaAnnotationTypes.name(R.self)))
    }

    /// `obj:name(args...)` returning nothing.
    @inlinable public static func method<T: LuaBridged & SendableMetatype, each A: LuaConvertible>(
        _ name: String, _ parameters: [String], _ body: @escaping @Sendable (T, repeat each A) throws -> Void
    ) -> LuaMember {
        LuaMember(.method(.method(name, body)),
                  .function(name, parameters, LuaAnnotationTypes.names(repeat (each A).self), result: nil))
    }

    /// `obj:name(args...)` for an `async` method: from a task it suspends the task until the work
    /// finishes, elsewhere it runs the loop until then (`AsyncFunction`). The work captures the
    /// object, so the class is `Sendable`.
    public static func asyncMethod<T: LuaBridged & Sendable, each A: LuaConvertible & Sendable, R: LuaConvertible & Sendable>(
        _ name: String, _ parameters: [String], _ body: @escaping @Sendable (T, repeat each A) async throws -> R
    ) -> LuaMember {
        LuaMember(.method(BKFunction(name, AsyncFunction.method(body))),
                  .function(name, parameters, LuaAnnotationTypes.names(repeat (each A).self), result: LuaAnnotationTypes.name(R.self)))
    }

    /// An `async` method returning nothing.
    public static func asyncMethod<T: LuaBridged & Sendable, each A: LuaConvertible & Sendable>(
        _ name: String, _ parameters: [String], _ body: @escaping @Sendable (T, repeat each A) async throws -> Void
    ) -> LuaMember {
        LuaMember(.method(BKFunction(name, AsyncFunction.method(body))),
                  .function(name, parameters, LuaAnnotationTypes.names(repeat (each A).self), result: nil))
    }

    /// A method as a metamethod (`__call` from `callAsFunction`): `.metamethod(.method("__call", ...))`.
    @inlinable public static func metamethod(_ method: LuaMember) -> LuaMember {
        guard case .method(let function) = method.kind else { return method }
        return LuaMember(.metamethod(function), method.annotation)
    }

    /// `obj.name` and `obj.name = value`; a value of the wrong type is an error naming the field.
    @inlinable public static func property<T: LuaBridged & SendableMetatype, V: LuaConvertible>(
        _ name: String, get: @escaping @Sendable (T) -> V, set: @escaping @Sendable (T, V) -> Void
    ) -> LuaMember {
        LuaMember(.property(.readWrite(name, get: { (object: T, stack: LuaStack) throws(LuaRaise) in
            get(object).push(on: stack)
        }, set: { (object: T, stack: LuaStack, value: Int32) throws(LuaRaise) in
            guard let converted = V.read(from: stack, at: value) else {
                throw LuaMember.badValue(name, of: T.luaClass.name, V.conversionProblem(stack, at: value))
            }
            set(object, converted)
        })), .property(name, LuaAnnotationTypes.name(V.self), readOnly: false))
    }

    /// `obj.name`; assigning it is an error (`field 'name' of Counter is read-only`).
    @inlinable public static func readOnlyProperty<T: LuaBridged & SendableMetatype, V: LuaConvertible>(
        _ name: String, get: @escaping @Sendable (T) -> V
    ) -> LuaMember {
        LuaMember(.property(.readOnly(name) { (object: T, stack: LuaStack) throws(LuaRaise) in
            get(object).push(on: stack)
        }), .property(name, LuaAnnotationTypes.name(V.self), readOnly: true))
    }

    /// An `@LuaObserved` property: sets from Lua notify the object's Lua and Swift observers.
    public static func observed<T: LuaObservable, V: LuaConvertible>(
        _ name: String, _ keyPath: ReferenceWritableKeyPath<T, V>
    ) -> LuaMember {
        LuaMember(.property(.observable(name, keyPath)), .property(name, LuaAnnotationTypes.name(V.self), readOnly: false))
    }

    @usableFromInline static func badValue(_ name: String, of type: String, _ reason: String) -> LuaRaise {
        .message("bad value for field '\(name)' of \(type) (\(reason))")
    }
}
