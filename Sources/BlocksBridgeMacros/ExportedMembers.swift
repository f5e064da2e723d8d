import SwiftSyntax
import SwiftSyntaxMacros

/// One parameter of an exported function: how Swift calls it and what Lua calls it.
struct ExportedParameter {
    let label: String?      // nil for `_`
    let luaName: String
    let type: String
    /// The Swift default value's expression, ready to follow `??`; nil without one.
    var defaultValue: String? = nil
}

/// A member `@LuaExport` turns into Lua: Swift names, Lua name, signature.
struct ExportedFunction {
    let swiftName: String
    let luaName: String
    let parameters: [ExportedParameter]
    let result: String?     // nil for Void
    let throwing: Bool
    var isAsync = false
    let node: Syntax
    /// `name(label:_:)`, for messages.
    var displayName: String = ""
}

struct ExportedProperty {
    let swiftName: String
    let luaName: String
    let readOnly: Bool
    let observed: Bool
    let node: Syntax
    /// Where the compiler's errors about the member's entry go: the property's name.
    var locationNode: Syntax { node.as(PatternBindingSyntax.self).map { Syntax($0.pattern) } ?? node }
}

extension ExportedFunction {
    /// Where the compiler's errors about the member's entry go: the member's name (`func poke`),
    /// not its attributes' line.
    var locationNode: Syntax {
        if let function = node.as(FunctionDeclSyntax.self) { return Syntax(function.name) }
        if let initializer = node.as(InitializerDeclSyntax.self) { return Syntax(initializer.initKeyword) }
        return node
    }
}

/// What a class declares for Lua, sorted by where it goes (instances, class table, metamethods).
struct ExportedMembers {
    var methods: [ExportedFunction] = []
    var properties: [ExportedProperty] = []
    var callAsFunction: [ExportedFunction] = []
    var staticFunctions: [ExportedFunction] = []
    var staticProperties: [ExportedProperty] = []
    var constructors: [ExportedFunction] = []
    var namedConstructors: [ExportedFunction] = []
    var declaresObservers = false
    var declaresInitializer = false
}

/// Protocol plumbing that Lua sees as metamethods (`__pairs`, `__index`), not as methods.
private let protocolWitnessMethods: Set = ["makeIterator()", "index(after:)", "index(before:)", "formIndex(after:)",
                                           "formIndex(before:)", "index(_:offsetBy:)", "distance(from:to:)",
                                           "hash(into:)", "encode(to:)"]
private let collectionProtocols: Set = ["Collection", "BidirectionalCollection", "RandomAccessCollection",
                                        "MutableCollection", "RangeReplaceableCollection"]

