import SwiftCompilerPlugin
import SwiftSyntaxMacros

@main
struct BlocksBridgeMacrosPlugin: CompilerPlugin {
    let providingMacros: [any Macro.Type] = [
        LuaExportMacro.self,
        LuaMemberMarkerMacro.self,
    ]
}
