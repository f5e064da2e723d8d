import Testing
import BlocksBridgeExport

@LuaExport
class Shape: LuaExportable {
    var name: String
    init(name: String) { self.name = name }
    func area() -> Double { 0 }
    func describe() -> String { "\(name) of area \(area())" }
    class func family() -> String { "shape" }
    static func named(_ name: String) -> Shape { Shape(name: name) }
    static let corners = 0
    nonisolated(unsafe) static var made = 0
}

@LuaExport
final class Square: Shape {
    var side: Double
    init(side: Double) {
        self.side = side
        super.init(name: "square")
    }
    override func area() -> Double { side * side }
    func grow(by amount: Double) { side += amount }
    override class func family() -> String { "square" }
}

/// A subclass declaring no initializer (Swift gives it Shape's).
@LuaExport
final class Circle: Shape {
    var radius = 1.0
}

@Suite struct ExportedSubclassTests {
    @Test func subclassInstancesSeeSuperclassMembers() throws {
        let lua = try LuaState()
        try lua.register(Square.self)
        #expect(try lua.run("local s = Square(2); s:grow(1); return s:area()", as: Double.self) == 9)
        // Inherited: a property and a method of Shape, dispatched to the override.
        #expect(try lua.run("return Square(3).name", as: String.self) == "square")
        #expect(try lua.run("return Square(3):describe()", as: String.self) == "square of area 9.0")
    }

    @Test func aSubclassPassesWhereItsSuperclassIsExpected() throws {
        let lua = try LuaState()
        try lua.register(Square.self)
        lua.register("areaOf") { (shape: Shape) in shape.area() }
        #expect(try lua.run("return areaOf(Square(4))", as: Double.self) == 16)
        // Pushed through its static type Shape, a Square still gets Square's metatable.
        let shape: Shape = Square(side: 5)
        try lua.setGlobal("s", shape)
        #expect(try lua.run("s:grow(1); return s.side", as: Double.self) == 6)
        #expect(luaError(lua, "areaOf(1)") == "t:1: bad argument #1 to 'areaOf' (Shape expected, got number)")
    }

    @Test func aSuperclassIsNotItsSubclass() throws {
        let lua = try LuaState()
        try lua.register(Shape.self)
        lua.register("sideOf") { (square: Square) in square.side }
        #expect(luaError(lua, "sideOf(Shape('x'))") == "t:1: bad argument #1 to 'sideOf' (Square expected, got Shape)")
        #expect(try lua.run("return Shape('x').grow == nil", as: Bool.self))
    }

    @Test func aSubclassClassTableHasItsSuperclassStatics() throws {
        let lua = try LuaState()
        try lua.register(Square.self)  // Shape itself is no global here
        #expect(try lua.run("return Square.named('blob').name", as: String.self) == "blob")
        #expect(try lua.run("return Square.corners", as: Int.self) == 0)
        try lua.run("Square.made = 3")  // one storage, as in Swift
        #expect(Shape.made == 3)
        #expect(luaError(lua, "Square.corners = 1") == "t:1: field 'corners' of Square is read-only")
    }

    @Test func aSubclassStaticWinsOverItsSuperclassOne() throws {
        let lua = try LuaState()
        try lua.register(Shape.self)
        try lua.register(Square.self)
        #expect(try lua.run("return Square.family() .. ',' .. Shape.family()", as: String.self) == "square,shape")
    }

    @Test func constructorsAreNotInherited() throws {
        let lua = try LuaState()
        try lua.register(Circle.self)
        // Shape's constructor makes a Shape: a Circle's class table does not take it.
        #expect(try lua.run("return Circle.new == nil and Circle.named ~= nil", as: Bool.self))
    }
}
