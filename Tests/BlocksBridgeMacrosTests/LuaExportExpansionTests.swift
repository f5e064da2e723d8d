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
                                    luaExportedType(Counter_member0_increment: ()),
                                    luaExportedType(Counter_member1_reset: ()),
                                    luaExportedType(Counter_member2_check: ()),
                                    luaExportedType(Counter_member3_count: ()),
                                    luaExportedType(Counter_member4_name: ()),
                                    luaExportedType(Counter_member5_doubled: ()),
                                    luaExportedType(Counter_member6_hits: ())
                                ],
                                classMembers: [
                                    luaExportedType(Counter_classMember0_init: ())
                                ]
                            )

                            private static func luaExportedType(Counter_member0_increment: Void) -> LuaMember {
                                #sourceLocation(file: "Test.swift", line: 8)
                                return .method("increment", ["amount"]) { (object: Counter, a0: Int?) -> Int in
                                    object.increment(by: a0)
                                }
                                #sourceLocation()
                            }

                            private static func luaExportedType(Counter_member1_reset: Void) -> LuaMember {
                                #sourceLocation(file: "Test.swift", line: 9)
                                return .method("reset", []) { (object: Counter) -> Void in
                                    object.reset()
                                }
                                #sourceLocation()
                            }

                            private static func luaExportedType(Counter_member2_check: Void) -> LuaMember {
                                #sourceLocation(file: "Test.swift", line: 10)
                                return .method("check", ["limit"]) { (object: Counter, a0: Int) throws -> Void in
                                    try object.check(a0)
                                }
                                #sourceLocation()
                            }

                            private static func luaExportedType(Counter_member3_count: Void) -> LuaMember {
                                #sourceLocation(file: "Test.swift", line: 3)
                                return .property("count", get: { (object: Counter) in
                                        object.count
                                    }, set: { (object: Counter, value) in
                                        object.count = value
                                    })
                                #sourceLocation()
                            }

                            private static func luaExportedType(Counter_member4_name: Void) -> LuaMember {
                                #sourceLocation(file: "Test.swift", line: 4)
                                return .readOnlyProperty("name", get: { (object: Counter) in
                                        object.name
                                    })
                                #sourceLocation()
                            }

                            private static func luaExportedType(Counter_member5_doubled: Void) -> LuaMember {
                                #sourceLocation(file: "Test.swift", line: 5)
                                return .readOnlyProperty("doubled", get: { (object: Counter) in
                                        object.doubled
                                    })
                                #sourceLocation()
                            }

                            private static func luaExportedType(Counter_member6_hits: Void) -> LuaMember {
                                #sourceLocation(file: "Test.swift", line: 6)
                                return .readOnlyProperty("hits", get: { (object: Counter) in
                                        object.hits
                                    })
                                #sourceLocation()
                            }

                            private static func luaExportedType(Counter_classMember0_init: Void) -> LuaClassMember {
                                #sourceLocation(file: "Test.swift", line: 7)
                                return .constructor(["name"]) { (a0: String) -> Counter in
                                    Counter(name: a0)
                                }
                                #sourceLocation()
                            }

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
                                    luaExportedType(Lamp_member0_flip: ()),
                                    luaExportedType(Lamp_member1_on: ()),
                                    luaExportedType(Lamp_member2_watts: ())
                                ],
                                classMembers: [
                                    luaExportedType(Lamp_classMember0_init: ())
                                ]
                            )

                            private static func luaExportedType(Lamp_member0_flip: Void) -> LuaMember {
                                #sourceLocation(file: "Test.swift", line: 7)
                                return .method("toggle", []) { (object: Lamp) -> Void in
                                    object.flip()
                                }
                                #sourceLocation()
                            }

                            private static func luaExportedType(Lamp_member1_on: Void) -> LuaMember {
                                #sourceLocation(file: "Test.swift", line: 4)
                                return .property("isOn", get: { (object: Lamp) in
                                        object.on
                                    }, set: { (object: Lamp, value) in
                                        object.on = value
                                    })
                                #sourceLocation()
                            }

                            private static func luaExportedType(Lamp_member2_watts: Void) -> LuaMember {
                                #sourceLocation(file: "Test.swift", line: 5)
                                return .readOnlyProperty("watts", get: { (object: Lamp) in
                                        object.watts
                                    })
                                #sourceLocation()
                            }

                            private static func luaExportedType(Lamp_classMember0_init: Void) -> LuaClassMember {
                                #sourceLocation(file: "Test.swift", line: 2)
                                return .constructor([]) { () -> Lamp in
                                    Lamp()
                                }
                                #sourceLocation()
                            }

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
                                    luaExportedType(Person_member0_name: ()),
                                    luaExportedType(Person_member1_age: ())
                                ],
                                classMembers: [
                                    luaExportedType(Person_classMember0_init: ())
                                ]
                            )

                            private static func luaExportedType(Person_member0_name: Void) -> LuaMember {
                                #sourceLocation(file: "Test.swift", line: 3)
                                return .observed("name", \Person.name)
                                #sourceLocation()
                            }

                            private static func luaExportedType(Person_member1_age: Void) -> LuaMember {
                                #sourceLocation(file: "Test.swift", line: 4)
                                return .observed("years", \Person.age)
                                #sourceLocation()
                            }

                            private static func luaExportedType(Person_classMember0_init: Void) -> LuaClassMember {
                                #sourceLocation(file: "Test.swift", line: 2)
                                return .constructor([]) { () -> Person in
                                    Person()
                                }
                                #sourceLocation()
                            }

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
                                    luaExportedType(Point_member0_x: ())
                                ],
                                classMembers: [
                                    luaExportedType(Point_classMember0_init: ()),
                                    luaExportedType(Point_classMember1_parse: ()),
                                    luaExportedType(Point_classMember2_distance: ()),
                                    luaExportedType(Point_classMember3_count: ()),
                                    luaExportedType(Point_classMember4_origin: ())
                                ]
                            )

                            private static func luaExportedType(Point_member0_x: Void) -> LuaMember {
                                #sourceLocation(file: "Test.swift", line: 3)
                                return .property("x", get: { (object: Point) in
                                        object.x
                                    }, set: { (object: Point, value) in
                                        object.x = value
                                    })
                                #sourceLocation()
                            }

                            private static func luaExportedType(Point_classMember0_init: Void) -> LuaClassMember {
                                #sourceLocation(file: "Test.swift", line: 6)
                                return .constructor(["x"]) { (a0: Double) -> Point? in
                                    Point(x: a0)
                                }
                                #sourceLocation()
                            }

                            private static func luaExportedType(Point_classMember1_parse: Void) -> LuaClassMember {
                                #sourceLocation(file: "Test.swift", line: 7)
                                return .constructor("parse", ["text"]) { (a0: String) throws -> Point in
                                    try Point(a0)
                                }
                                #sourceLocation()
                            }

                            private static func luaExportedType(Point_classMember2_distance: Void) -> LuaClassMember {
                                #sourceLocation(file: "Test.swift", line: 8)
                                return .function("distance", ["a", "b"]) { (a0: Point, a1: Point) -> Double in
                                    Point.distance(a0, a1)
                                }
                                #sourceLocation()
                            }

                            private static func luaExportedType(Point_classMember3_count: Void) -> LuaClassMember {
                                #sourceLocation(file: "Test.swift", line: 4)
                                return .property("count", get: {
                                        Point.count
                                    }, set: {
                                        Point.count = $0
                                    })
                                #sourceLocation()
                            }

                            private static func luaExportedType(Point_classMember4_origin: Void) -> LuaClassMember {
                                #sourceLocation(file: "Test.swift", line: 5)
                                return .readOnlyProperty("origin", get: {
                                        Point.origin
                                    })
                                #sourceLocation()
                            }

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
                                    luaExportedType(Playlist_member0_songs: ()),
                                    luaExportedType(Playlist_member1_callAsFunction: ())
                                ],
                                classMembers: [
                                    luaExportedType(Playlist_classMember0_init: ())
                                ]
                            )

                            private static func luaExportedType(Playlist_member0_songs: Void) -> LuaMember {
                                #sourceLocation(file: "Test.swift", line: 3)
                                return .property("songs", get: { (object: Playlist) in
                                        object.songs
                                    }, set: { (object: Playlist, value) in
                                        object.songs = value
                                    })
                                #sourceLocation()
                            }

                            private static func luaExportedType(Playlist_member1_callAsFunction: Void) -> LuaMember {
                                #sourceLocation(file: "Test.swift", line: 8)
                                return .metamethod(.method("__call", ["i"]) { (object: Playlist, a0: Int) -> String in
                                        object.callAsFunction(a0)
                                    })
                                #sourceLocation()
                            }

                            private static func luaExportedType(Playlist_classMember0_init: Void) -> LuaClassMember {
                                #sourceLocation(file: "Test.swift", line: 2)
                                return .constructor([]) { () -> Playlist in
                                    Playlist()
                                }
                                #sourceLocation()
                            }

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
                                    luaExportedType(Square_member0_area: ()),
                                    luaExportedType(Square_member1_side: ())
                                ],
                                classMembers: []
                            )

                            private static func luaExportedType(Square_member0_area: Void) -> LuaMember {
                                #sourceLocation(file: "Test.swift", line: 4)
                                return .method("area", []) { (object: Square) -> Double in
                                    object.area()
                                }
                                #sourceLocation()
                            }

                            private static func luaExportedType(Square_member1_side: Void) -> LuaMember {
                                #sourceLocation(file: "Test.swift", line: 3)
                                return .property("side", get: { (object: Square) in
                                        object.side
                                    }, set: { (object: Square, value) in
                                        object.side = value
                                    })
                                #sourceLocation()
                            }

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
                                    luaExportedType(Loader_member0_load: ()),
                                    luaExportedType(Loader_member1_warm: ()),
                                    luaExportedType(Loader_member2_callAsFunction: ())
                                ],
                                classMembers: [
                                    luaExportedType(Loader_classMember0_init: ()),
                                    luaExportedType(Loader_classMember1_cached: ()),
                                    luaExportedType(Loader_classMember2_ping: ())
                                ]
                            )

                            private static func luaExportedType(Loader_member0_load: Void) -> LuaMember {
                                #sourceLocation(file: "Test.swift", line: 5)
                                return .asyncMethod("load", ["path"]) { (object: Loader, a0: String) async throws -> String in
                                    try await object.load(a0)
                                }
                                #sourceLocation()
                            }

                            private static func luaExportedType(Loader_member1_warm: Void) -> LuaMember {
                                #sourceLocation(file: "Test.swift", line: 6)
                                return .asyncMethod("warm", []) { (object: Loader) async -> Void in
                                    await object.warm()
                                }
                                #sourceLocation()
                            }

                            private static func luaExportedType(Loader_member2_callAsFunction: Void) -> LuaMember {
                                #sourceLocation(file: "Test.swift", line: 7)
                                return .metamethod(.asyncMethod("__call", ["path"]) { (object: Loader, a0: String) async -> Int in
                                        await object.callAsFunction(a0)
                                    })
                                #sourceLocation()
                            }

                            private static func luaExportedType(Loader_classMember0_init: Void) -> LuaClassMember {
                                #sourceLocation(file: "Test.swift", line: 3)
                                return .asyncConstructor(["root"]) { (a0: String) async throws -> Loader in
                                    try await Loader(root: a0)
                                }
                                #sourceLocation()
                            }

                            private static func luaExportedType(Loader_classMember1_cached: Void) -> LuaClassMember {
                                #sourceLocation(file: "Test.swift", line: 4)
                                return .asyncConstructor("cached", ["cache"]) { (a0: Int) async -> Loader in
                                    await Loader(cache: a0)
                                }
                                #sourceLocation()
                            }

                            private static func luaExportedType(Loader_classMember2_ping: Void) -> LuaClassMember {
                                #sourceLocation(file: "Test.swift", line: 8)
                                return .asyncFunction("ping", []) { () async -> Bool in
                                    await Loader.ping()
                                }
                                #sourceLocation()
                            }

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
                                    luaExportedType(Stepper_member0_advance: ())
                                ],
                                classMembers: [
                                    luaExportedType(Stepper_classMember0_init: ()),
                                    luaExportedType(Stepper_classMember1_make: ()),
                                    luaExportedType(Stepper_classMember2_unit: ())
                                ]
                            )

                            private static func luaExportedType(Stepper_member0_advance: Void) -> LuaMember {
                                #sourceLocation(file: "Test.swift", line: 5)
                                return .method("advance", ["count", "times", "label", "note"]) { (object: Stepper, a0: Int?, a1: Int?, a2: String?, a3: String?) -> Void in
                                    object.advance(by: a0 ?? 1, times: a1 ?? (2 * 3), label: a2, note: a3 ?? "x")
                                }
                                #sourceLocation()
                            }

                            private static func luaExportedType(Stepper_classMember0_init: Void) -> LuaClassMember {
                                #sourceLocation(file: "Test.swift", line: 4)
                                return .constructor(["start", "step"]) { (a0: Int?, a1: Int?) -> Stepper in
                                    Stepper(start: a0 ?? 0, step: a1 ?? Stepper.unit)
                                }
                                #sourceLocation()
                            }

                            private static func luaExportedType(Stepper_classMember1_make: Void) -> LuaClassMember {
                                #sourceLocation(file: "Test.swift", line: 6)
                                return .function("make", ["start"]) { (a0: Int?) -> Int in
                                    Stepper.make(a0 ?? .zero)
                                }
                                #sourceLocation()
                            }

                            private static func luaExportedType(Stepper_classMember2_unit: Void) -> LuaClassMember {
                                #sourceLocation(file: "Test.swift", line: 3)
                                return .readOnlyProperty("unit", get: {
                                        Stepper.unit
                                    })
                                #sourceLocation()
                            }

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
