import Testing
import BlocksBridgeExport

/// Members whose names are Lua keywords: the annotations must still be a valid Lua file.
@LuaExport
final class Gadget: LuaExportable {
    init() {}
    func apply(_ function: LuaRef, _ x: Int) throws -> Int { try function.call(x, as: Int.self) }
    func span(_ then: Int, _ until: Int, end: Int, local: Int) -> Int { until - then + end + local }
    func `repeat`(_ times: Int) -> Int { times * 2 }
    var end = 1
}

@Suite struct AnnotationTests {
    private func state() throws -> LuaState {
        let lua = try LuaState()
        try lua.register(Counter.self)
        try lua.register(Square.self)
        try lua.register(Heater.self)
        try lua.register(Mode.self)
        try lua.register(Playlist.self)
        return lua
    }

    /// Every exported class of these tests, and both enums' tables.
    private func everything() throws -> LuaState {
        let lua = try LuaState()
        try lua.register(Counter.self)
        try lua.register(Square.self)
        try lua.register(Circle.self)
        try lua.register(Heater.self)
        try lua.register(Mode.self)
        try lua.register(Playlist.self)
        try lua.register(Version.self)
        try lua.register(Fetcher.self)
        try lua.register(FileSource.self)
        try lua.register(Server.self)
        try lua.register(Stepper.self)
        try lua.register(Temperature.self)
        try lua.register(Person.self)
        try lua.register(Gadget.self)
        try lua.register(CoreKit.Item.self, as: "CoreItem")
        try lua.register(MetaKit.Item.self, as: "MetaItem")
        try lua.register(Mode.self, as: "my-modes")
        return lua
    }

    /// The error of loading and running `text` in a fresh state, nil when it loads and runs.
    private func loadError(_ text: String) throws -> String? {
        let lua = try LuaState()
        try lua.setGlobal("annotations", text)
        return try lua.run("""
            local chunk, err = load(annotations, '=annotations', 't')
            if not chunk then return err end
            local ok, runErr = pcall(chunk)
            return not ok and tostring(runErr) or nil
            """, as: String?.self)
    }

    @Test func theFileOfEveryExportedTypeIsValidLua() throws {
        let text = try everything().annotations()
        #expect(try loadError(text) == nil, "\(text)")
        // Each class alone too (a superclass without a global, a class without statics, ...).
        let registrations: [(LuaState) throws -> Void] = [
            { try $0.register(Counter.self) }, { try $0.register(Square.self) }, { try $0.register(Circle.self) },
            { try $0.register(Heater.self) }, { try $0.register(Playlist.self) }, { try $0.register(Version.self) },
            { try $0.register(Fetcher.self) }, { try $0.register(FileSource.self) }, { try $0.register(Server.self) },
            { try $0.register(Stepper.self) }, { try $0.register(Temperature.self) }, { try $0.register(Person.self) },
            { try $0.register(Gadget.self) }, { try $0.register(CoreKit.Item.self) }, { try $0.register(Mode.self) },
        ]
        for register in registrations {
            let lua = try LuaState()
            try register(lua)
            let text = lua.annotations()
            #expect(try loadError(text) == nil, "\(text)")
        }
    }

    @Test func keywordParametersAndMembersAreRenamedOrQuoted() throws {
        let lua = try LuaState()
        try lua.register(Gadget.self)
        let text = lua.annotations()
        #expect(text.contains("---@param function_ any\n---@param x integer\n---@return integer\nfunction Gadget:apply(function_, x) end"))
        #expect(text.contains("function Gadget:span(then_, until_, end_, local_) end"))
        #expect(text.contains("---@param times integer\n---@return integer\nGadget[\"repeat\"] = function(self, times) end"))
        // The members work from Lua under their Lua names.
        #expect(try lua.run("local g = Gadget(); return g['repeat'](g, 4) + g['end']", as: Int.self) == 9)
        #expect(try lua.run("return Gadget():apply(function(x) return x + 1 end, 1)", as: Int.self) == 2)
    }

    @Test func describesClassesMembersAndEnums() throws {
        let text = try state().annotations()
        #expect(text.hasPrefix("---@meta\n"))
        let expected = [
            "---@class Counter\n",
            "---@field count integer",
            "---@field name string read-only",
            "---@field history integer[]",
            "---@overload fun(name: string): Counter",
            "Counter = {}",
            "---@param amount? integer\n---@return integer\nfunction Counter:increment(amount) end",
            "---@param prefix? string\n---@param values table<string, integer>\n---@return string\nfunction Counter:describe(prefix, values) end",
            "---@param other Counter\n---@return Counter\nfunction Counter:merge(other) end",
            "function Counter:reset() end",
            "---@param name string\n---@param count integer\n---@return Counter\nfunction Counter.withCount(name, count) end",
            "---@class Shape\n",
            "local Shape = {}",
            "---@class Square: Shape",
            "---@param name string\n---@return Shape\nfunction Square.named(name) end",
            "---@enum Mode\nMode = {\n    eco = \"eco\",\n    comfort = \"comfort\",\n    boost = \"boost\",\n}",
            "---@operator call(integer): string?",
        ]
        for fragment in expected {
            #expect(text.contains(fragment), "missing: \(fragment)")
        }
        #expect(!text.contains("secret"))
    }

