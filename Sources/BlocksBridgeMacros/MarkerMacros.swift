import SwiftSyntax
import SwiftSyntaxMacros

/// `@LuaIgnore`, `@LuaName("x")` and `@LuaReadOnly` generate nothing: `@LuaExport` reads them on
/// the members of the type it expands. This checks `@LuaName`'s argument where it is written.
public struct LuaMemberMarkerMacro: PeerMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        if node.attributeName.trimmedDescription == "LuaName", luaNameArgument(of: node) == nil {
            context.diagnose(ExportDiagnostic.badLuaName.at(node))
        }
        return []
    }
}

/// The name in `@LuaName("name")`, if it is a string literal Lua can use as a field name.
func luaNameArgument(of attribute: AttributeSyntax) -> String? {
    let argument = attribute.arguments?.as(LabeledExprListSyntax.self)?.first?.expression
    guard let literal = argument?.as(StringLiteralExprSyntax.self), literal.segments.count == 1,
          case .stringSegment(let segment)? = literal.segments.first else { return nil }
    let name = segment.content.text
    return isLuaName(name) ? name : nil
}

/// A name Lua can use after `.` and `:` (`[A-Za-z_][A-Za-z0-9_]*`, not a keyword).
func isLuaName(_ name: String) -> Bool {
    let keywords: Set = ["and", "break", "do", "else", "elseif", "end", "false", "for", "function", "goto",
                         "if", "in", "local", "nil", "not", "or", "repeat", "return", "then", "true",
                         "until", "while"]
    func isWordStart(_ c: Unicode.Scalar) -> Bool { c == "_" || ("a"..."z").contains(c) || ("A"..."Z").contains(c) }
    guard let first = name.unicodeScalars.first, !keywords.contains(name), isWordStart(first) else { return false }
    return name.unicodeScalars.dropFirst().allSatisfy { isWordStart($0) || ("0"..."9").contains($0) }
}