extension ExportedMembers {
    /// Reads the members of `declaration`, reporting each one that cannot be exported.
    init(of declaration: some DeclGroupSyntax, inheritedNames: Set<String>, in context: some MacroExpansionContext) {
        let isCollection = !inheritedNames.isDisjoint(with: collectionProtocols)
        // Protocol plumbing Lua reaches through metamethods (`#`, `obj[i]`, `tostring`), so
        // neither a field nor an annotation: a Collection's indices, a description.
        var plumbing: Set<String> = isCollection ? ["startIndex", "endIndex"] : []
        if inheritedNames.contains("CustomStringConvertible") { plumbing.insert("description") }
        for item in declaration.memberBlock.members {
            let decl = item.decl
            if decl.is(IfConfigDeclSyntax.self) {
                context.diagnose(ExportDiagnostic.conditionalMembers.at(decl))
                continue
            }
            guard let attributes = decl.asProtocol(WithAttributesSyntax.self)?.attributes,
                  let modifiers = decl.asProtocol(WithModifiersSyntax.self)?.modifiers else { continue }
            if let variable = decl.as(VariableDeclSyntax.self),
               variable.bindings.contains(where: { $0.pattern.trimmedDescription == "luaObservers" }) {
                declaresObservers = true
                continue
            }
            if decl.is(InitializerDeclSyntax.self) { declaresInitializer = true }
            // Private members are the type's own business: only what other code can see is exported.
            guard !attributes.has("LuaIgnore"), !modifiers.isPrivate else { continue }
            let luaName = attributes.luaName
            let isStatic = modifiers.isStatic

            if let function = decl.as(FunctionDeclSyntax.self) {
                let name = function.name.text
                if case .binaryOperator = function.name.tokenKind { continue }  // ==, <: metamethods
                if function.name.tokenKind.isOperatorLike { continue }
                if protocolWitnessMethods.contains(displayName(name, function.signature)) && !isStatic { continue }
                guard let exported = Self.function(
                    name: name, luaName: luaName ?? name.withoutBackticks, signature: function.signature,
                    generic: function.genericParameterClause != nil, node: Syntax(function), context) else { continue }
                if isStatic { staticFunctions.append(exported) }
                else if name == "callAsFunction" && luaName == nil { callAsFunction.append(exported) }
                else { methods.append(exported) }
            } else if let initializer = decl.as(InitializerDeclSyntax.self) {
                guard var exported = Self.function(
                    name: "init", luaName: luaName ?? "new", signature: initializer.signature,
                    generic: initializer.genericParameterClause != nil, node: Syntax(initializer), context) else { continue }
                let failable = initializer.optionalMark != nil
                exported = ExportedFunction(swiftName: "init", luaName: exported.luaName, parameters: exported.parameters,
                                            result: failable ? "?" : "", throwing: exported.throwing,
                                            isAsync: exported.isAsync, node: exported.node,
                                            displayName: exported.displayName)
                if luaName == nil { constructors.append(exported) } else { namedConstructors.append(exported) }
            } else if let variable = decl.as(VariableDeclSyntax.self) {
                let isLet = variable.bindingSpecifier.tokenKind == .keyword(.let)
                let forcedReadOnly = attributes.has("LuaReadOnly") || modifiers.hasRestrictedSetter
                let observedKey = attributes.observedKey
                for binding in variable.bindings {
                    guard let identifier = binding.pattern.as(IdentifierPatternSyntax.self) else {
                        context.diagnose(ExportDiagnostic.tupleProperty.at(binding.pattern))
                        continue
                    }
                    let name = identifier.identifier.text
                    if plumbing.contains(name) && !isStatic && luaName == nil { continue }
                    if binding.hasEffectfulGetter {
                        context.diagnose(ExportDiagnostic.effectfulProperty(name).at(binding))
                        continue
                    }
                    if let pointer = binding.typeAnnotation?.type.pointerTypeName {
                        context.diagnose(ExportDiagnostic.pointerType(member: name, type: pointer).at(binding))
                        continue
                    }
                    let property = ExportedProperty(
                        swiftName: name, luaName: luaName ?? observedKey ?? name.withoutBackticks,
                        readOnly: isLet || forcedReadOnly || binding.isGetOnly,
                        observed: observedKey != nil && !isStatic, node: Syntax(binding))
                    if isStatic { staticProperties.append(property) } else { properties.append(property) }
                }
            } else if decl.is(SubscriptDeclSyntax.self) {
                if !isCollection { context.diagnose(ExportDiagnostic.subscriptMember.at(decl)) }
            }
        }
    }

