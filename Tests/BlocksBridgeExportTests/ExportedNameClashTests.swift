import Testing
import BlocksBridgeExport

/// Two exported classes with one Swift name, as two modules would each declare an `Item`.
enum CoreKit {
    @LuaExport
    final class Item: LuaExportable {
        init() {}
        func whoAmI() -> String { "core" }
        func take(_ other: Item) -> String { "core took " + other.whoAmI() }
    }
}

enum MetaKit {
    @LuaExport
    final class Item: LuaExportable {
        init() {}
        func whoAmI() -> String { "meta" }
        func takeCore(_ other: CoreKit.Item) -> String { "meta took " + other.whoAmI() }
    }
}

@Suite struct ExportedNameClashTests {
    private func state() throws -> LuaState {
        let lua = try LuaState()
        try lua.register(CoreKit.Item.self, as: "CoreItem")
        try lua.register(MetaKit.Item.self, as: "MetaItem")
        return lua
    }

    @Test func twoClassesOfOneNameKeepTheirOwnMetatables() throws {
        let lua = try state()
        #expect(try lua.run("return CoreItem():whoAmI()", as: String.self) == "core")
        #expect(try lua.run("return MetaItem():whoAmI()", as: String.self) == "meta")
        #expect(try lua.run("return CoreItem():whoAmI()", as: String.self) == "core")
        #expect(try lua.run("return CoreItem():take(CoreItem())", as: String.self) == "core took core")
        #expect(try lua.run("return MetaItem():takeCore(CoreItem())", as: String.self) == "meta took core")
    }

    /// Once both have a metatable, messages name each class with its module and namespace.
    @Test func messagesTellThemApart() throws {
        let lua = try state()
        _ = try lua.run("core, meta = CoreItem(), MetaItem()")
        let core = "BlocksBridgeExportTests.CoreKit.Item", meta = "BlocksBridgeExportTests.MetaKit.Item"
        #expect(luaError(lua, "core.whoAmI(meta)") == "t:1: bad argument #1 to 'whoAmI' (\(core) expected, got \(meta))")
        #expect(luaError(lua, "core:take(meta)") == "t:1: bad argument #1 to 'take' (\(core) expected, got \(meta))")
        #expect(luaError(lua, "meta:takeCore(meta)") == "t:1: bad argument #1 to 'takeCore' (\(core) expected, got \(meta))")
        #expect(try lua.run("return tostring(core):match('^(.-):')", as: String.self) == core)
    }

    /// While only one class of the name has a metatable, messages keep the short name.
    @Test func aNameUsedOnceStaysShort() throws {
        let lua = try state()
        _ = try lua.run("core = CoreItem()")
        #expect(luaError(lua, "core.whoAmI({})") == "t:1: bad argument #1 to 'whoAmI' (Item expected, got table)")
    }

    /// Each state decides for itself: a clash in one state leaves another's names short.
    @Test func namesArePerState() throws {
        let clashing = try state()
        _ = try clashing.run("core, meta = CoreItem(), MetaItem()")
        let other = try LuaState()
        try other.register(MetaKit.Item.self)
        #expect(luaError(other, "Item().whoAmI(42)") == "t:1: bad argument #1 to 'whoAmI' (Item expected, got number)")
    }

    /// Annotations name both classes qualified when both are written, short otherwise.
    @Test func annotationsTellThemApart() throws {
        let text = try state().annotations()
        #expect(text.contains("---@class BlocksBridgeExportTests.CoreKit.Item\n"))
        #expect(text.contains("---@class BlocksBridgeExportTests.MetaKit.Item\n"))
        #expect(text.contains("---@param other BlocksBridgeExportTests.CoreKit.Item\n---@return string\nfunction __BlocksBridgeExportTests_MetaKit_Item:takeCore(other) end"))
        #expect(text.contains("---@overload fun(): BlocksBridgeExportTests.MetaKit.Item\nMetaItem = {}"))
        let one = try LuaState()
        try one.register(CoreKit.Item.self)
        let short = one.annotations()
        #expect(short.contains("---@class Item\n"))
        #expect(short.contains("---@param other Item\n---@return string\nfunction Item:take(other) end"))
    }
}
