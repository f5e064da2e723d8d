import CLua
import CLuaShim

/// Frozen tables (`Frozen.c`): read-only views that cross to other states once.
extension LuaStack {
    /// Pushes the read-only view of the table at argument `index` (checked: only data may be
    /// frozen). Throws a bad-argument error naming why it cannot be frozen; a memory error is
    /// raised as it is.
    func pushFrozenView(ofArgument index: Int32) throws(LuaRaise) {
        let index = absolute(index)
        pushNull()
        let null = top
        let status = bk_frozen_freeze(L, index, null)
        remove(at: null)
        if status == LUA_OK { return }
        if status == LUA_ERRMEM { throw .valueOnTop }
        let reason = toString(-1) ?? "cannot be frozen"
        pop()
        throw .argument(index, reason)
    }

    /// True when the value at `index` is a frozen view. Raw reads only.
    func isFrozenView(_ index: Int32) -> Bool {
        guard bk_frozen_contents(L, absolute(index)) > 0 else { return false }
        pop()
        return true
    }

    /// Replaces a frozen view at `index` by its contents (helpers read what a view shows: its
    /// entries, nested tables as their views); anything else stays.
    func replaceFrozenViewByContents(at index: Int32) {
        let index = absolute(index)
        if bk_frozen_contents(L, index) > 0 { replace(at: index) }
    }

    /// "source:line" of the Lua function `level` calls up from the running C function, or nil
    /// (a C caller, or no such level). Never raises.
    func callSite(level: Int32 = 1) -> String? {
        var info = lua_Debug()
        guard lua_getstack(L, level, &info) != 0, lua_getinfo(L, "Sl", &info) != 0, info.currentline > 0 else { return nil }
        let source = withUnsafeBytes(of: &info.short_src) { bytes in
            String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
        return "\(source):\(info.currentline)"
    }
}
