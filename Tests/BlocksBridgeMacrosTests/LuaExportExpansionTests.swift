import MacroTesting
import Testing
import BlocksBridgeMacros

/// What `@LuaExport` writes for each kind of member and attribute (inline snapshots).
@Suite(.macros(["LuaExport": LuaExportMacro.self, "LuaIgnore": LuaMemberMarkerMacro.self,
                "LuaName": LuaMemberMarkerMacro.self, "LuaReadOnly": LuaMemberMarkerMacro.self]))
struct LuaExportExpansionTests {
    @Test func methodsPropertiesAndConstructor() {
        assertMacro {
            """
            @LuaExport
            public final class Counter: LuaExportable {
                var count = 0
                let name: String
                var doubled: Int { count * 2 }
                private(set) var hits = 0
                init(name: String) { self.name = name }
                func increment(by amount: Int?) -> Int { count += amount ?? 1; return count }
                func reset() {}
                func check(_ limit: Int) throws {}
            }
            """
        } expansion: {
                        """
                        public final class Counter: LuaExportable {
                            var count = 0
                            let name: String
                            var doubled: Int { count * 2 }
                            private(set) var hits = 0
                            init(name: String) { self.name = name }
                            func increment(by amount: Int?) -> Int { count += amount ?? 1; return count }
                            func reset() {}
                            func check(_ limit: Int) throws {}

                            private static let luaExported_Counter = LuaExportedType(
                                Counter.self,
                                name: "Counter",
                                superclass: nil,
                                members: [
                                    .method("increment", ["amount"]) { (object: Counter, a0: Int?) -> Int in
                                        object.increment(by: a0)
                                    },
                                    .method("reset", []) { (object: Counter) -> Void in
                                        object.reset()
                                    },
                                    .method("check", ["limit"]) { (object: Counter, a0: Int) throws -> Void in
                                        try object.check(a0)
                                    },
                                    .property("count", get: { (object: Counter) in
                                            object.count
                                        }, set: { (object: Counter, value) in
                                            object.count = value
                                        }),
                                    .readOnlyProperty("name", get: { (object: Counter) in
                                            object.name
                                        }),
                                    .readOnlyProperty("doubled", get: { (object: Counter) in
                                            object.doubled
                                        }),
                                    .readOnlyProperty("hits", get: { (object: Counter) in
                                            object.hits
                                        })
                                ],
                                classMembers: [
                                    .constructor(["name"]) { (a0: String) -> Counter in
                                        Counter(name: a0)
                                    }
                                ]
                            )

                            public class var luaClass: LuaClass {
                                luaExported_Counter.luaClass
                            }

                            public class var luaExportedType: LuaExportedType {
                                luaExported_Counter
                            }

                            public lazy var luaObservers = LuaObservers()
                        }
                        """
        }
    }

    @Test func attributesIgnoreRenameReadOnly() {
        assertMacro {
            """
            @LuaExport
            final class Lamp: LuaExportable {
                @LuaIgnore var wiring = 0
                @LuaName("isOn") var on = false
                @LuaReadOnly var watts = 60
                private var secret = 1
                @LuaName("toggle") func flip() {}
                @LuaIgnore func debugDump() -> String { "" }
            }
            """
        } expansion: {
                        """
                        final class Lamp: LuaExportable {
                            var wiring = 0
                            var on = false
                            var watts = 60
                            private var secret = 1
                            func flip() {}
                            func debugDump() -> String { "" }

                            private static let luaExported_Lamp = LuaExportedType(
                                Lamp.self,
                                name: "Lamp",
                                superclass: nil,
                                members: [
                                    .method("toggle", []) { (object: Lamp) -> Void in
                                        object.flip()
                                    },
                                    .property("isOn", get: { (object: Lamp) in
                                            object.on
                                        }, set: { (object: Lamp, value) in
                                            object.on = value
                                        }),
                                    .readOnlyProperty("watts", get: { (object: Lamp) in
                                            object.watts
                                        })
                                ],
                                classMembers: [
                                    .constructor([]) { () -> Lamp in
                                        Lamp()
                                    }
                                ]
                            )

                            class var luaClass: LuaClass {
                                luaExported_Lamp.luaClass
                            }

                            class var luaExportedType: LuaExportedType {
                                luaExported_Lamp
                            }

                            lazy var luaObservers = LuaObservers()
                        }
                        """
        }
    }