    /// A method or initializer's Lua form, or nil (diagnosed) when its signature cannot cross.
    private static func function(name: String, luaName: String, signature: FunctionSignatureSyntax, generic: Bool,
                                 node: Syntax, _ context: some MacroExpansionContext) -> ExportedFunction? {
        let displayName = displayName(name, signature)
        var valid = true
        if generic {
            context.diagnose(ExportDiagnostic.genericMember(displayName).at(node))
            valid = false
        }
        var parameters: [ExportedParameter] = []
        for parameter in signature.parameterClause.parameters {
            let internalName = (parameter.secondName ?? parameter.firstName).text.withoutBackticks
            let type = parameter.type
            if parameter.ellipsis != nil {
                context.diagnose(ExportDiagnostic.variadicParameter(member: displayName, parameter: internalName).at(parameter))
                valid = false
            } else if let attributed = type.as(AttributedTypeSyntax.self),
                      attributed.specifiers.contains(where: { $0.trimmedDescription == "inout" }) {
                context.diagnose(ExportDiagnostic.inoutParameter(member: displayName, parameter: internalName).at(parameter))
                valid = false
            } else if type.containsFunctionType {
                context.diagnose(ExportDiagnostic.functionParameter(member: displayName, parameter: internalName).at(parameter))
                valid = false
            } else if type.containsOpaqueType {
                context.diagnose(ExportDiagnostic.opaqueType(member: displayName).at(parameter))
                valid = false
            } else if type.names("LuaClosure") {
                context.diagnose(ExportDiagnostic.closureParameter(member: displayName, parameter: internalName).at(parameter))
                valid = false
            } else if let pointer = type.pointerTypeName {
                context.diagnose(ExportDiagnostic.pointerType(member: displayName, type: pointer).at(parameter))
                valid = false
            }
            let label = parameter.firstName.tokenKind == .wildcard ? nil : parameter.firstName.text
            let luaParameter = internalName == "_" ? "arg\(parameters.count + 1)" : internalName
            parameters.append(ExportedParameter(label: label, luaName: luaParameter, type: type.trimmedDescription,
                                                defaultValue: parameter.defaultValue.map { operand(of: $0.value) }))
        }
        let result = signature.returnClause?.type
        if let result, result.containsOpaqueType || result.containsFunctionType {
            context.diagnose(ExportDiagnostic.opaqueType(member: displayName).at(result))
            valid = false
        } else if let result, let pointer = result.pointerTypeName {
            context.diagnose(ExportDiagnostic.pointerType(member: displayName, type: pointer).at(result))
            valid = false
        }
        guard valid else { return nil }
        let resultText = result.map(\.trimmedDescription).flatMap { ["Void", "()"].contains($0) ? nil : $0 }
        return ExportedFunction(swiftName: name, luaName: luaName, parameters: parameters, result: resultText,
                                throwing: signature.effectSpecifiers?.throwsClause != nil,
                                isAsync: signature.effectSpecifiers?.asyncSpecifier != nil, node: node,
                                displayName: displayName)
    }

    /// A default value's expression as the right operand of `??`: in parentheses unless it is a
    /// single term (a literal, a name, a member, a call), which binds tighter than any operator.
    private static func operand(of expression: ExprSyntax) -> String {
        let text = expression.trimmedDescription
        let singleTerm = expression.is(IntegerLiteralExprSyntax.self) || expression.is(FloatLiteralExprSyntax.self)
            || expression.is(StringLiteralExprSyntax.self) || expression.is(BooleanLiteralExprSyntax.self)
            || expression.is(NilLiteralExprSyntax.self) || expression.is(DeclReferenceExprSyntax.self)
            || expression.is(MemberAccessExprSyntax.self) || expression.is(FunctionCallExprSyntax.self)
            || expression.is(ArrayExprSyntax.self) || expression.is(DictionaryExprSyntax.self)
        return singleTerm ? text : "(" + text + ")"
    }
}

extension ExportedMembers {
    /// Async methods and initializers hand the object to work on another thread: without a
    /// `Sendable` class each is an error, and left out (so no second error follows).
    mutating func refuseAsyncMembersNeedingSendable(of type: String, _ context: some MacroExpansionContext) {
        func keepSynchronous(_ functions: inout [ExportedFunction]) {
            functions.removeAll { function in
                guard function.isAsync else { return false }
                context.diagnose(ExportDiagnostic.asyncNeedsSendable(member: function.displayName, type: type).at(function.node))
                return true
            }
        }
        keepSynchronous(&methods)
        keepSynchronous(&callAsFunction)
        keepSynchronous(&constructors)
        keepSynchronous(&namedConstructors)
    }
}

/// `name(label:_:)`, as Swift names a function in messages.
func displayName(_ name: String, _ signature: FunctionSignatureSyntax) -> String {
    name + "(" + signature.parameterClause.parameters.map { $0.firstName.text + ":" }.joined() + ")"
}

// MARK: Syntax questions

extension AttributeListSyntax {
    func has(_ name: String) -> Bool { attribute(name) != nil }

    func attribute(_ name: String) -> AttributeSyntax? {
        for element in self {
            if case .attribute(let attribute) = element, attribute.attributeName.trimmedDescription == name {
                return attribute
            }
        }
        return nil
    }

    /// `@LuaName("x")`'s name (checked where it is written, by the marker macro).
    var luaName: String? { attribute("LuaName").flatMap(luaNameArgument(of:)) }

