import Testing
import BlocksBridgeExport

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

    @Test func describesClassesMembersAndEnums() throws {
        let text = try state().annotations()
        #expect(text.hasPrefix("---@meta\n"))
        let expected = [
            "---@class Counter",
            "---@field count integer",
            "---@field name string read-only",
            "---@field history integer[]",
            "---@field created integer",
            "---@overload fun(name: string): Counter",
            "Counter = {}",
            "---@param amount? integer\n---@return integer\nfunction Counter:increment(amount) end",
            "---@param prefix? string\n---@param values table<string, integer>\n---@return string\nfunction Counter:describe(prefix, values) end",
            "---@param other Counter\n---@return Counter\nfunction Counter:merge(other) end",
            "function Counter:reset() end",
            "---@param name string\n---@param count integer\n---@return Counter\nfunction Counter.withCount(name, count) end",
            "---@class Shape\n",
            "local Shape = {}",
            "---@field corners integer read-only",
            "---@param name string\n---@return Shape\nfunction Shape.named(name) end",
            "---@class Square: Shape",
            "---@param mode \"eco\"|\"comfort\"|\"boost\"\n---@param level? integer\n---@return string\nfunction Heater:set(mode, level) end",
            "---@enum Mode\nMode = {\n    eco = \"eco\",\n    comfort = \"comfort\",\n    boost = \"boost\",\n}",
            "---@operator call(integer): string?",
        ]
        for fragment in expected {
            #expect(text.contains(fragment), "missing: \(fragment)")
        }
        #expect(!text.contains("secret"))
    }

    /// Every method, static function and field the annotations name exists in Lua.
    @Test func matchesTheLiveExports() throws {
        let lua = try state()
        _ = try lua.run("""
            samples = {Counter = Counter('c'), Shape = Square(1), Square = Square(2), Heater = Heater(),
                       Playlist = Playlist({'a'})}
            Shape = Square  -- Shape is no global: its statics are reached through its subclass's class table
            """)
        var currentClass: String?
        var checked = 0
        for line in lua.annotations().split(separator: "\n").map(String.init) {
            if line.hasPrefix("---@class ") {
                currentClass = String(line.dropFirst(10).split(separator: ":")[0])
            } else if line.hasPrefix("---@field "), let cls = currentClass {
                let field = line.dropFirst(10).split(separator: " ")[0]
                let code = "local o = samples.\(cls) return o.\(field) ~= nil or \(cls).\(field) ~= nil"
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
    }
}