    /// Statics are fields of the class table's type, not of instances.
    @Test func staticsAreOnTheClassTable() throws {
        let text = try state().annotations()
        let instance = try #require(section(text, "---@class Counter\n"))
        let classTable = try #require(section(text, "---@class Counter.class\n"))
        #expect(classTable.contains("---@field created integer"))
        #expect(classTable.contains("---@field limit integer read-only"))
        #expect(classTable.contains("---@overload fun(name: string): Counter"))
        #expect(!instance.contains("---@field created") && !instance.contains("---@field limit"))
        #expect(instance.contains("---@field count integer"))
        // A subclass's class table lists its superclass's statics; Shape (no global) has none.
        #expect(try #require(section(text, "---@class Square.class\n")).contains("---@field corners integer read-only"))
        #expect(!(try #require(section(text, "---@class Shape\n")).contains("corners")))
    }

    /// The declarations from `marker` to the next `---@class` or `---@enum`.
    private func section(_ text: String, _ marker: String) -> String? {
        guard let start = text.firstRange(of: marker) else { return nil }
        let rest = text[start.upperBound...]
        let end = [rest.firstRange(of: "---@class "), rest.firstRange(of: "---@enum ")].compactMap { $0?.lowerBound }.min()
        return String(rest[..<(end ?? rest.endIndex)])
    }

    /// What metamethods cover (`#`, `obj[i]`, `tostring`) is neither a field nor annotated.
    @Test func protocolPlumbingIsLeftOut() throws {
        let lua = try LuaState()
        try lua.register(Playlist.self)
        try lua.register(Version.self)
        let text = lua.annotations()
        #expect(!text.contains("startIndex") && !text.contains("endIndex") && !text.contains("description"))
        #expect(try lua.run("local p = Playlist({'a', 'b'}); return p.startIndex == nil and p.endIndex == nil and #p", as: Int.self) == 2)
        #expect(try lua.run("local v = Version(1, 2); return v.description == nil and tostring(v)", as: String.self) == "v1.2")
    }

    /// Enum parameters name the `---@enum`; an enum the host did not register is an alias of its values.
    @Test func enumParametersNameTheEnum() throws {
        let text = try state().annotations()
        #expect(text.contains("---@param mode Mode\n---@param level? integer\n---@return string\nfunction Heater:set(mode, level) end"))
        #expect(text.contains("---@field mode Mode"))
        #expect(!text.contains("---@alias Mode"))
        let unregistered = try LuaState()
        try unregistered.register(Heater.self)
        #expect(unregistered.annotations().contains("---@alias Mode \"eco\"|\"comfort\"|\"boost\""))
        let renamed = try LuaState()
        try renamed.register(Heater.self)
        try renamed.register(Mode.self, as: "HeaterMode")
        #expect(renamed.annotations().contains("---@enum HeaterMode\nHeaterMode = {"))
        #expect(renamed.annotations().contains("---@alias Mode HeaterMode"))
    }

    /// Codable values are classes of their fields (nested and recursive ones too).
    @Test func codableValuesAreClasses() throws {
        let lua = try LuaState()
        try lua.register(Server.self)
        let text = lua.annotations()
        #expect(text.contains("---@field config ServerConfig"))
        #expect(text.contains("---@param config ServerConfig\n"))
        #expect(text.contains("---@class ServerConfig\n---@field host string\n---@field ports integer[]\n---@field tls? TLS\n---@field weights table<string, number>\n"))
        #expect(text.contains("---@class TLS\n---@field certificate string\n---@field verify boolean\n"))
        #expect(text.contains("---@class Outline\n---@field name string\n---@field children Outline[]\n"))
        // An enum with payloads has no fields to list.
        #expect(text.contains("---@param shade table\n"))
        #expect(try loadError(text) == nil)
    }

    /// Every method, static function and field the annotations name exists in Lua, on the side
    /// (instance or class table) they name it on.
    @Test func matchesTheLiveExports() throws {
        let lua = try state()
        _ = try lua.run("""
            samples = {Counter = Counter('c'), Shape = Square(1), Square = Square(2), Heater = Heater(),
                       Playlist = Playlist({'a'})}
            """)
        var currentClass: String?
        var checked = 0
        for line in lua.annotations().split(separator: "\n").map(String.init) {
            if line.hasPrefix("---@class ") {
                currentClass = String(line.dropFirst(10).split(separator: ":")[0])
            } else if line.hasPrefix("---@field "), let cls = currentClass {
                let field = line.dropFirst(10).split(separator: " ")[0]
                let code = cls.hasSuffix(".class")
                    ? "return \(cls.dropLast(6)).\(field) ~= nil"
                    : "return samples.\(cls).\(field) ~= nil"
                #expect(try lua.run(code, as: Bool.self), "\(cls).\(field) is annotated but not exported")
                checked += 1
            } else if line.hasPrefix("function "), let open = line.firstIndex(of: "(") {
                let path = line[line.index(line.startIndex, offsetBy: 9)..<open]
                let parts = path.split(whereSeparator: { $0 == ":" || $0 == "." }).map(String.init)
                let code = path.contains(":")
                    ? "return type(samples.\(parts[0]).\(parts[1])) == 'function'"
                    : "return type(\(parts[0]).\(parts[1])) == 'function'"
                #expect(try lua.run(code, as: Bool.self), "\(path) is annotated but not exported")
                checked += 1
            }
        }
        #expect(checked > 20)
    }

    @Test func anEmptyStateHasAnEmptyMetaFile() throws {
        let text = try LuaState().annotations()
        #expect(!text.contains("---@class"))
        #expect(try loadError(text) == nil)
    }
}