    /// The key of `@LuaObserved("key")`.
    var observedKey: String? {
        guard let attribute = attribute("LuaObserved") else { return nil }
        let argument = attribute.arguments?.as(LabeledExprListSyntax.self)?.first?.expression
        guard let literal = argument?.as(StringLiteralExprSyntax.self), literal.segments.count == 1,
              case .stringSegment(let segment)? = literal.segments.first else { return nil }
        return segment.content.text
    }
}

extension DeclModifierListSyntax {
    var isPrivate: Bool {
        contains { ($0.name.tokenKind == .keyword(.private) || $0.name.tokenKind == .keyword(.fileprivate)) && $0.detail == nil }
    }
    var isStatic: Bool {
        contains { $0.name.tokenKind == .keyword(.static) || $0.name.tokenKind == .keyword(.class) }
    }
    /// `private(set)` / `fileprivate(set)`: read-only to other code, so to Lua.
    var hasRestrictedSetter: Bool {
        contains { ($0.name.tokenKind == .keyword(.private) || $0.name.tokenKind == .keyword(.fileprivate)) && $0.detail != nil }
    }
}

extension PatternBindingSyntax {
    /// A computed property with a getter only (`var x: Int { 1 }` or `{ get }`).
    var isGetOnly: Bool {
        guard let accessorBlock else { return false }
        switch accessorBlock.accessors {
        case .getter:
            return true
        case .accessors(let accessors):
            let kinds = accessors.map(\.accessorSpecifier.tokenKind)
            if kinds.contains(.keyword(.willSet)) || kinds.contains(.keyword(.didSet)) { return false }
            return !kinds.contains(.keyword(.set)) && !kinds.contains(.keyword(._modify))
        }
    }
}

extension PatternBindingSyntax {
    /// A getter that is `async` or `throws`: Lua reads properties synchronously, without errors.
    var hasEffectfulGetter: Bool {
        guard case .accessors(let accessors)? = accessorBlock?.accessors else { return false }
        return accessors.contains { $0.accessorSpecifier.tokenKind == .keyword(.get) && $0.effectSpecifiers != nil }
    }
}

extension TokenKind {
    var isOperatorLike: Bool {
        switch self {
        case .binaryOperator, .prefixOperator, .postfixOperator: true
        default: false
        }
    }
}

extension String {
    /// `` `end` `` as Lua names it: `end`.
    var withoutBackticks: String { filter { $0 != "`" } }
}

/// Swift's pointer types: never LuaConvertible, known by name, so refused at the member.
private let pointerTypes: Set = ["UnsafePointer", "UnsafeMutablePointer", "UnsafeRawPointer",
                                 "UnsafeMutableRawPointer", "UnsafeBufferPointer", "UnsafeMutableBufferPointer",
                                 "UnsafeRawBufferPointer", "UnsafeMutableRawBufferPointer", "OpaquePointer",
                                 "AutoreleasingUnsafeMutablePointer", "Unmanaged"]

extension TypeSyntax {
    /// True if the type names `identifier` anywhere (`LuaClosure`, `[LuaClosure]?`).
    func names(_ identifier: String) -> Bool {
        Syntax(self).containsNode { $0.as(IdentifierTypeSyntax.self)?.name.text == identifier }
    }

    /// The first pointer type the type names (`UnsafeRawPointer`, `[UnsafePointer<Int>]`), if any.
    var pointerTypeName: String? {
        var found: String?
        _ = Syntax(self).containsNode { node in
            guard let name = node.as(IdentifierTypeSyntax.self)?.name.text, pointerTypes.contains(name) else { return false }
            found = name
            return true
        }
        return found
    }

    var containsFunctionType: Bool { Syntax(self).containsNode { $0.is(FunctionTypeSyntax.self) } }
    var containsOpaqueType: Bool {
        Syntax(self).containsNode { node in
            guard let some = node.as(SomeOrAnyTypeSyntax.self) else { return false }
            return some.someOrAnySpecifier.tokenKind == .keyword(.some) || some.someOrAnySpecifier.tokenKind == .keyword(.any)
        }
    }
}

extension Syntax {
    /// True if this node or a descendant satisfies `predicate`.
    func containsNode(where predicate: (Syntax) -> Bool) -> Bool {
        if predicate(self) { return true }
        return children(viewMode: .sourceAccurate).contains { $0.containsNode(where: predicate) }
    }
}
