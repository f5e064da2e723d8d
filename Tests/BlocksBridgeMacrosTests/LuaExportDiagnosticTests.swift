import MacroTesting
import Testing
import BlocksBridgeMacros

/// Every member `@LuaExport` refuses is an error naming it and why (inline snapshots).
@Suite(.macros(["LuaExport": LuaExportMacro.self, "LuaIgnore": LuaMemberMarkerMacro.self,
                "LuaName": LuaMemberMarkerMacro.self, "LuaReadOnly": LuaMemberMarkerMacro.self]))
struct LuaExportDiagnosticTests {
    @Test func valueTypesAndOtherDeclarations() {
        assertMacro {
            """
            @LuaExport
            struct Config: Codable {
                var host: String
            }
            """
        } diagnostics: {
                        """
                        @LuaExport
                        struct Config: Codable {
                        ┬─────
                        ╰─ 🛑 @LuaExport applies to classes, not to a struct; an enum with String or Int raw values conforms to LuaEnum, a Codable struct or enum to LuaCodable
                            var host: String
                        }
                        """
        }
        assertMacro {
            """
            @LuaExport
            enum Mode: String {
                case eco
            }
            """
        } diagnostics: {
                        """
                        @LuaExport
                        enum Mode: String {
                        ┬───
                        ╰─ 🛑 @LuaExport applies to classes, not to an enum; an enum with String or Int raw values conforms to LuaEnum, a Codable struct or enum to LuaCodable
                            case eco
                        }
                        """
        }
        assertMacro {
            """
            @LuaExport
            actor Worker {}
            """
        } diagnostics: {
                        """
                        @LuaExport
                        actor Worker {}
                        ┬────
                        ╰─ 🛑 @LuaExport applies to classes, not to an actor; an enum with String or Int raw values conforms to LuaEnum, a Codable struct or enum to LuaCodable
                        """
        }
    }

    @Test func genericClass() {
        assertMacro {
            """
            @LuaExport
            final class Box<T>: LuaExportable {
                var value: T
            }
            """
        } diagnostics: {
                        """
                        @LuaExport
                        final class Box<T>: LuaExportable {
                                    ┬──
                                    ╰─ 🛑 @LuaExport cannot export a generic class: Lua needs one concrete class (export a subclass or a wrapper)
                            var value: T
                        }
                        """
        }
    }

    @Test func missingConformance() {
        assertMacro {
            """
            @LuaExport
            final class Plain: Equatable {
                func run() {}
            }
            """
        } diagnostics: {
                        """
                        @LuaExport
                        final class Plain: Equatable {
                                    ┬────
                                    ╰─ 🛑 an exported class conforms to LuaExportable: write 'class Plain: LuaExportable' (a subclass of an exported class names its superclass first instead)
                            func run() {}
                        }
                        """
        }
    }

    @Test func asyncMembersOfAClassThatIsNotSendable() {
        assertMacro {
            """
            @LuaExport
            final class Loader: LuaExportable {
                init() async {}
                func load(_ path: String) async -> String { path }
                func callAsFunction() async {}
                static func ping() async -> Bool { true }
            }
            """
        } diagnostics: {
                        """
                        @LuaExport
                        final class Loader: LuaExportable {
                            init() async {}
                            ┬──────────────
                            ╰─ 🛑 'init()' is async: its work runs on another thread with the object while Lua goes on, so 'Loader' must be Sendable; declare '@unchecked Sendable' in its inheritance clause (the class guards its own state), or mark it @LuaIgnore
                            func load(_ path: String) async -> String { path }
                            ┬─────────────────────────────────────────────────
                            ╰─ 🛑 'load(_:)' is async: its work runs on another thread with the object while Lua goes on, so 'Loader' must be Sendable; declare '@unchecked Sendable' in its inheritance clause (the class guards its own state), or mark it @LuaIgnore
                            func callAsFunction() async {}
                            ┬─────────────────────────────
                            ╰─ 🛑 'callAsFunction()' is async: its work runs on another thread with the object while Lua goes on, so 'Loader' must be Sendable; declare '@unchecked Sendable' in its inheritance clause (the class guards its own state), or mark it @LuaIgnore
                            static func ping() async -> Bool { true }
                        }
                        """
        }
    }

    @Test func asyncMembersOfASubclassThatDoesNotRestateSendable() {
        assertMacro {
            """
            @LuaExport
            final class FileSource: Source {
                func size() async -> Int { 3 }
            }
            """
        } diagnostics: {
                        """
                        @LuaExport
                        final class FileSource: Source {
                            func size() async -> Int { 3 }
                            ┬─────────────────────────────
                            ╰─ 🛑 'size()' is async: its work runs on another thread with the object while Lua goes on, so 'FileSource' must be Sendable; declare '@unchecked Sendable' in its inheritance clause (the class guards its own state), or mark it @LuaIgnore
                        }
                        """
        }
    }

    @Test func asyncOrThrowingGetters() {
        assertMacro {
            """
            @LuaExport
            final class Feed: LuaExportable {
                var latest: String { get async { "" } }
                var checked: Int { get throws { 0 } }
            }
            """
        } diagnostics: {
                        """
                        @LuaExport
                        final class Feed: LuaExportable {
                            var latest: String { get async { "" } }
                                ┬──────────────────────────────────
                                ╰─ 🛑 'latest' has an async or throwing getter: Lua reads properties without waiting or errors; make it a method, or mark it @LuaIgnore
                            var checked: Int { get throws { 0 } }
                                ┬────────────────────────────────
                                ╰─ 🛑 'checked' has an async or throwing getter: Lua reads properties without waiting or errors; make it a method, or mark it @LuaIgnore
                        }
                        """
        }
    }

