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
                        final class Gadget: LuaExportable {
                            init() {}
                            var blob = Opaque()
                            func stash(_ value: Opaque) {}

                            private static let luaExported_Gadget = LuaExportedType(
                                Gadget.self,
                                name: "Gadget",
                                superclass: nil,
                                members: [
                                    luaExportedType(Gadget_member0_stash: ()),
                                    luaExportedType(Gadget_member1_blob: ())
                                ],
                                classMembers: [
                                    luaExportedType(Gadget_classMember0_init: ())
                                ]
                            )

                            private static func luaExportedType(Gadget_member0_stash: Void) -> LuaMember {
                                #sourceLocation(file: "Test.swift", line: 5)
                                return .method("stash", ["value"]) { (object: Gadget, a0: Opaque) -> Void in
                                    object.stash(a0)
                                }
                                #sourceLocation()
                            }

                            private static func luaExportedType(Gadget_member1_blob: Void) -> LuaMember {
                                #sourceLocation(file: "Test.swift", line: 4)
                                return .property("blob", get: { (object: Gadget) in
                                        object.blob
                                    }, set: { (object: Gadget, value) in
                                        object.blob = value
                                    })
                                #sourceLocation()
                            }

                            private static func luaExportedType(Gadget_classMember0_init: Void) -> LuaClassMember {
                                #sourceLocation(file: "Test.swift", line: 3)
                                return .constructor([]) { () -> Gadget in
                                    Gadget()
                                }
                                #sourceLocation()
                            }

                            class var luaClass: LuaClass {
                                luaExported_Gadget.luaClass
                            }

                            class var luaExportedType: LuaExportedType {
                                luaExported_Gadget
                            }

                            lazy var luaObservers = LuaObservers()
                        }
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
                        @LuaExport
                        final class Gadget: LuaExportable {
                            func poke(_ pointer: UnsafeRawPointer) {}
                                      ┬──────────────────────────
                                      ╰─ 🛑 'poke(_:)' uses 'UnsafeRawPointer': a pointer cannot cross to Lua; wrap what it points to in a LuaConvertible type (or an exported class), or mark it @LuaIgnore
                            func buffer() -> UnsafeMutableBufferPointer<UInt8> { fatalError() }
                                             ┬────────────────────────────────
                                             ╰─ 🛑 'buffer()' uses 'UnsafeMutableBufferPointer': a pointer cannot cross to Lua; wrap what it points to in a LuaConvertible type (or an exported class), or mark it @LuaIgnore
                            var raw: OpaquePointer? = nil
                                ┬────────────────────────
                                ╰─ 🛑 'raw' uses 'OpaquePointer': a pointer cannot cross to Lua; wrap what it points to in a LuaConvertible type (or an exported class), or mark it @LuaIgnore
                            func handles(_ list: [Unmanaged<AnyObject>]) {}
                                         ┬─────────────────────────────
                                         ╰─ 🛑 'handles(_:)' uses 'Unmanaged': a pointer cannot cross to Lua; wrap what it points to in a LuaConvertible type (or an exported class), or mark it @LuaIgnore
                        }
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
                        @LuaExport
                        final class Gadget: LuaExportable {
                            func take(_ c: LuaClosure) {}
                                      ┬──────────────
                                      ╰─ 🛑 'take(_:)': parameter 'c' is a LuaClosure, which only goes from Swift to Lua; take a LuaRef to receive a Lua function (call it with .call), or mark it @LuaIgnore
                            func maybe(callback: LuaClosure?) {}
                                       ┬────────────────────
                                       ╰─ 🛑 'maybe(callback:)': parameter 'callback' is a LuaClosure, which only goes from Swift to Lua; take a LuaRef to receive a Lua function (call it with .call), or mark it @LuaIgnore
                            static func all(_ list: [LuaClosure]) {}
                                            ┬───────────────────
                                            ╰─ 🛑 'all(_:)': parameter 'list' is a LuaClosure, which only goes from Swift to Lua; take a LuaRef to receive a Lua function (call it with .call), or mark it @LuaIgnore
                            init(_ c: LuaClosure) {}
                                 ┬──────────────
                                 ╰─ 🛑 'init(_:)': parameter 'c' is a LuaClosure, which only goes from Swift to Lua; take a LuaRef to receive a Lua function (call it with .call), or mark it @LuaIgnore
                        }
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
                        final class Gadget: LuaExportable {
                            func `repeat`(_ `in`: Int) -> Int { `in` }
                            var `default` = 1

                            private static let luaExported_Gadget = LuaExportedType(
                                Gadget.self,
                                name: "Gadget",
                                superclass: nil,
                                members: [
                                    luaExportedType(Gadget_member0_repeat: ()),
                                    luaExportedType(Gadget_member1_default: ())
                                ],
                                classMembers: [
                                    luaExportedType(Gadget_classMember0_init: ())
                                ]
                            )

                            private static func luaExportedType(Gadget_member0_repeat: Void) -> LuaMember {
                                #sourceLocation(file: "Test.swift", line: 3)
                                return .method("repeat", ["in"]) { (object: Gadget, a0: Int) -> Int in
                                    object.`repeat`(a0)
                                }
                                #sourceLocation()
                            }

                            private static func luaExportedType(Gadget_member1_default: Void) -> LuaMember {
                                #sourceLocation(file: "Test.swift", line: 4)
                                return .property("default", get: { (object: Gadget) in
                                        object.`default`
                                    }, set: { (object: Gadget, value) in
                                        object.`default` = value
                                    })
                                #sourceLocation()
                            }

                            private static func luaExportedType(Gadget_classMember0_init: Void) -> LuaClassMember {
                                #sourceLocation(file: "Test.swift", line: 2)
                                return .constructor([]) { () -> Gadget in
                                    Gadget()
                                }
                                #sourceLocation()
                            }

                            class var luaClass: LuaClass {
                                luaExported_Gadget.luaClass
                            }

                            class var luaExportedType: LuaExportedType {
                                luaExported_Gadget
                            }

                            lazy var luaObservers = LuaObservers()
                        }
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
                        final class Bag: LuaExportable, RandomAccessCollection, CustomStringConvertible {
                            var items: [Int] = []
                            var startIndex: Int { 0 }
                            var endIndex: Int { items.count }
                            subscript(position: Int) -> Int { items[position] }
                            var description: String { "bag" }
                            var debugLabel: String { "" }

                            private static let luaExported_Bag = LuaExportedType(
                                Bag.self,
                                name: "Bag",
                                superclass: nil,
                                members: [
                                    luaExportedType(Bag_member0_items: ()),
                                    luaExportedType(Bag_member1_debugLabel: ())
                                ],
                                classMembers: [
                                    luaExportedType(Bag_classMember0_init: ())
                                ]
                            )

                            private static func luaExportedType(Bag_member0_items: Void) -> LuaMember {
                                #sourceLocation(file: "Test.swift", line: 3)
                                return .property("items", get: { (object: Bag) in
                                        object.items
                                    }, set: { (object: Bag, value) in
                                        object.items = value
                                    })
                                #sourceLocation()
                            }

                            private static func luaExportedType(Bag_member1_debugLabel: Void) -> LuaMember {
                                #sourceLocation(file: "Test.swift", line: 8)
                                return .readOnlyProperty("label", get: { (object: Bag) in
                                        object.debugLabel
                                    })
                                #sourceLocation()
                            }

                            private static func luaExportedType(Bag_classMember0_init: Void) -> LuaClassMember {
                                #sourceLocation(file: "Test.swift", line: 2)
                                return .constructor([]) { () -> Bag in
                                    Bag()
                                }
                                #sourceLocation()
                            }

                            class var luaClass: LuaClass {
                                luaExported_Bag.luaClass
                            }

                            class var luaExportedType: LuaExportedType {
                                luaExported_Bag
                            }

                            lazy var luaObservers = LuaObservers()
                        }
                        """
        }
    }
}
