import Testing
import BlocksBridgeExport

/// A Codable value whose `init(from:)` counts its runs: annotations describe it by decoding it
/// from placeholders, which must not happen before `annotations()` is asked for.
struct Probe: LuaCodable {
    nonisolated(unsafe) static var decodes = 0
    var tag: String
    init(from decoder: any Decoder) throws {
        Probe.decodes += 1
        let container = try decoder.container(keyedBy: CodingKeys.self)
        tag = try container.decode(String.self, forKey: .tag)
    }
}

@LuaExport
final class Prober: LuaExportable {
    init() {}
    func look(_ probe: Probe) -> String { probe.tag }
}

/// Scripts attacking what the name-clash and annotation work changed: forged and swapped
/// metatables, a tampered registry, keyword names; hosts passing functions to LuaClosure parameters.
@Suite struct ExportedHostileTests {
    private func state() throws -> LuaState {
        let lua = try LuaState()
        try lua.register(CoreKit.Item.self, as: "CoreItem")
        try lua.register(MetaKit.Item.self, as: "MetaItem")
        _ = try lua.run("core, meta = CoreItem(), MetaItem()")
        return lua
    }

    /// A table or another class's userdata given an Item's real metatable is still no Item.
    @Test func forgedAndSwappedMetatablesAreRefused() throws {
        let lua = try state()
        let core = "BlocksBridgeExportTests.CoreKit.Item"
        #expect(luaError(lua, "local t = debug.setmetatable({}, debug.getmetatable(core)); return t:whoAmI()")
                == "t:1: calling 'whoAmI' on bad self (\(core) expected, got a table named \(core) that is not one)")
        // meta now looks like a CoreItem to Lua, but its memory holds a MetaKit.Item.
        let swapped = luaError(lua, "debug.setmetatable(meta, debug.getmetatable(core)); return meta:whoAmI()")
        #expect(swapped == "t:1: calling 'whoAmI' on bad self (\(core) expected, got a userdata named \(core) that is not one)")
        #expect(luaError(lua, "return core.whoAmI(io.stdout)")
                == "t:1: bad argument #1 to 'whoAmI' (\(core) expected, got FILE*)")
        #expect(try lua.run("return core:whoAmI()", as: String.self) == "core")
    }

    /// The registry's class keys and name table are a script's to break (`debug.getregistry`);
    /// the bridge then makes new metatables or keeps short names, and never crashes.
    @Test func aTamperedRegistryIsSurvived() throws {
        let lua = try state()
        _ = try lua.run("""
            local registry = debug.getregistry()
            registry['bk.classnames'] = 42
            registry['bk.class BlocksBridgeExportTests.CoreKit.Item'] = 'not a metatable'
            """)
        #expect(try lua.run("return CoreItem():whoAmI() .. core:whoAmI() .. meta:whoAmI()", as: String.self)
                == "corecoremeta")
        #expect(try lua.run("return core:take(CoreItem())", as: String.self) == "core took core")
        _ = try lua.run("debug.getregistry()['bk.classnames'] = {Item = {}}")
        #expect(try lua.run("return MetaItem():takeCore(CoreItem())", as: String.self) == "meta took core")
        #expect(luaError(lua, "return meta:takeCore(meta)")?.hasPrefix("t:1: bad argument #1 to 'takeCore'") == true)
    }

    /// Globals, enums and members named like Lua keywords (or not names at all) still give a
    /// file that loads and runs.
    @Test func keywordGlobalsGiveValidAnnotations() throws {
        let lua = try LuaState()
        try lua.register(Gadget.self, as: "end")
        try lua.register(Mode.self, as: "not")
        try lua.register(Counter.self, as: "a b")
        let text = lua.annotations()
        #expect(text.contains("_G[\"end\"] = {}"))
        #expect(text.contains("_G[\"a b\"] = {}"))
        let fresh = try LuaState()
        try fresh.setGlobal("annotations", text)
        #expect(try fresh.run("return select(2, pcall(assert(load(annotations, '=a'))))", as: String?.self) == nil)
    }

    /// A hand-written function taking a LuaClosure says why a Lua function is refused.
    @Test func aLuaClosureParameterSaysToTakeALuaRef() throws {
        let lua = try LuaState()
        lua.register("take") { (_: LuaClosure) in }
        #expect(luaError(lua, "take(function() end)")
                == "t:1: bad argument #1 to 'take' (a Lua function cannot become a LuaClosure (the Swift side takes a LuaRef))")
        #expect(luaError(lua, "take(42)") == "t:1: bad argument #1 to 'take' (function expected, got number)")
    }

    /// Registering and using a class runs no Codable parameter's `init(from:)`; `annotations()` does.
    @Test func codableFieldsAreFoundOnlyForAnnotations() throws {
        let lua = try LuaState()
        let before = Probe.decodes
        try lua.register(Prober.self)
        _ = try lua.run("assert(Prober():look({tag = 'x'}) == 'x')")
        #expect(Probe.decodes == before + 1)  // the call's own decode
        let text = lua.annotations()
        #expect(text.contains("---@class Probe\n---@field tag string\n"))
        #expect(Probe.decodes == before + 2)
    }
}
