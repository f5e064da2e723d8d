/// One member of an exported class's class table: the constructor (`Counter.new(...)` and
/// `Counter(...)`), static functions, named initializers and static properties. A subclass's
/// class table also has its superclasses' static functions and properties (not their
/// constructors, which make the superclass).
public struct LuaClassMember: Sendable {
    @usableFromInline enum Kind: Sendable {
        case constructor(BKFunction)
        case namedConstructor(BKFunction)
        case function(BKFunction)
        case property(LuaStaticProperty)
    }
    @usableFromInline let kind: Kind
    @usableFromInline let annotation: LuaMemberAnnotation

    @usableFromInline init(_ kind: Kind, _ annotation: LuaMemberAnnotation) {
        self.kind = kind
        self.annotation = annotation
    }

    /// The class's constructor (an initializer without `@LuaName`).
    @inlinable public static func constructor<each A: LuaConvertible, R: LuaConvertible>(
        _ parameters: [String], _ body: @escaping @Sendable (repeat each A) throws -> R
    ) -> LuaClassMember {
        LuaClassMember(.constructor(.typed("new", body)),
                       .function("new", parameters, LuaAnnotationTypes.names(repeat (each A).self), result: LuaAnnotationTypes.name(R.self)))
    }

    /// An initializer with `@LuaName("name")`: `Class.name(args...)`.
    @inlinable public static func constructor<each A: LuaConvertible, R: LuaConvertible>(
        _ name: String, _ parameters: [String], _ body: @escaping @Sendable (repeat each A) throws -> R
    ) -> LuaClassMember {
        LuaClassMember(.namedConstructor(.typed(name, body)),
                       .function(name, parameters, LuaAnnotationTypes.names(repeat (each A).self), result: LuaAnnotationTypes.name(R.self)))
    }

    /// An `async` initializer as the constructor: suspends the calling task (`AsyncFunction`).
    public static func asyncConstructor<each A: LuaConvertible & Sendable, R: LuaConvertible & Sendable>(
        _ parameters: [String], _ body: @escaping @Sendable (repeat each A) async throws -> R
    ) -> LuaClassMember {
        LuaClassMember(.constructor(BKFunction("new", AsyncFunction.make(body))),
                       .function("new", parameters, LuaAnnotationTypes.names(repeat (each A).self), result: LuaAnnotationTypes.name(R.self)))
    }

    /// An `async` initializer with `@LuaName("name")`.
    public static func asyncConstructor<each A: LuaConvertible & Sendable, R: LuaConvertible & Sendable>(
        _ name: String, _ parameters: [String], _ body: @escaping @Sendable (repeat each A) async throws -> R
    ) -> LuaClassMember {
        LuaClassMember(.namedConstructor(BKFunction(name, AsyncFunction.make(body))),
                       .function(name, parameters, LuaAnnotationTypes.names(repeat (each A).self), result: LuaAnnotationTypes.name(R.self)))
    }

    /// An `async` static function: `Class.name(args...)` suspends the calling task (`AsyncFunction`).
    public static func asyncFunction<each A: LuaConvertible & Sendable, R: LuaConvertible & Sendable>(
        _ name: String, _ parameters: [String], _ body: @escaping @Sendable (repeat each A) async throws -> R
    ) -> LuaClassMember {
        LuaClassMember(.function(BKFunction(name, AsyncFunction.make(body))),
                       .function(name, parameters, LuaAnnotationTypes.names(repeat (each A).self), result: LuaAnnotationTypes.name(R.self)))
    }

    /// An `async` static function returning nothing.
    public static func asyncFunction<each A: LuaConvertible & Sendable>(
        _ name: String, _ parameters: [String], _ body: @escaping @Sendable (repeat each A) async throws -> Void
    ) -> LuaClassMember {
        LuaClassMember(.function(BKFunction(name, AsyncFunction.make(body))),
                       .function(name, parameters, LuaAnnotationTypes.names(repeat (each A).self), result: nil))
    }

    /// `Class.name(args...)`.
    @inlinable public static func function<each A: LuaConvertible, R: LuaConvertible>(
        _ name: String, _ parameters: [String], _ body: @escaping @Sendable (repeat each A) throws -> R
    ) -> LuaClassMember {
        LuaClassMember(.function(.typed(name, body)),
                       .function(name, parameters, LuaAnnotationTypes.names(repeat (each A).self), result: LuaAnnotationTypes.name(R.self)))
    }

    /// `Class.name(args...)` returning nothing.
    @inlinable public static func function<each A: LuaConvertible>(
        _ name: String, _ parameters: [String], _ body: @escaping @Sendable (repeat each A) throws -> Void
    ) -> LuaClassMember {
        LuaClassMember(.function(BKFunction(name) { stack throws(LuaRaise) in try TypedFunction.invoke(body, stack) }),
                       .function(name, parameters, LuaAnnotationTypes.names(repeat (each A).self), result: nil))
    }

    /// `Class.name` and `Class.name = value`.
    @inlinable public static func property<V: LuaConvertible>(
        _ name: String, get: @escaping @Sendable () -> V, set: @escaping @Sendable (V) -> Void
    ) -> LuaClassMember {
        LuaClassMember(.property(LuaStaticProperty(name: name, get: { stack in get().push(on: stack) }, set: {
            (stack: LuaStack, value: Int32) throws(LuaRaise) in
            guard let converted = V.read(from: stack, at: value) else {
                throw .message("bad value for field '\(name)' (\(V.conversionProblem(stack, at: value)))")
            }
            set(converted)
        })), .property(name, LuaAnnotationTypes.name(V.self), readOnly: false))
    }

    /// `Class.name`, read-only.
    @inlinable public static func readOnlyProperty<V: LuaConvertible>(
        _ name: String, get: @escaping @Sendable () -> V
    ) -> LuaClassMember {
        LuaClassMember(.property(LuaStaticProperty(name: name, get: { stack in get().push(on: stack) }, set: nil)),
                       .property(name, LuaAnnotationTypes.name(V.self), readOnly: true))
    }
}

/// A static property on a class table: the getter pushes one value.
public struct LuaStaticProperty: Sendable {
    @usableFromInline let name: String
    @usableFromInline let get: @Sendable (LuaStack) -> Void
    @usableFromInline let set: (@Sendable (LuaStack, Int32) throws(LuaRaise) -> Void)?

    @usableFromInline init(name: String, get: @escaping @Sendable (LuaStack) -> Void,
                           set: (@Sendable (LuaStack, Int32) throws(LuaRaise) -> Void)?) {
        self.name = name
        self.get = get
        self.set = set
    }
}

extension LuaClassMember {
    /// The member's name in the class table.
    var name: String {
        switch kind {
        case .constructor: "new"
        case .namedConstructor(let function), .function(let function): function.name
        case .property(let property): property.name
        }
    }

    /// Whether a subclass's class table has it too: static functions and properties are the
    /// subclass's as in Swift; constructors make the superclass, so they stay its own.
    var isInherited: Bool {
        switch kind {
        case .constructor, .namedConstructor: false
        case .function, .property: true
        }
    }
}
