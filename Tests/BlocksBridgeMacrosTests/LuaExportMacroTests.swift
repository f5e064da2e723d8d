import MacroTesting
import Testing
import BlocksBridgeMacros

/// What a Swift developer meets first: where errors about a member land, members Lua cannot take
/// (pointers, `LuaClosure` parameters), keyword names and protocol plumbing.
@Suite(.macros(["LuaExport": LuaExportMacro.self, "LuaIgnore": LuaMemberMarkerMacro.self,
                "LuaName": LuaMemberMarkerMacro.self, "LuaReadOnly": LuaMemberMarkerMacro.self]))
struct LuaExportMacroTests {
    /// Each member's entry is its own declaration placed on the member's line, so the compiler's
    /// error about a type that does not convert (which the macro cannot see) lands on the member.
    @Test func eachEntryIsPlacedOnItsMembersLine() {
        assertMacro {
            """
            @LuaExport
            final class Gadget: LuaExportable {
                init() {}
                var blob = Opaque()
                func stash(_ value: Opaque) {}
            }
            """
        } expansion: {
            """
            """
        }
    }

    /// Types the macro knows cannot cross are refused at the parameter, naming member and type.
    @Test func pointersAreRefusedAtTheMember() {
        assertMacro {
            """
            @LuaExport
            final class Gadget: LuaExportable {
                func poke(_ pointer: UnsafeRawPointer) {}
                func buffer() -> UnsafeMutableBufferPointer<UInt8> { fatalError() }
                var raw: OpaquePointer? = nil
                func handles(_ list: [Unmanaged<AnyObject>]) {}
            }
            """
        } diagnostics: {
            """
            """
        }
    }

    /// A `LuaClosure` only goes from Swift to Lua: as a parameter it could never be called, so it
    /// is refused with the type to use instead. As a result it is fine.
    @Test func luaClosureParametersAreRefused() {
        assertMacro {
            """
            @LuaExport
            final class Gadget: LuaExportable {
                func take(_ c: LuaClosure) {}
                func maybe(callback: LuaClosure?) {}
                static func all(_ list: [LuaClosure]) {}
                init(_ c: LuaClosure) {}
            }
            """
        } diagnostics: {
            """
            """
        }
    }

    /// Backticked names are Lua names without the backticks; Swift calls keep them.
    @Test func keywordNamedMembers() {
        assertMacro {
            """
            @LuaExport
            final class Gadget: LuaExportable {
                func `repeat`(_ `in`: Int) -> Int { `in` }
                var `default` = 1
            }
            """
        } expansion: {
            """
            """
        }
    }

    /// A Collection's indices and a CustomStringConvertible's description are reached through
    /// metamethods (`#`, `obj[i]`, `tostring`), so they are no fields; `@LuaName` exports one anyway.
    @Test func protocolPlumbingIsNotExported() {
        assertMacro {
            """
            @LuaExport
            final class Bag: LuaExportable, RandomAccessCollection, CustomStringConvertible {
                var items: [Int] = []
                var startIndex: Int { 0 }
                var endIndex: Int { items.count }
                subscript(position: Int) -> Int { items[position] }
                var description: String { "bag" }
                @LuaName("label") var debugLabel: String { "" }
            }
            """
        } expansion: {
            """
            """
        }
    }
}
