import CLua
import CLuaShim

/// Argument checks for exported functions, with lauxlib's wording.
///
/// Each check throws `LuaRaise` instead of raising, so the error is raised by the C trampoline after
/// the Swift frame returns: `bad argument #2 to 'map' (function expected, got nil)`.
extension LuaStack {
    @inlinable public func checkType(_ index: Int32, _ expected: LuaType) throws(LuaRaise) {
        if lua_type(L, index) != expected.rawValue {
            throw .type(index, expected: expected.description)
        }
    }

    @inlinable public func checkTable(_ index: Int32) throws(LuaRaise) { try checkType(index, .table) }
    @inlinable public func checkFunction(_ index: Int32) throws(LuaRaise) { try checkType(index, .function) }

    /// Any value, even nil, but not a missing argument (`luaL_checkany`).
    @inlinable public func checkAny(_ index: Int32) throws(LuaRaise) {
        if lua_type(L, index) == LUA_TNONE { throw .argument(index, "value expected") }
    }

    @inlinable public func checkInteger(_ index: Int32) throws(LuaRaise) -> Int64 {
        var ok: Int32 = 0
        let value = lua_tointegerx(L, index, &ok)
        if ok != 0 { return Int64(value) }
        if lua_isnumber(L, index) != 0 { throw .argument(index, "number has no integer representation") }
        throw .type(index, expected: "number")
    }

    @inlinable public func checkNumber(_ index: Int32) throws(LuaRaise) -> Double {
        var ok: Int32 = 0
        let value = lua_tonumberx(L, index, &ok)
        if ok != 0 { return value }
        throw .type(index, expected: "number")
    }

    public func checkString(_ index: Int32) throws(LuaRaise) -> String {
        let t = lua_type(L, index)
        guard t == LUA_TSTRING || t == LUA_TNUMBER, let s = toString(index) else {
            throw .type(index, expected: "string")
        }
        return s
    }

    public func optInteger(_ index: Int32, default value: Int64) throws(LuaRaise) -> Int64 {
        isNoneOrNil(index) ? value : try checkInteger(index)
    }

    public func optNumber(_ index: Int32, default value: Double) throws(LuaRaise) -> Double {
        isNoneOrNil(index) ? value : try checkNumber(index)
    }

    public func optString(_ index: Int32, default value: String?) throws(LuaRaise) -> String? {
        isNoneOrNil(index) ? value : try checkString(index)
    }

    /// One of `options` (`luaL_checkoption`); returns its position.
    public func checkOption(_ index: Int32, _ options: [String], default value: String? = nil) throws(LuaRaise) -> Int {
        let name: String
        if let value, isNoneOrNil(index) { name = value } else { name = try checkString(index) }
        if let position = options.firstIndex(of: name) { return position }
        throw .argument(index, "invalid option '\(name)'")
    }

    /// Raises an argument error unless `condition` holds (`luaL_argcheck`).
    @inlinable public func argCheck(_ condition: Bool, _ index: Int32, _ message: @autoclosure () -> String) throws(LuaRaise) {
        if !condition { throw .argument(index, message()) }
    }
}
