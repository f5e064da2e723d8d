import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// `@LuaExport`: a class's methods, properties, statics and initializers as a `LuaClass` and a
/// class table (`LuaExportedType`). Values take a conformance instead (`LuaEnum`, `LuaCodable`).
public struct LuaExportMacro: MemberMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingMembersOf declaration: some DeclGroupSyntax,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let classDecl = declaration.as(ClassDeclSyntax.self) else {
            checkValueType(declaration, context)
            return []
        }
        if classDecl.genericParameterClause != nil {
            context.diagnose(ExportDiagnostic.genericType.at(classDecl.name))
            return []
        }
        let name = classDecl.name.text
        let inherited = classDecl.inheritanceClause?.inheritedTypes.map(\.type.trimmedDescription) ?? []
        // The base exported class names LuaExportable; its subclasses inherit it and name their
        // superclass first. (The macro cannot add the conformance: a macro-added conformance that
        // a subclass inherits crashes Swift 6.3 when the subclass is expanded.)
        let isBase = inherited.contains("LuaExportable")
        if !isBase && (inherited.first.map { SuperclassGuess.knownProtocols.contains($0) } ?? true) {
            context.diagnose(ExportDiagnostic.missingConformance(name).at(classDecl.name))
            return []
        }
        let superclass = isBase ? nil : inherited.first
        let isSubclass = superclass != nil
        var members = ExportedMembers(of: classDecl, inheritedNames: Set(inherited), in: context)
        checkDuplicates(members, context)
        // A subclass restates its superclass's `@unchecked Sendable` (Swift 6 asks it to), so the
        // clause of the class itself says it, base or subclass.
        if !inherited.contains(where: { $0 == "Sendable" || $0.hasSuffix(" Sendable") }) {
            members.refuseAsyncMembersNeedingSendable(of: name, context)
        }

        let access = classDecl.modifiers.contains {
            [.keyword(.public), .keyword(.open)].contains($0.name.tokenKind)
        } ? "public " : classDecl.modifiers.contains { $0.name.tokenKind == .keyword(.package) } ? "package " : ""
        let override = isSubclass ? "override " : ""
        let storage = "luaExported_" + name

        // Each member's entry is its own declaration, placed (`#sourceLocation`) on the member's
        // line: when its types do not convert (a parameter that is not LuaConvertible), the
        // compiler's error lands on the member the developer wrote, not inside the expansion.
        // The entries overload `luaExportedType` (a name the macro declares; `arbitrary` names
        // would break the class's operator conformances) with one label per member.
        var entries: [DeclSyntax] = []
        func declare(_ items: [(text: String, node: Syntax, swiftName: String)], type: String, kind: String) -> [String] {
            items.enumerated().map { index, item in
                let label = "\(name)_\(kind)\(index)_\(item.swiftName.filter { $0.isLetter || $0.isNumber || $0 == "_" })"
                // The directive is inside the body, right before the entry's expression, so the
                // line it names is the expression's (blank lines between members do not shift it).
                let body = context.location(of: item.node, at: .afterLeadingTrivia, filePathMode: .filePath).map {
                    "\n#sourceLocation(file: \($0.file), line: \($0.line))\nreturn \(item.text)\n#sourceLocation()\n"
                } ?? item.text
                entries.append("private static func luaExportedType(\(raw: label): Void) -> \(raw: type) {\(raw: body)}")
                return "luaExportedType(\(label): ())"
            }
        }

        var instanceMembers = members.methods.map { (method(name, $0, factory: "method"), $0.locationNode, $0.swiftName) }
        instanceMembers += members.properties.map { (property(name, $0), $0.locationNode, $0.swiftName) }
        instanceMembers += members.callAsFunction.map {
            (".metamethod(" + method(name, $0, factory: "method", luaName: "__call") + ")", $0.locationNode, $0.swiftName)
        }

        var constructors = members.constructors
        if !members.declaresInitializer && !isSubclass {
            constructors = [ExportedFunction(swiftName: "init", luaName: "new", parameters: [], result: "",
                                             throwing: false, node: Syntax(classDecl.name))]
        }
        var staticMembers = constructors.prefix(1).map { (constructor(name, $0, named: false), $0.locationNode, "init") }
        for extra in constructors.dropFirst() {
            context.diagnose(ExportDiagnostic.severalConstructors(extra.displayName).at(extra.node))
        }
        staticMembers += members.namedConstructors.map { (constructor(name, $0, named: true), $0.locationNode, $0.luaName) }
        staticMembers += members.staticFunctions.map { (staticFunction(name, $0), $0.locationNode, $0.swiftName) }
        staticMembers += members.staticProperties.map { (staticProperty(name, $0), $0.locationNode, $0.swiftName) }
        let instanceNames = declare(instanceMembers, type: "LuaMember", kind: "member")
        let staticNames = declare(staticMembers, type: "LuaClassMember", kind: "classMember")

        var result: [DeclSyntax] = [
            """
            private static let \(raw: storage) = LuaExportedType(
                \(raw: name).self,
                name: "\(raw: name)",
                superclass: \(raw: superclass.map { "\($0).luaExportedType" } ?? "nil"),
                members: [\(raw: list(instanceNames))],
                classMembers: [\(raw: list(staticNames))]
            )
            """,
        ]
        result += entries
        result += [
            "\(raw: access)\(raw: override)class var luaClass: LuaClass { \(raw: storage).luaClass }",
            "\(raw: access)\(raw: override)class var luaExportedType: LuaExportedType { \(raw: storage) }",
        ]
        if !members.declaresObservers && !isSubclass {
            // Every exported object can be observed; the observers are made on first use.
            result.append("\(raw: access)lazy var luaObservers = LuaObservers()")
        }
        return result
    }

    private static func checkValueType(_ declaration: some DeclGroupSyntax, _ context: some MacroExpansionContext) {
        let kind = declaration.is(StructDeclSyntax.self) ? "a struct"
            : declaration.is(EnumDeclSyntax.self) ? "an enum"
            : declaration.is(ActorDeclSyntax.self) ? "an actor"
            : declaration.is(ProtocolDeclSyntax.self) ? "a protocol"
            : declaration.is(ExtensionDeclSyntax.self) ? "an extension" : "this declaration"
        context.diagnose(ExportDiagnostic.notExportable(kind: kind).at(declaration.introducer))
    }

    // MARK: Generated members

    private static func list(_ items: [String]) -> String {
        items.isEmpty ? "" : "\n" + items.map { "        " + $0 }.joined(separator: ",\n") + "\n    "
    }

    /// A defaulted parameter is optional in Lua: absent or nil gives the Swift default (`??`).
    private static func closureParameters(_ function: ExportedFunction) -> [String] {
        function.parameters.indices.map { index in
            let parameter = function.parameters[index]
            let isOptional = parameter.type.hasSuffix("?") || parameter.type.hasPrefix("Optional<")
                || parameter.type.hasSuffix("!")
            let type = parameter.defaultValue == nil || isOptional ? parameter.type : parameter.type + "?"
            return "a\(index): \(type)"
        }
    }

    private static func callArguments(_ function: ExportedFunction) -> String {
        function.parameters.indices.map { index in
            let parameter = function.parameters[index]
            var value = "a\(index)"
            if let defaultValue = parameter.defaultValue, defaultValue != "nil" { value += " ?? " + defaultValue }
            return parameter.label.map { "\($0): \(value)" } ?? value
        }.joined(separator: ", ")
    }

    private static func parameterNames(_ function: ExportedFunction) -> String {
        "[" + function.parameters.map { "\"\($0.luaName)\"" }.joined(separator: ", ") + "]"
    }

    private static func signature(_ parameters: [String], _ function: ExportedFunction, result: String?) -> String {
        "(" + parameters.joined(separator: ", ") + ")" + (function.isAsync ? " async" : "")
            + (function.throwing ? " throws" : "") + " -> " + (result ?? "Void")
    }

    /// `try await ` as the call needs.
    private static func effects(_ function: ExportedFunction) -> String {
        (function.throwing ? "try " : "") + (function.isAsync ? "await " : "")
    }

    /// `factory` or, for an async member, its async form (`asyncMethod`).
    private static func factory(_ name: String, _ function: ExportedFunction) -> String {
        function.isAsync ? "async" + name.prefix(1).uppercased() + name.dropFirst() : name
    }

    private static func method(_ type: String, _ function: ExportedFunction, factory name: String, luaName: String? = nil) -> String {
        let parameters = ["object: \(type)"] + closureParameters(function)
        let call = effects(function) + "object.\(function.swiftName)(\(callArguments(function)))"
        return ".\(factory(name, function))(\"\(luaName ?? function.luaName)\", \(parameterNames(function))) { "
            + signature(parameters, function, result: function.result) + " in \(call) }"
    }

    private static func property(_ type: String, _ property: ExportedProperty) -> String {
        if property.observed && !property.readOnly {
            return ".observed(\"\(property.luaName)\", \\\(type).\(property.swiftName))"
        }
        let get = "get: { (object: \(type)) in object.\(property.swiftName) }"
        if property.readOnly { return ".readOnlyProperty(\"\(property.luaName)\", \(get))" }
        return ".property(\"\(property.luaName)\", \(get), set: { (object: \(type), value) in object.\(property.swiftName) = value })"
    }

    private static func constructor(_ type: String, _ function: ExportedFunction, named: Bool) -> String {
        let result = function.result == "?" ? "\(type)?" : type
        let call = effects(function) + "\(type)(\(callArguments(function)))"
        let name = named ? "\"\(function.luaName)\", " : ""
        return ".\(factory("constructor", function))(\(name)\(parameterNames(function))) { "
            + signature(closureParameters(function), function, result: result) + " in \(call) }"
    }

    private static func staticFunction(_ type: String, _ function: ExportedFunction) -> String {
        let call = effects(function) + "\(type).\(function.swiftName)(\(callArguments(function)))"
        return ".\(factory("function", function))(\"\(function.luaName)\", \(parameterNames(function))) { "
            + signature(closureParameters(function), function, result: function.result) + " in \(call) }"
    }

    private static func staticProperty(_ type: String, _ property: ExportedProperty) -> String {
        let get = "get: { \(type).\(property.swiftName) }"
        if property.readOnly { return ".readOnlyProperty(\"\(property.luaName)\", \(get))" }
        return ".property(\"\(property.luaName)\", \(get), set: { \(type).\(property.swiftName) = $0 })"
    }

    // MARK: Checks

    /// Two members with one Lua name would silently shadow each other: an error naming both.
    private static func checkDuplicates(_ members: ExportedMembers, _ context: some MacroExpansionContext) {
        func check(_ entries: [(luaName: String, swiftName: String, node: Syntax)]) {
            var seen: [String: String] = [:]
            for entry in entries {
                if let first = seen[entry.luaName] {
                    context.diagnose(ExportDiagnostic.duplicateName(entry.luaName, first: first, second: entry.swiftName).at(entry.node))
                } else {
                    seen[entry.luaName] = entry.swiftName
                }
            }
        }
        check(members.methods.map { ($0.luaName, $0.displayName, $0.node) }
              + members.properties.map { ($0.luaName, $0.swiftName, $0.node) })
        check(members.staticFunctions.map { ($0.luaName, $0.displayName, $0.node) }
              + members.namedConstructors.map { ($0.luaName, $0.displayName, $0.node) }
              + members.staticProperties.map { ($0.luaName, $0.swiftName, $0.node) })
    }
}