    @Test func observedProperties() {
        assertMacro {
            """
            @LuaExport
            final class Person: LuaExportable {
                @LuaObserved("name") var name = ""
                @LuaObserved("years") var age = 0
            }
            """
        } expansion: {
                        #"""
                        final class Person: LuaExportable {
                            @LuaObserved("name") var name = ""
                            @LuaObserved("years") var age = 0

                            private static let luaExported_Person = LuaExportedType(
                                Person.self,
                                name: "Person",
                                superclass: nil,
                                members: [
                                    .observed("name", \Person.name),
                                    .observed("years", \Person.age)
                                ],
                                classMembers: [
                                    .constructor([]) { () -> Person in
                                        Person()
                                    }
                                ]
                            )

                            class var luaClass: LuaClass {
                                luaExported_Person.luaClass
                            }

                            class var luaExportedType: LuaExportedType {
                                luaExported_Person
                            }

                            lazy var luaObservers = LuaObservers()
                        }
                        """#
        }
    }

    @Test func staticsAndInitializers() {
        assertMacro {
            """
            @LuaExport
            final class Point: LuaExportable {
                var x: Double
                nonisolated(unsafe) static var count = 0
                static let origin = Point(x: 0)
                init?(x: Double) { self.x = x }
                @LuaName("parse") init(_ text: String) throws { self.x = 0 }
                static func distance(_ a: Point, _ b: Point) -> Double { a.x - b.x }
            }
            """
        } expansion: {
                        """
                        final class Point: LuaExportable {
                            var x: Double
                            nonisolated(unsafe) static var count = 0
                            static let origin = Point(x: 0)
                            init?(x: Double) { self.x = x }
                            init(_ text: String) throws { self.x = 0 }
                            static func distance(_ a: Point, _ b: Point) -> Double { a.x - b.x }

                            private static let luaExported_Point = LuaExportedType(
                                Point.self,
                                name: "Point",
                                superclass: nil,
                                members: [
                                    .property("x", get: { (object: Point) in
                                            object.x
                                        }, set: { (object: Point, value) in
                                            object.x = value
                                        })
                                ],
                                classMembers: [
                                    .constructor(["x"]) { (a0: Double) -> Point? in
                                        Point(x: a0)
                                    },
                                    .constructor("parse", ["text"]) { (a0: String) throws -> Point in
                                        try Point(a0)
                                    },
                                    .function("distance", ["a", "b"]) { (a0: Point, a1: Point) -> Double in
                                        Point.distance(a0, a1)
                                    },
                                    .property("count", get: {
                                            Point.count
                                        }, set: {
                                            Point.count = $0
                                        }),
                                    .readOnlyProperty("origin", get: {
                                            Point.origin
                                        })
                                ]
                            )

                            class var luaClass: LuaClass {
                                luaExported_Point.luaClass
                            }

                            class var luaExportedType: LuaExportedType {
                                luaExported_Point
                            }

                            lazy var luaObservers = LuaObservers()
                        }
                        """
        }
    }

    @Test func callAsFunctionAndCollectionPlumbing() {
        assertMacro {
            """
            @LuaExport
            final class Playlist: LuaExportable, RandomAccessCollection {
                var songs: [String] = []
                var startIndex: Int { 0 }
                var endIndex: Int { songs.count }
                subscript(i: Int) -> String { songs[i] }
                func index(after i: Int) -> Int { i + 1 }
                func callAsFunction(_ i: Int) -> String { songs[i] }
                static func == (a: Playlist, b: Playlist) -> Bool { a.songs == b.songs }
            }
            """
        } expansion: {
                        """
                        final class Playlist: LuaExportable, RandomAccessCollection {
                            var songs: [String] = []
                            var startIndex: Int { 0 }
                            var endIndex: Int { songs.count }
                            subscript(i: Int) -> String { songs[i] }
                            func index(after i: Int) -> Int { i + 1 }
                            func callAsFunction(_ i: Int) -> String { songs[i] }
                            static func == (a: Playlist, b: Playlist) -> Bool { a.songs == b.songs }

                            private static let luaExported_Playlist = LuaExportedType(
                                Playlist.self,
                                name: "Playlist",
                                superclass: nil,
                                members: [
                                    .property("songs", get: { (object: Playlist) in
                                            object.songs
                                        }, set: { (object: Playlist, value) in
                                            object.songs = value
                                        }),
                                    .readOnlyProperty("startIndex", get: { (object: Playlist) in
                                            object.startIndex
                                        }),
                                    .readOnlyProperty("endIndex", get: { (object: Playlist) in
                                            object.endIndex
                                        }),
                                    .metamethod(.method("__call", ["i"]) { (object: Playlist, a0: Int) -> String in
                                            object.callAsFunction(a0)
                                        })
                                ],
                                classMembers: [
                                    .constructor([]) { () -> Playlist in
                                        Playlist()
                                    }
                                ]
                            )

                            class var luaClass: LuaClass {
                                luaExported_Playlist.luaClass
                            }

                            class var luaExportedType: LuaExportedType {
                                luaExported_Playlist
                            }

                            lazy var luaObservers = LuaObservers()
                        }
                        """
        }
    }

    @Test func subclass() {
        assertMacro {
            """
            @LuaExport
            final class Square: Shape {
                var side = 1.0
                override func area() -> Double { side * side }
            }
            """
        } expansion: {
                        """
                        final class Square: Shape {
                            var side = 1.0
                            override func area() -> Double { side * side }

                            private static let luaExported_Square = LuaExportedType(
                                Square.self,
                                name: "Square",
                                superclass: Shape.luaExportedType,
                                members: [
                                    .method("area", []) { (object: Square) -> Double in
                                        object.area()
                                    },
                                    .property("side", get: { (object: Square) in
                                            object.side
                                        }, set: { (object: Square, value) in
                                            object.side = value
                                        })
                                ],
                                classMembers: []
                            )

                            override class var luaClass: LuaClass {
                                luaExported_Square.luaClass
                            }

                            override class var luaExportedType: LuaExportedType {
                                luaExported_Square
                            }
                        }
                        """
        }
    }

    @Test func asyncMembers() {
        assertMacro {
            """
            @LuaExport
            final class Loader: LuaExportable, @unchecked Sendable {
                init(root: String) async throws {}
                @LuaName("cached") init(cache: Int) async {}
                func load(_ path: String) async throws -> String { path }
                func warm() async {}
                func callAsFunction(_ path: String) async -> Int { 0 }
                static func ping() async -> Bool { true }
            }
            """
        } expansion: {
                        """
                        final class Loader: LuaExportable, @unchecked Sendable {
                            init(root: String) async throws {}
                            init(cache: Int) async {}
                            func load(_ path: String) async throws -> String { path }
                            func warm() async {}
                            func callAsFunction(_ path: String) async -> Int { 0 }
                            static func ping() async -> Bool { true }

                            private static let luaExported_Loader = LuaExportedType(
                                Loader.self,
                                name: "Loader",
                                superclass: nil,
                                members: [
                                    .asyncMethod("load", ["path"]) { (object: Loader, a0: String) async throws -> String in
                                        try await object.load(a0)
                                    },
                                    .asyncMethod("warm", []) { (object: Loader) async -> Void in
                                        await object.warm()
                                    },
                                    .metamethod(.asyncMethod("__call", ["path"]) { (object: Loader, a0: String) async -> Int in
                                            await object.callAsFunction(a0)
                                        })
                                ],
                                classMembers: [
                                    .asyncConstructor(["root"]) { (a0: String) async throws -> Loader in
                                        try await Loader(root: a0)
                                    },
                                    .asyncConstructor("cached", ["cache"]) { (a0: Int) async -> Loader in
                                        await Loader(cache: a0)
                                    },
                                    .asyncFunction("ping", []) { () async -> Bool in
                                        await Loader.ping()
                                    }
                                ]
                            )

                            class var luaClass: LuaClass {
                                luaExported_Loader.luaClass
                            }

                            class var luaExportedType: LuaExportedType {
                                luaExported_Loader
                            }

                            lazy var luaObservers = LuaObservers()
                        }
                        """
        }
    }

    @Test func defaultArguments() {
        assertMacro {
            """
            @LuaExport
            final class Stepper: LuaExportable {
                static let unit = 1
                init(start: Int = 0, step: Int = Stepper.unit) {}
                func advance(by count: Int = 1, times: Int = 2 * 3, label: String? = nil, note: String? = "x") {}
                static func make(_ start: Int = .zero) -> Int { start }
            }
            """
        } expansion: {
                        """
                        final class Stepper: LuaExportable {
                            static let unit = 1
                            init(start: Int = 0, step: Int = Stepper.unit) {}
                            func advance(by count: Int = 1, times: Int = 2 * 3, label: String? = nil, note: String? = "x") {}
                            static func make(_ start: Int = .zero) -> Int { start }

                            private static let luaExported_Stepper = LuaExportedType(
                                Stepper.self,
                                name: "Stepper",
                                superclass: nil,
                                members: [
                                    .method("advance", ["count", "times", "label", "note"]) { (object: Stepper, a0: Int?, a1: Int?, a2: String?, a3: String?) -> Void in
                                        object.advance(by: a0 ?? 1, times: a1 ?? (2 * 3), label: a2, note: a3 ?? "x")
                                    }
                                ],
                                classMembers: [
                                    .constructor(["start", "step"]) { (a0: Int?, a1: Int?) -> Stepper in
                                        Stepper(start: a0 ?? 0, step: a1 ?? Stepper.unit)
                                    },
                                    .function("make", ["start"]) { (a0: Int?) -> Int in
                                        Stepper.make(a0 ?? .zero)
                                    },
                                    .readOnlyProperty("unit", get: {
                                            Stepper.unit
                                        })
                                ]
                            )

                            class var luaClass: LuaClass {
                                luaExported_Stepper.luaClass
                            }

                            class var luaExportedType: LuaExportedType {
                                luaExported_Stepper
                            }

                            lazy var luaObservers = LuaObservers()
                        }
                        """
        }
    }
}
