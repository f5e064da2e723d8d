import CLua
import CLuaShim

/// Full userdata made by the bridge and their user values (a worker's cached results, an
/// invocation's arguments).
extension LuaStack {
    /// Pushes a new full userdata of `size` bytes with `userValues` user values and returns its
    /// memory (nil only when Lua returned none). [-0, +1]
    @inlinable @discardableResult
    public func pushNewUserdata(size: Int, userValues: Int32 = 0) -> UnsafeMutableRawPointer? {
        lua_newuserdatauv(L, size, userValues)
    }

    /// Pushes user value `n` of the userdata at `index` (nil, type `.none`, when it has no such
    /// value or is not a full userdata). [-0, +1]
    @inlinable @discardableResult
    public func pushUserValue(of index: Int32, _ n: Int32 = 1) -> LuaType {
        LuaType(rawValue: lua_getiuservalue(L, index, n)) ?? .none
    }

    /// Sets the value on top (popped) as user value `n` of the userdata at `index`; false when it
    /// has no such value. [-1, +0]
    @inlinable @discardableResult
    public func setUserValue(of index: Int32, _ n: Int32 = 1) -> Bool { lua_setiuservalue(L, index, n) != 0 }
}
