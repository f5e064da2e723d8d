import SwiftDiagnostics
import SwiftSyntax

/// Everything `@LuaExport` refuses, each naming the member and why (never a silent skip).
enum ExportDiagnostic {
    case notExportable(kind: String)
    case genericType
    case effectfulProperty(String)
    case asyncNeedsSendable(member: String, type: String)
    case genericMember(String)
    case inoutParameter(member: String, parameter: String)
    case variadicParameter(member: String, parameter: String)
    case functionParameter(member: String, parameter: String)
    case closureParameter(member: String, parameter: String)
    case pointerType(member: String, type: String)
    case opaqueType(member: String)
    case subscriptMember
    case tupleProperty
    case duplicateName(String, first: String, second: String)
    case severalConstructors(String)
    case badLuaName
    case conditionalMembers
    case missingConformance(String)

    var message: String {
        switch self {
        case .notExportable(let kind):
            return "@LuaExport applies to classes, not to \(kind); an enum with String or Int raw values conforms to LuaEnum, a Codable struct or enum to LuaCodable"
        case .genericType:
            return "@LuaExport cannot export a generic class: Lua needs one concrete class (export a subclass or a wrapper)"
        case .effectfulProperty(let name):
            return "'\(name)' has an async or throwing getter: Lua reads properties without waiting or errors; make it a method, or mark it @LuaIgnore"
        case .asyncNeedsSendable(let member, let type):
            return "'\(member)' is async: its work runs on another thread with the object while Lua goes on, so '\(type)' must be Sendable; declare '@unchecked Sendable' in its inheritance clause (the class guards its own state), or mark it @LuaIgnore"
        case .genericMember(let name):
            return "'\(name)' is generic: Lua needs concrete parameter types; mark it @LuaIgnore or add a concrete overload"
        case .inoutParameter(let member, let parameter):
            return "'\(member)': inout parameter '\(parameter)' cannot cross to Lua (values are copied); return the new value instead, or mark it @LuaIgnore"
        case .variadicParameter(let member, let parameter):
            return "'\(member)': variadic parameter '\(parameter)' is not supported; take an array instead, or mark it @LuaIgnore"
        case .functionParameter(let member, let parameter):
            return "'\(member)': parameter '\(parameter)' has a Swift function type; take a LuaRef (call it with .call) instead, or mark it @LuaIgnore"
        case .closureParameter(let member, let parameter):
            return "'\(member)': parameter '\(parameter)' is a LuaClosure, which only goes from Swift to Lua; take a LuaRef to receive a Lua function (call it with .call), or mark it @LuaIgnore"
        case .pointerType(let member, let type):
            return "'\(member)' uses '\(type)': a pointer cannot cross to Lua; wrap what it points to in a LuaConvertible type (or an exported class), or mark it @LuaIgnore"
        case .opaqueType(let member):
            return "'\(member)' uses an opaque ('some') or existential ('any') type; Lua needs a concrete LuaConvertible type, or mark it @LuaIgnore"
        case .subscriptMember:
            return "subscripts are not exported (a Collection's integer subscript becomes __index); mark it @LuaIgnore"
        case .tupleProperty:
            return "a tuple pattern cannot be exported as a property; declare one property per name, or mark it @LuaIgnore"
        case .duplicateName(let name, let first, let second):
            return "'\(first)' and '\(second)' would both be '\(name)' in Lua; rename one with @LuaName(\"...\") or mark it @LuaIgnore"
        case .severalConstructors(let name):
            return "initializer '\(name)' is a second constructor: Lua has no overloads; give it a name with @LuaName(\"...\") (a static function) or mark it @LuaIgnore"
        case .badLuaName:
            return "@LuaName needs a string literal Lua can use as a field name (letters, digits, '_', not a keyword)"
        case .missingConformance(let name):
            return "an exported class conforms to LuaExportable: write 'class \(name): LuaExportable' (a subclass of an exported class names its superclass first instead)"
        case .conditionalMembers:
            return "members inside #if are not exported by @LuaExport; move them out or into an extension"
        }
    }

    var id: String {
        switch self {
        case .notExportable: "notExportable"
        case .genericType: "genericType"
        case .effectfulProperty: "effectfulProperty"
        case .asyncNeedsSendable: "asyncNeedsSendable"
        case .genericMember: "genericMember"
        case .inoutParameter: "inoutParameter"
        case .variadicParameter: "variadicParameter"
        case .functionParameter: "functionParameter"
        case .closureParameter: "closureParameter"
        case .pointerType: "pointerType"
        case .opaqueType: "opaqueType"
        case .subscriptMember: "subscriptMember"
        case .tupleProperty: "tupleProperty"
        case .duplicateName: "duplicateName"
        case .severalConstructors: "severalConstructors"
        case .badLuaName: "badLuaName"
        case .conditionalMembers: "conditionalMembers"
        case .missingConformance: "missingConformance"
        }
    }

    func at(_ node: some SyntaxProtocol) -> Diagnostic {
        Diagnostic(node: Syntax(node), message: Message(message: message, id: id,
                                                        isWarning: { if case .conditionalMembers = self { true } else { false } }()))
    }

    struct Message: DiagnosticMessage {
        let message: String
        let id: String
        let isWarning: Bool
        var diagnosticID: MessageID { MessageID(domain: "BlocksBridgeMacros", id: id) }
        var severity: DiagnosticSeverity { isWarning ? .warning : .error }
    }
}
