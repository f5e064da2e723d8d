/// A class exported with `@LuaExport`: its Lua class (instances) and class table (constructors,
/// static members), both generated. `lua.register(Counter.self)` makes the class table a global.
///
/// Hand-written `LuaBridged` classes with a `LuaClass` stay for special cases (raw stack
/// functions, custom `__index`); an exported class needs nothing but the attribute.
public protocol LuaExportable: LuaObservable, LuaConvertible {
    /// Everything the macro generated: overridden by an exported subclass.
    static var luaExportedType: LuaExportedType { get }
}

/// The Lua side of an exported class: the metatable description of its instances (`luaClass`,
/// its superclasses' members included), its class table's members and its annotations.
public final class LuaExportedType: Sendable {
    public let name: String
    public let luaClass: LuaClass
    /// Its own class members (annotations) and what its class table holds: those and the
    /// superclasses' inherited ones its own do not shadow.
    let classMembers: [LuaClassMember]
    let classTableMembers: [LuaClassMember]
    let members: [LuaMember]
    let superclass: LuaExportedType?

    public init<T: LuaBridged>(_ type: T.Type, name: String, superclass: LuaExportedType?,
                               members: [LuaMember], classMembers: [LuaClassMember]) {
        self.name = name
        self.members = members
        self.classMembers = classMembers
        let ownNames = Set(classMembers.map(\.name))
        classTableMembers = classMembers
            + (superclass?.classTableMembers.filter { $0.isInherited && !ownNames.contains($0.name) } ?? [])
        self.superclass = superclass
        var methods: [BKFunction] = []
        var properties: [LuaProperty] = []
        var metamethods: [BKFunction] = []
        for member in members {
            switch member.kind {
            case .method(let function): methods.append(function)
            case .property(let property): properties.append(property)
            case .metamethod(let function): metamethods.append(function)
            }
        }
        if T.self is any LuaObservable.Type { methods += LuaObservers.methods }
        let derived = ProtocolMetamethods(for: type)
        metamethods += derived.functions
        // A subclass's userdata sees its superclasses' members; its own win on a name clash.
        if let inherited = superclass?.luaClass {
            let own = Set(methods.map(\.name))
            methods = inherited.methods.filter { !own.contains($0.name) } + methods
            let ownProperties = Set(properties.map(\.name))
            properties = inherited.properties.values.filter { !ownProperties.contains($0.name) } + properties
            let ownMetamethods = Set(metamethods.map(\.name))
            metamethods = inherited.metamethods.filter { !ownMetamethods.contains($0.name) } + metamethods
        }
        // Keyed by the type's identity, not its name: two modules may each export an `Item`.
        luaClass = LuaClass(name: name, methods: methods, properties: properties, metamethods: metamethods,
                            element: derived.element ?? superclass?.luaClass.element, methodsFirst: false,
                            qualifiedName: String(reflecting: type))
    }
}
