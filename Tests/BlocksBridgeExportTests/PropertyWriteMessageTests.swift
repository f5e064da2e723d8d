import Testing
import BlocksBridgeExport

/// Properties whose values convert element by element, field by field or case by case: a write
/// that fails says why, as the same value passed as an argument does.
@LuaExport
final class Labelled: LuaExportable {
    var tags: [String] = []
    var groups: [[String]] = []
    var modes: [Mode] = []
    var modeByName: [String: Mode] = [:]
    var level = Level.low
    @LuaObserved("mode") var mode = Mode.eco
    nonisolated(unsafe) static var defaultMode = Mode.eco
    init() {}
    func setTags(_ tags: [String]) { self.tags = tags }
}

@Suite struct PropertyWriteMessageTests {
    private func state() throws -> LuaState {
        let lua = try LuaState()
        try lua.register(Labelled.self)
        try lua.register(Server.self)
        try lua.setGlobal("l", Labelled())
        try lua.setGlobal("server", Server())
        return lua
    }

    @Test func aListElementIsNamedByItsPlace() throws {
        let lua = try state()
        #expect(luaError(lua, "l.tags = {'a', {}}") == "t:1: bad value for field 'tags' of Labelled (string expected at [2], got table)")
        #expect(luaError(lua, "l:setTags{'a', {}}") == "t:1: bad argument #1 to 'setTags' (string expected at [2], got table)")
        #expect(luaError(lua, "l.groups = {{'a'}, {'b', {}}}")
                == "t:1: bad value for field 'groups' of Labelled (element [2]: string expected at [2], got table)")
    }

    @Test func anEnumWriteListsTheValidValues() throws {
        let lua = try state()
        #expect(luaError(lua, "l.level = 3") == "t:1: bad value for field 'level' of Labelled (invalid value 3 for Level)")
        #expect(luaError(lua, "l.mode = 'turbo'")
                == "t:1: bad value for field 'mode' of Labelled (invalid value 'turbo' for Mode; expected 'eco', 'comfort', 'boost')")
        #expect(luaError(lua, "Labelled.defaultMode = 'turbo'")
                == "t:1: bad value for field 'defaultMode' (invalid value 'turbo' for Mode; expected 'eco', 'comfort', 'boost')")
        #expect(luaError(lua, "l.modes = {'eco', 'turbo'}")
                == "t:1: bad value for field 'modes' of Labelled (element [2]: invalid value 'turbo' for Mode; expected 'eco', 'comfort', 'boost')")
        #expect(luaError(lua, "l.modeByName = {a = 'turbo'}")
                == "t:1: bad value for field 'modeByName' of Labelled (a value: invalid value 'turbo' for Mode; expected 'eco', 'comfort', 'boost')")
        #expect(luaError(lua, "l.level = 'x'") == "t:1: bad value for field 'level' of Labelled (number expected, got string)")
    }

    @Test func aCodableWriteNamesTheFieldsPath() throws {
        let lua = try state()
        #expect(luaError(lua, "server.config = {host = 'h', ports = {80, 'x'}}")
                == "t:1: bad value for field 'config' of Server (field 'ports[2]': number expected, got string)")
        #expect(luaError(lua, "server:configure{host = 'h', ports = {80, 'x'}}")
                == "t:1: bad argument #1 to 'configure' (field 'ports[2]': number expected, got string)")
    }

    /// "X expected, got X" says nothing: no failed write or call of these reads that way.
    @Test func noMessageReadsExpectedWhatItGot() throws {
        let lua = try state()
        let writes = [
            "l.tags = {'a', {}}", "l.tags = {1, true}", "l.groups = {{'a'}, {{}}}", "l.groups = {'x'}",
            "l.modes = {'turbo'}", "l.modes = {{}}", "l.modeByName = {a = 'turbo'}", "l.modeByName = {[{}] = 'eco'}",
            "l.level = 3", "l.level = 'x'", "l.mode = 'turbo'", "l.mode = 1", "Labelled.defaultMode = 'turbo'",
            "server.config = {host = 'h', ports = {80, 'x'}}", "server.config = {host = {}}", "server.config = {}",
            "l:setTags{'a', {}}", "l:setTags{{}}", "server:configure{host = {}, ports = {}}",
        ]
        for code in writes {
            let message = try #require(luaError(lua, code), "\(code) raised nothing")
            #expect(!readsExpectedWhatItGot(message), "\(code): \(message)")
        }
    }

    private func readsExpectedWhatItGot(_ message: String) -> Bool {
        // "(table expected, got table)", "string expected at [2], got string"
        let words = message.split(whereSeparator: { $0 == " " || $0 == "(" || $0 == ")" || $0 == "," })
        for (i, word) in words.enumerated() where word == "expected" && i > 0 {
            var j = i + 1
            while j < words.count, words[j] != "got" { j += 1 }
            if j + 1 < words.count, words[j + 1] == words[i - 1] { return true }
        }
        return false
    }
}
