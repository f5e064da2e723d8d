import Testing
import BlocksBridgeExport

enum Mode: String, CaseIterable, LuaEnum {
    case eco, comfort, boost
}

enum Level: Int, LuaEnum {
    case low = 1, high = 2
}

@LuaExport
final class Heater: LuaExportable {
    var mode = Mode.eco
    var level = Level.low
    init() {}
    func set(_ mode: Mode, level: Level?) -> String {
        self.mode = mode
        if let level { self.level = level }
        return "\(mode.rawValue)/\(self.level.rawValue)"
    }
    func modes() -> [Mode] { Mode.allCases }
}

@Suite struct ExportedEnumTests {
    private func state() throws -> LuaState {
        let lua = try LuaState()
        try lua.register(Heater.self)
        try lua.register(Mode.self)
        try lua.setGlobal("h", Heater())
        return lua
    }

    @Test func enumsCrossAsRawValues() throws {
        let lua = try state()
        #expect(try lua.run("return h:set('boost', 2)", as: String.self) == "boost/2")
        #expect(try lua.run("return h.mode .. h.level", as: String.self) == "boost2")
        #expect(try lua.run("h.mode = 'comfort'; return h.mode", as: String.self) == "comfort")
        #expect(try lua.run("return table.concat(h:modes(), ',')", as: String.self) == "eco,comfort,boost")
        #expect(try lua.run("return 'eco'", as: Mode.self) == .eco)
    }

    @Test func caseIterableEnumsExposeTheirCases() throws {
        let lua = try state()
        #expect(try lua.run("return Mode.boost", as: String.self) == "boost")
        #expect(try lua.run("return h:set(Mode.comfort, nil)", as: String.self) == "comfort/1")
    }

    @Test func aWrongRawValueListsTheValidOnes() throws {
        let lua = try state()
        #expect(luaError(lua, "h:set('turbo', nil)")
                == "t:1: bad argument #1 to 'set' (invalid value 'turbo' for Mode; expected 'eco', 'comfort', 'boost')")
        #expect(luaError(lua, "h:set('eco', 3)") == "t:1: bad argument #2 to 'set' (invalid value 3 for Level)")
        #expect(luaError(lua, "h:set(1, nil)") == "t:1: bad argument #1 to 'set' (invalid value '1' for Mode; expected 'eco', 'comfort', 'boost')")
        #expect(luaError(lua, "h:set({}, nil)") == "t:1: bad argument #1 to 'set' (string expected, got table)")
        #expect(luaError(lua, "h.mode = 'turbo'") == "t:1: bad value for field 'mode' of Heater (invalid value 'turbo' for Mode; expected 'eco', 'comfort', 'boost')")
    }
}
