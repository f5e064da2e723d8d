import Testing
import BlocksBridgeExport

struct ParseFailure: Error, CustomStringConvertible {
    let text: String
    var description: String { "cannot parse '\(text)'" }
}

/// Failable and throwing initializers, named initializers, static functions that throw, and
/// Swift closures handed back to Lua.
@LuaExport
final class Temperature: LuaExportable {
    let kelvin: Double
    init?(kelvin: Double) {
        guard kelvin >= 0 else { return nil }
        self.kelvin = kelvin
    }
    @LuaName("parse") init(_ text: String) throws {
        guard let value = Double(text) else { throw ParseFailure(text: text) }
        kelvin = value
    }
    static func absoluteZero() -> Temperature? { Temperature(kelvin: 0) }
    static func checked(_ kelvin: Double) throws -> Double {
        if kelvin < 0 { throw ParseFailure(text: "\(kelvin)") }
        return kelvin
    }
    func offset(by delta: Double) -> LuaClosure {
        let kelvin = kelvin
        return LuaClosure { (x: Double) in x + kelvin + delta }
    }
}

@Suite struct ExportedInitializerTests {
    private func state() throws -> LuaState {
        let lua = try LuaState()
        try lua.register(Temperature.self)
        return lua
    }

    @Test func failableInitializersReturnNil() throws {
        let lua = try state()
        #expect(try lua.run("return Temperature(10).kelvin", as: Double.self) == 10)
        #expect(try lua.run("return Temperature.new(-1) == nil", as: Bool.self))
    }

    @Test func throwingNamedInitializers() throws {
        let lua = try state()
        #expect(try lua.run("return Temperature.parse('273.15').kelvin", as: Double.self) == 273.15)
        #expect(luaError(lua, "Temperature.parse('warm')") == "t:1: cannot parse 'warm'")
        #expect(luaError(lua, "Temperature.parse()") == "t:1: bad argument #1 to 'parse' (string expected, got no value)")
    }

    @Test func staticFunctions() throws {
        let lua = try state()
        #expect(try lua.run("return Temperature.absoluteZero().kelvin", as: Double.self) == 0)
        #expect(try lua.run("return Temperature.checked(5)", as: Double.self) == 5)
        #expect(luaError(lua, "Temperature.checked(-5)") == "t:1: cannot parse '-5.0'")
        #expect(luaError(lua, "Temperature.checked('x')") == "t:1: bad argument #1 to 'checked' (number expected, got string)")
    }

    @Test func swiftClosuresAsResults() throws {
        let lua = try state()
        #expect(try lua.run("local f = Temperature(10):offset(1) return f(100)", as: Double.self) == 111)
        #expect(luaError(lua, "Temperature(10):offset(1)('x')") == "t:1: bad argument #1 to '?' (number expected, got string)")
    }
}