    @Test func parametersThatCannotCross() {
        assertMacro {
            """
            @LuaExport
            final class Tools: LuaExportable {
                func generic<T>(_ value: T) {}
                func update(_ value: inout Int) {}
                func sum(_ values: Int...) -> Int { 0 }
                func each(_ body: @escaping (Int) -> Void) {}
                func any(_ value: any Equatable) {}
                func opaque() -> some Equatable { 1 }
            }
            """
        } diagnostics: {
                        """
                        @LuaExport
                        final class Tools: LuaExportable {
                            func generic<T>(_ value: T) {}
                            ┬─────────────────────────────
                            ╰─ 🛑 'generic(_:)' is generic: Lua needs concrete parameter types; mark it @LuaIgnore or add a concrete overload
                            func update(_ value: inout Int) {}
                                        ┬─────────────────
                                        ╰─ 🛑 'update(_:)': inout parameter 'value' cannot cross to Lua (values are copied); return the new value instead, or mark it @LuaIgnore
                            func sum(_ values: Int...) -> Int { 0 }
                                     ┬───────────────
                                     ╰─ 🛑 'sum(_:)': variadic parameter 'values' is not supported; take an array instead, or mark it @LuaIgnore
                            func each(_ body: @escaping (Int) -> Void) {}
                                      ┬──────────────────────────────
                                      ╰─ 🛑 'each(_:)': parameter 'body' has a Swift function type; take a LuaRef (call it with .call) instead, or mark it @LuaIgnore
                            func any(_ value: any Equatable) {}
                                     ┬─────────────────────
                                     ╰─ 🛑 'any(_:)' uses an opaque ('some') or existential ('any') type; Lua needs a concrete LuaConvertible type, or mark it @LuaIgnore
                            func opaque() -> some Equatable { 1 }
                                             ┬─────────────
                                             ╰─ 🛑 'opaque()' uses an opaque ('some') or existential ('any') type; Lua needs a concrete LuaConvertible type, or mark it @LuaIgnore
                        }
                        """
        }
    }

    @Test func subscriptsTuplesAndConditionalMembers() {
        assertMacro {
            """
            @LuaExport
            final class Grid: LuaExportable {
                subscript(x: Int, y: Int) -> Int { 0 }
                var (width, height) = (1, 2)
                #if DEBUG
                func dump() {}
                #endif
            }
            """
        } diagnostics: {
                        """
                        @LuaExport
                        final class Grid: LuaExportable {
                            subscript(x: Int, y: Int) -> Int { 0 }
                            ┬─────────────────────────────────────
                            ╰─ 🛑 subscripts are not exported (a Collection's integer subscript becomes __index); mark it @LuaIgnore
                            var (width, height) = (1, 2)
                                ┬──────────────
                                ╰─ 🛑 a tuple pattern cannot be exported as a property; declare one property per name, or mark it @LuaIgnore
                            #if DEBUG
                            ╰─ ⚠️ members inside #if are not exported by @LuaExport; move them out or into an extension
                            func dump() {}
                            #endif
                        }
                        """
        }
    }

    @Test func duplicateNamesAndConstructors() {
        assertMacro {
            """
            @LuaExport
            final class Shape: LuaExportable {
                var size = 1
                @LuaName("size") func resize() {}
                func scale(by factor: Int) {}
                func scale(to size: Int) {}
                init() {}
                init(size: Int) { self.size = size }
            }
            """
        } diagnostics: {
                        """
                        @LuaExport
                        final class Shape: LuaExportable {
                            var size = 1
                                ┬───────
                                ╰─ 🛑 'resize()' and 'size' would both be 'size' in Lua; rename one with @LuaName("...") or mark it @LuaIgnore
                            @LuaName("size") func resize() {}
                            func scale(by factor: Int) {}
                            func scale(to size: Int) {}
                            ┬──────────────────────────
                            ╰─ 🛑 'scale(by:)' and 'scale(to:)' would both be 'scale' in Lua; rename one with @LuaName("...") or mark it @LuaIgnore
                            init() {}
                            init(size: Int) { self.size = size }
                            ┬───────────────────────────────────
                            ╰─ 🛑 initializer 'init(size:)' is a second constructor: Lua has no overloads; give it a name with @LuaName("...") (a static function) or mark it @LuaIgnore
                        }
                        """
        }
    }

    @Test func badLuaName() {
        assertMacro {
            """
            @LuaExport
            final class Named: LuaExportable {
                @LuaName("end") func finish() {}
                @LuaName("two words") var label = ""
            }
            """
        } diagnostics: {
                        """
                        @LuaExport
                        final class Named: LuaExportable {
                            @LuaName("end") func finish() {}
                            ┬──────────────
                            ╰─ 🛑 @LuaName needs a string literal Lua can use as a field name (letters, digits, '_', not a keyword)
                            @LuaName("two words") var label = ""
                            ┬────────────────────
                            ╰─ 🛑 @LuaName needs a string literal Lua can use as a field name (letters, digits, '_', not a keyword)
                        }
                        """
        }
    }
}
