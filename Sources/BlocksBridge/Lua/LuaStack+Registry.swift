import CLua
import CLuaShim

/// The registry operations behind `RegistrySlot` and `LuaRef`: raw, and raising nothing (an
/// allocation may run finalizers, as any push does).
extension LuaStack {
    /// Pops the value on top into a new registry slot (`LUA_REFNIL` for nil).
    func popIntoRegistry() -> Int32 {
        luaL_ref(L, bk_registryindex())
    }

    /// Pushes the value of registry slot `id` (nil for `LUA_REFNIL`).
    func pushRegistryValue(_ id: Int32) {
        _ = lua_rawgeti(L, bk_registryindex(), lua_Integer(id))
    }

    /// Frees registry slot `id` for reuse (nothing for a negative id).
    func freeRegistrySlot(_ id: Int32) {
        luaL_unref(L, bk_registryindex(), id)
    }
}

extension LuaStack {
    /// Pushes `registry[key]` (a light userdata key, raw) and returns its type.
    func rawGetRegistry(key: UnsafeRawPointer) -> LuaType {
        LuaType(rawValue: lua_rawgetp(L, bk_registryindex(), key)) ?? .none
    }

    /// Pops the value on top into `registry[key]` (raw).
    func rawSetRegistry(key: UnsafeRawPointer) {
        lua_rawsetp(L, bk_registryindex(), key)
    }

    /// Pushes a new Lua thread and returns it (nil when none could be made).
    func pushNewThread() -> OpaquePointer? {
        lua_newthread(L)
    }
}
