import Testing
import BlocksBridgeExport

@LuaExport
class Shape: LuaExportable {
    var name: String
    init(name: String) { self.name = name }
    func area() -> Double { 0 }
    func describe() -> String { "\(name) of area \(area())" }
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
}
