import Synchronization

/// LuaLS type names for Swift types: `integer`, `number?`, `string[]`, `table<string, integer>`,
/// class names.
public enum LuaAnnotationTypes {
    @inlinable public static func names<each A: LuaConvertible>(_ types: repeat (each A).Type) -> [String] {
        var names: [String] = []
        repeat names.append(name(each types))
        return names
    }

    public static func name<T: LuaConvertible>(_ type: T.Type) -> String {
        if let annotated = type as? any LuaAnnotatedType.Type { return annotated.luaAnnotationType }
        if let enumeration = type as? any (LuaEnum & CaseIterable).Type { return enumName(enumeration) }
        if let enumeration = type as? any LuaEnum.Type { return rawName(enumeration) }
        if type == Int.self || type == Int64.self { return "integer" }
        // Not `luaClass.name`: a class's own members are annotated while its Lua class is built.
        // Qualified and marked: `annotations()` names it as it names the class (short unless two
        // written classes share the name).
        if type is any LuaBridged.Type { return classMarker + String(reflecting: type) + classMarker }
        if let codable = type as? any LuaCodable.Type {
            // Described when annotations are written, not when the class is built: finding the
            // fields runs the type's `init(from:)` (`LuaCodableSchema`).
            let name = String(reflecting: codable)
            codableTypes.withLock { $0[name] = codable }
            return codableMarker + name + codableMarker
        }
        switch type.luaTypeName {
        case "value": return "any"
        default: return type.luaTypeName
        }
    }

    /// Brackets a class's qualified name in annotation types, for `annotations()` to resolve.
    static let classMarker = "\u{1}"
    /// Brackets a LuaCodable type's qualified name, for `annotations()` to describe.
    static let codableMarker = "\u{2}"
    static let codableTypes = Mutex<[String: any LuaCodable.Type]>([:])

    private static func rawName<E: LuaEnum>(_ type: E.Type) -> String { name(E.RawValue.self) }

    /// A union in parentheses, so that `?` and `[]` apply to all of it.
    static func grouped<T: LuaConvertible>(_ type: T.Type) -> String {
        let name = name(type)
        return name.contains("|") ? "(\(name))" : name
    }

    /// The enum's name: `---@enum` when the host registered it under that name, else an alias
    /// of the raw values it accepts (`---@alias Mode "eco"|"comfort"`), written by `annotations()`.
    private static func enumName<E: LuaEnum & CaseIterable>(_ type: E.Type) -> String {
        let name = String(describing: type)
        declare(name, .enumeration(caseUnion(type)))
        return name
    }

    /// `"eco"|"comfort"`: the raw values a CaseIterable enum accepts.
    static func caseUnion<E: LuaEnum & CaseIterable>(_ type: E.Type) -> String {
        type.allCases.map { value in
            if let string = value.rawValue as? String { return "\"\(string)\"" }
            return "\(value.rawValue)"
        }.joined(separator: "|")
    }

    /// A Codable type with fields is a `---@class` of them (`LuaCodableSchema`); a single value is
    /// its value's type; one whose fields cannot be found is a `table`.
    static func decodableName(_ type: any Decodable.Type) -> String {
        let name = String(describing: type)
        if let known = declarations.withLock({ $0[name] }) {
            if case .single(let single)? = known { return single }
            return name  // declared, or being declared (a recursive type)
        }
        declarations.withLock { $0[name] = .some(nil) }
        switch LuaCodableSchema.shape(of: type) {
        case .fields(let fields)?:
            let described = fields.map { field in
                (field.name, decodedName(field.type) + (field.optional ? "?" : ""))
            }
            declare(name, .fields(described))
            return name
        case .single(let single)?:
            let singleName = decodedName(single)
            declare(name, .single(singleName))
            return singleName
        case nil:
            declarations.withLock { $0[name] = nil }
            return "table"
        }
    }

    /// A field's type: its annotation name when it converts, else its own schema.
    private static func decodedName(_ type: any Decodable.Type) -> String {
        if let convertible = type as? any LuaConvertible.Type { return convertibleName(convertible) }
        return decodableName(type)
    }

    private static func convertibleName<T: LuaConvertible>(_ type: T.Type) -> String { name(type) }

    /// What `annotations()` writes for a type named in annotations, by name (process-wide: the
    /// names come from member annotations built once per class). `.some(nil)`: being described.
    enum Declaration: Sendable {
        case enumeration(String)
        case fields([(name: String, type: String)])
        case single(String)
    }
    static let declarations = Mutex<[String: Declaration?]>([:])

    private static func declare(_ name: String, _ declaration: Declaration) {
        declarations.withLock { $0[name] = .some(declaration) }
    }
}

/// Types whose LuaLS name is not their `luaTypeName` (containers, optionals).
public protocol LuaAnnotatedType {
    static var luaAnnotationType: String { get }
}

extension Optional: LuaAnnotatedType where Wrapped: LuaConvertible {
    public static var luaAnnotationType: String { LuaAnnotationTypes.grouped(Wrapped.self) + "?" }
}

extension Array: LuaAnnotatedType where Element: LuaConvertible {
    public static var luaAnnotationType: String { LuaAnnotationTypes.grouped(Element.self) + "[]" }
}

extension Dictionary: LuaAnnotatedType where Key: LuaConvertible, Value: LuaConvertible {
    public static var luaAnnotationType: String {
        "table<\(LuaAnnotationTypes.name(Key.self)), \(LuaAnnotationTypes.name(Value.self))>"
    }
}

/// What annotations say about one member.
public struct LuaMemberAnnotation: Sendable {
    enum Kind: Sendable { case function, property }
    let kind: Kind
    let name: String
    let parameters: [(name: String, type: String)]
    let result: String?
    let readOnly: Bool

    @usableFromInline static func function(_ name: String, _ parameterNames: [String], _ types: [String],
                                           result: String?) -> LuaMemberAnnotation {
        LuaMemberAnnotation(kind: .function, name: name,
                            parameters: zip(parameterNames, types).map { ($0, $1) }, result: result, readOnly: false)
    }

    @usableFromInline static func property(_ name: String, _ type: String, readOnly: Bool) -> LuaMemberAnnotation {
        LuaMemberAnnotation(kind: .property, name: name, parameters: [], result: type, readOnly: readOnly)
    }
}
