import CLua
import CLuaShim

/// `require "bk"` from the stock `lua5.4` interpreter: bk.so's `luaopen_bk` (C, in CLuaShim) calls
/// this to build the module in a state the bridge did not create.
///
/// The bridge state borrowing the interpreter's `lua_State` is kept alive by a userdata in the
/// registry; its `__gc` (run by `lua_close`) releases it. It is made before any other bridge object,
/// so it is finalized after them.
enum LuaModuleEntry {
    static let anchorKey = "bk.hostState"
    static let anchorMetatable = "bk.HostState"

    static func open(_ L: OpaquePointer) -> Int32 {
        let main = bk_mainthread(L) ?? L
        guard let runtime = runtimeOf(main) ?? anchor(main) else {
            lua_pushstring(L, "bk: cannot create the bridge state")
            return -1
        }
        // Swift runs until this returns; then the interpreter's Lua code (depth 0) goes on.
        runtime.pointee.swift_depth = 1
        BKModule.pushModule(on: LuaStack(L, runtime))
        runtime.pointee.swift_depth = 0
        return 1
    }

    /// The runtime of a bridge state already anchored in this `lua_State` (a second `require` after
    /// `package.loaded.bk = nil`), so one state never gets two bridges.
    private static func runtimeOf(_ main: OpaquePointer) -> UnsafeMutablePointer<bk_runtime>? {
        guard let slot = anchoredSlot(main), let object = slot.pointee else { return nil }
        return (object.takeUnretainedValue() as? LuaState)?.runtime
    }

    private static func anchoredSlot(_ main: OpaquePointer) -> UnsafeMutablePointer<Unmanaged<AnyObject>?>? {
        defer { bk_pop(main, 1) }
        bk_rawgetfield(main, LuaStack.registryIndex, anchorKey)
        return slot(main, -1)
    }

    /// The slot of the anchor userdata at `index`, checked by size and metatable identity (a
    /// script with `debug` can put any value in the registry or call the anchor's `__gc`).
    static func slot(_ L: OpaquePointer, _ index: Int32) -> UnsafeMutablePointer<Unmanaged<AnyObject>?>? {
        guard lua_type(L, index) == LUA_TUSERDATA,
              lua_rawlen(L, index) == MemoryLayout<Unmanaged<AnyObject>?>.size,
              let block = lua_touserdata(L, index), lua_getmetatable(L, index) != 0 else { return nil }
        let isAnchor = bk_getmetatable_named(L, anchorMetatable) == LUA_TTABLE && lua_rawequal(L, -1, -2) != 0
        bk_pop(L, 2)
        return isAnchor ? block.assumingMemoryBound(to: Unmanaged<AnyObject>?.self) : nil
    }

    /// Makes the borrowing state and anchors it in the registry.
    private static func anchor(_ main: OpaquePointer) -> UnsafeMutablePointer<bk_runtime>? {
        // The allocator first: every allocation below is made by Swift and must not fail.
        let storage = LuaRuntimeStorage()
        bk_adopt_allocator(main, storage.pointer)
        storage.pointer.pointee.swift_depth = 1
        guard let block = lua_newuserdatauv(main, MemoryLayout<Unmanaged<AnyObject>?>.size, 0) else {
            return nil
        }
        let slot = block.bindMemory(to: Unmanaged<AnyObject>?.self, capacity: 1)
        slot.initialize(to: nil)
        if luaL_newmetatable(main, anchorMetatable) != 0 {
            bk_pushcfunction(main, releaseAnchor)
            bk_rawsetfield(main, -2, "__gc")
        }
        lua_setmetatable(main, -2)
        bk_rawsetfield(main, LuaStack.registryIndex, anchorKey)
        // The userdata (with its __gc) exists before the state's own objects: finalized last.
        let state = LuaState(borrowing: main, storage: storage)
        slot.pointee = Unmanaged.passRetained(state as AnyObject)
        // The interpreter runs Lua on this thread without going through the bridge's entry points,
        // so this thread holds the state from now on, as bklua's does while it runs: background
        // blocks enter Lua only while the loop sleeps (`bk.run`). It is never given back, not even
        // by lua_close, so no worker can enter a state being closed.
        state.lock.lock()
        return state.runtime
    }
}

/// `__gc` of the anchor: releases the borrowing state when the interpreter closes. Checks that 1
/// is the anchor (a script with `debug` can call this function with any value).
private func releaseAnchor(_ L: OpaquePointer?) -> Int32 {
    guard let L, let slot = LuaModuleEntry.slot(L, 1) else { return 0 }
    guard let object = slot.pointee else { return 0 }
    slot.pointee = nil
    let state = object.takeUnretainedValue() as? LuaState
    // The interpreter does not run the loop after the script (bklua does): never drop work silently.
    if let pending = state?.existingExtensionObject(EventLoop.self)?.pendingCount, pending > 0 {
        StandardStreams.writeError(
            "bk: \(pending) pending " + (pending == 1 ? "block, timer or worker" : "blocks, timers or workers") + " dropped "
            + "as Lua closes: call bk.run() at the end of the script to run them\n")
    }
    // Finalizers that run after this one (of objects made before `require "bk"`) must not reach
    // the released state: every bk function refuses from now on.
    state?.runtimeStorage.advance(to: .closing)
    object.release()
    return 0
}

@_cdecl("bk_open_module")
func openModule(_ L: OpaquePointer?) -> Int32 {
    guard let L else { return -1 }
    return LuaModuleEntry.open(L)
}
