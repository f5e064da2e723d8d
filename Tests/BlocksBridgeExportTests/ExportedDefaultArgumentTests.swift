import Testing
import BlocksBridgeExport

/// Parameters with Swift default values: a Lua call that omits them (or passes nil) gets the default.
@LuaExport
final class Stepper: LuaExportable {
    static let unit = 1
    var value: Int
    @LuaReadOnly var step: Int
    init(start: Int = 10, step: Int = Stepper.unit) {
        value = start
        self.step = step
    }
    func advance(by count: Int = 1, times: Int = 2 * 3, label: String? = "default") -> String {
        value += count * step * times
        return "\(label ?? "nil"):\(value)"
    }
    static func make(_ start: Int = .zero, step: Int = 5) -> Stepper { Stepper(start: start, step: step) }
}

@Suite struct ExportedDefaultArgumentTests {
    private func state() throws -> LuaState {
        let lua = try LuaState()
        try lua.register(Stepper.self)
        return lua
    }

    @Test func omittedTrailingArgumentsTakeTheSwiftDefaults() throws {
        let lua = try state()
        #expect(try lua.run("return Stepper(0):advance()", as: String.self) == "default:6")
        #expect(try lua.run("return Stepper(0):advance(2)", as: String.self) == "default:12")
        #expect(try lua.run("return Stepper(0):advance(2, 1)", as: String.self) == "default:2")
        #expect(try lua.run("return Stepper(0):advance(2, 1, 'x')", as: String.self) == "x:2")
    }

    @Test func nilTakesTheDefaultAsAnOmittedArgumentDoes() throws {
        let lua = try state()
        // As in Lua's own libraries (luaL_opt*), nil means "not given", also for an optional parameter.
        #expect(try lua.run("return Stepper(0):advance(nil, 1, nil)", as: String.self) == "default:1")
    }

    @Test func constructorsAndStaticFunctionsTakeDefaultsToo() throws {
        let lua = try state()
        #expect(try lua.run("local s = Stepper(); return s.value * 100 + s.step", as: Int.self) == 1001)
        #expect(try lua.run("local s = Stepper.new(3); return s.value * 100 + s.step", as: Int.self) == 301)
        #expect(try lua.run("local s = Stepper.make(); return s.value * 100 + s.step", as: Int.self) == 5)
        #expect(try lua.run("local s = Stepper.make(2, 3); return s.value * 100 + s.step", as: Int.self) == 203)
    }

    @Test func aGivenArgumentOfTheWrongTypeIsStillAnError() throws {
        let lua = try state()
        #expect(luaError(lua, "Stepper():advance('x')") == "t:1: bad argument #1 to 'advance' (number expected, got string)")
        #expect(luaError(lua, "Stepper(1, {})") == "t:1: bad argument #2 to 'Stepper' (number expected, got table)")
    }

    @Test func annotationsMarkDefaultedParametersOptional() throws {
        let lua = try state()
        let text = lua.annotations()
        #expect(text.contains("---@param count? integer\n---@param times? integer\n---@param label? string\n---@return string\nfunction Stepper:advance(count, times, label) end"))
    }
}
