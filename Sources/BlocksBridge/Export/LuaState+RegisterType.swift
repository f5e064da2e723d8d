/// Exported types as Lua globals: `lua.register(Counter.self)` (the class table `Counter`),
/// `lua.register(Color.self)` (a table of an enum's cases).
extension LuaState {
    /// Makes the class table of `type` the global `name` (the class's name by default):
    /// `Counter.new(...)`, `Counter(...)`, static functions and properties.
    /// - Throws: `LuaError` when the global cannot be set (no memory).
    public func register<T: LuaExportable>(_ type: T.Type, as name: String? = nil) throws(LuaError) {
        let exported = T.luaExportedType
        let global = name ?? exported.name
        try setGlobal(global) { exported.pushClassTable(on: $0) }
        exportedTypes.classes.append((global, exported))
    }

    /// Makes a table of the enum's cases the global `name` (the type's name by default):
    /// `Color.red == "red"`, so scripts need not spell raw values.
    /// - Throws: `LuaError` when the global cannot be set (no memory).
    public func register<T: LuaEnum & CaseIterable>(_ type: T.Type, as name: String? = nil) throws(LuaError) {
        let cases = T.allCases.map { (String(describing: $0), $0.rawValue) }
        let global = name ?? String(describing: T.self)
        try setGlobal(global) { stack in
            stack.pushNewTable(recordCount: Int32(clamping: cases.count))
            for (caseName, raw) in cases {
                raw.push(on: stack)
                stack.rawSet(-2, field: caseName)
            }
        }
        exportedTypes.enums.append((global, String(describing: T.self), cases.map { ($0.0, LuaEnumCase(raw: $0.1)) }))
    }

    var exportedTypes: ExportedTypes { extensionObject(ExportedTypes.self) { ExportedTypes() } }
}

/// What a state's host registered, for `annotations()`.
final class ExportedTypes {
    var classes: [(global: String, type: LuaExportedType)] = []
    var enums: [(global: String, swiftName: String, cases: [(name: String, raw: LuaEnumCase)])] = []
}

/// An enum case's raw value as annotations write it.
enum LuaEnumCase {
    case string(String)
    case number(String)

    init(raw: some LuaConvertible) {
        if let string = raw as? String { self = .string(string) } else { self = .number("\(raw)") }
    }
}

extension LuaExportedType {
    /// Pushes the class table: constructor as `new` and `__call`, static functions as fields,
    /// static properties through `__index`/`__newindex`.
    func pushClassTable(on stack: LuaStack) {
        guard stack.ensureSpace(4) else { stack.pushNil(); return }
        var properties: [String: LuaStaticProperty] = [:]
        stack.pushNewTable(recordCount: Int32(clamping: classTableMembers.count))
        let table = stack.top
        stack.pushNewTable(recordCount: 4)
        let meta = stack.top
        let className = name
        for member in classTableMembers {
            switch member.kind {
            case .constructor(let function):
                stack.push(function: "new", function.body)
                stack.rawSet(table, field: "new")
                let body = function.body
                stack.push(function: className) { stack throws(LuaRaise) in
                    stack.remove(at: 1)  // the class table: Counter(...) is Counter.new(...)
                    return try body(stack)
                }
                stack.rawSet(meta, field: "__call")
            case .function(let function), .namedConstructor(let function):
                stack.push(function: function.name, function.body)
                stack.rawSet(table, field: function.name)
            case .property(let property):
                properties[property.name] = property
            }
        }
        if !properties.isEmpty {
            let statics = properties
            stack.push(function: "__index") { stack in
                guard let key = stack.stringValue(2), let property = statics[key] else { return 0 }
                property.get(stack)
                return 1
            }
            stack.rawSet(meta, field: "__index")
        }
        let statics = properties
        stack.push(function: "__newindex") { stack throws(LuaRaise) in
            let key = stack.stringValue(2) ?? "?"
            guard let property = statics[key] else { throw .message("cannot set field '\(key)' of \(className)") }
            guard let set = property.set else { throw .message("field '\(key)' of \(className) is read-only") }
            try set(stack, 3)
            return 0
        }
        stack.rawSet(meta, field: "__newindex")
        stack.push(className)
        stack.rawSet(meta, field: "__name")
        stack.setMetatable(of: table)
    }
}
