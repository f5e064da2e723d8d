import CLua
import CLuaShim

/// A borrowed view of one Lua thread's stack: what a C function gets as `lua_State *L`.
///
/// Exported Swift functions receive one; `LuaState.stack` gives one to hosts. It owns nothing and
/// is only valid while the call (or the state) is. Every method here is safe to call from Swift:
/// none raises a Lua error (reads on user tables are raw, so no metamethod runs).
///
/// This is the one layer that calls Lua's C API (DEVELOPERS.md rule 1): the raw state is `package`,
/// and `scripts/check-boundary` fails on a raw call in a Swift file outside `Sources/BlocksBridge/Lua`.
public struct LuaStack {
    /// The raw `lua_State *`: for the Lua plumbing (`Lua/`) and bklua's line editor, not for hosts.
    @usableFromInline package let L: OpaquePointer
    @usableFromInline let runtime: UnsafeMutablePointer<bk_runtime>

    @inlinable init(_ L: OpaquePointer, _ runtime: UnsafeMutablePointer<bk_runtime>) {
        self.L = L
        self.runtime = runtime
    }

    /// The stack of the Lua thread running the innermost exported Swift function of `runtime`'s
    /// state on this OS thread, or nil when none runs here (`bk_current_thread`).
    static func running(in runtime: UnsafeMutablePointer<bk_runtime>) -> LuaStack? {
        bk_current_thread(runtime).map { LuaStack($0, runtime) }
    }

    /// The bridge state this stack belongs to.
    public var state: LuaState {
        // `swift_state` is set before any Lua code can run and cleared only when the state's life
        // becomes `closed` (`LuaStateLife`): after lua_close, or before a close that waits for the
        // outermost frame, when only finalizers at close run.
        Unmanaged<LuaState>.fromOpaque(UnsafeRawPointer(runtime.pointee.swift_state)).takeUnretainedValue()
    }

    // MARK: Stack size

    /// Index of the top element (the number of values on the stack).
    @inlinable public var top: Int32 {
        get { lua_gettop(L) }
        nonmutating set { lua_settop(L, newValue) }
    }

    @inlinable public func pop(_ n: Int32 = 1) { bk_pop(L, n) }

    /// Runs `body` and sets the top back to where it was however `body` leaves: the scoped form of
    /// `let base = top ... top = base`, as mlua's `StackGuard`. A `LuaRaise.valueOnTop` thrown out
    /// of `body` keeps its value: it is moved down to just above the restored top. [-0, +0]
    @inlinable
    public func withRestoredTop<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        try withRestoredTop { (_: Int32) throws(E) -> R in try body() }
    }

    /// `withRestoredTop` for a body that works relative to the top it started from (`base`).
    @inlinable
    public func withRestoredTop<R, E: Error>(_ body: (_ base: Int32) throws(E) -> R) throws(E) -> R {
        let base = top
        do throws(E) {
            let result = try body(base)
            top = base
            return result
        } catch {
            restoreTop(base, afterThrowing: error)
            throw error
        }
    }

    /// The top back at `base` after `error`, keeping the value a `.valueOnTop` raises.
    @usableFromInline
    func restoreTop(_ base: Int32, afterThrowing error: any Error) {
        let current = top
        guard case .valueOnTop? = error as? LuaRaise else {
            top = base
            return
        }
        // At or below base, the value raised is already the top once nothing above it is dropped.
        guard current > base + 1 else { return }
        replace(at: base + 1)
        top = base + 1
    }

    /// Makes room for `n` more values; false when the stack cannot grow (never raises).
    @inlinable public func ensureSpace(_ n: Int32) -> Bool { lua_checkstack(L, n) != 0 }

    @inlinable public func absolute(_ index: Int32) -> Int32 { lua_absindex(L, index) }

    @inlinable public func pushCopy(of index: Int32) { lua_pushvalue(L, index) }
    @inlinable public func remove(at index: Int32) { bk_remove(L, index) }
    @inlinable public func insert(at index: Int32) { bk_insert(L, index) }
    @inlinable public func replace(at index: Int32) { bk_replace(L, index) }

    // MARK: Types

    @inlinable public func type(at index: Int32) -> LuaType {
        LuaType(rawValue: lua_type(L, index)) ?? .none
    }

    /// `luaL_typename`.
    public func typeName(at index: Int32) -> String { type(at: index).description }

    @inlinable public func isNoneOrNil(_ index: Int32) -> Bool { lua_type(L, index) <= 0 }
    @inlinable public func isInteger(_ index: Int32) -> Bool { lua_isinteger(L, index) != 0 }
    /// Whether the value at `index` is a C function (the standard library's and bk's are). [-0, +0]
    @inlinable public func isCFunction(_ index: Int32) -> Bool { lua_iscfunction(L, index) != 0 }

    /// Pops the function on top; returns its number of fixed parameters, nil when it takes `...`
    /// (C functions do). `lua_getinfo` reads the prototype and never raises. [-1, +0]
    func fixedParameterCount() -> Int? {
        var info = lua_Debug()
        guard lua_getinfo(L, ">u", &info) != 0, info.isvararg == 0 else { return nil }
        return Int(info.nparams)
    }

    // MARK: Pushing

    @inlinable public func pushNil() { lua_pushnil(L) }
    @inlinable public func push(_ value: Bool) { lua_pushboolean(L, value ? 1 : 0) }
    @inlinable public func push(_ value: Int) { lua_pushinteger(L, lua_Integer(value)) }
    @inlinable public func push(_ value: Int64) { lua_pushinteger(L, lua_Integer(value)) }
    @inlinable public func push(_ value: Double) { lua_pushnumber(L, value) }
    public func push(_ value: String) {
        var value = value
        value.withUTF8 { bytes in
            _ = bytes.withMemoryRebound(to: CChar.self) { lua_pushlstring(L, $0.baseAddress, $0.count) }
        }
    }
    public func push(bytes: UnsafeRawBufferPointer) {
        _ = lua_pushlstring(L, bytes.baseAddress?.assumingMemoryBound(to: CChar.self), bytes.count)
    }
    @inlinable public func push(lightUserdata pointer: UnsafeMutableRawPointer?) { lua_pushlightuserdata(L, pointer) }
    /// Pushes a C function (a `lua_CFunction` of the shim, such as `bk_recordtraceback`). [-0, +1]
    @inlinable public func push(cFunction function: lua_CFunction) { bk_pushcfunction(L, function) }
    /// Pushes the Lua thread this stack belongs to (a coroutine or the main thread). [-0, +1]
    @inlinable public func pushThread() { _ = lua_pushthread(L) }
    /// Pushes a new table pre-sized for the counts, each clamped to `maximumSizeHint` (a count
    /// taken from a script's `#t` can be 2^40; past the hint the table grows as it fills). [-0, +1]
    @inlinable public func pushNewTable(arrayCount: Int32 = 0, recordCount: Int32 = 0) {
        lua_createtable(L, min(arrayCount, Self.maximumSizeHint), min(recordCount, Self.maximumSizeHint))
    }

    /// Pushes a new table sized for exactly `arrayCount` / `recordCount` entries, each clamped to
    /// 2^26 only. For counts of values that exist (a list's elements counted raw, as `listCount`
    /// does), never for a number a script chose: `pushNewTable` is the one for those. [-0, +1]
    public func pushNewTable(existingArrayCount arrayCount: Int64, recordCount: Int64 = 0) {
        let limit: Int64 = 1 << 26
        lua_createtable(L, Int32(min(max(arrayCount, 0), limit)), Int32(min(max(recordCount, 0), limit)))
    }

    /// Throws Lua's "not enough memory" when the state is over its memory cap. Allocations made in
    /// Swift over-commit (they must not fail), so a loop that builds something big from a script's
    /// numbers calls this every few thousand steps: the cap then holds within a small factor.
    public func checkMemoryBudget() throws(LuaRaise) {
        let limit = runtime.pointee.memory_limit
        guard limit != 0, runtime.pointee.bytes_in_use > limit else { return }
        push("not enough memory")
        throw .valueOnTop
    }

    /// The largest size any pre-allocation takes from a count a script controls.
    public static let maximumSizeHint: Int32 = 1 << 14

    /// `count` as a capacity to reserve: clamped to `maximumSizeHint` (never trust `#t` for a size).
    @inlinable public static func sizeHint(_ count: Int64) -> Int { Int(min(max(count, 0), Int64(maximumSizeHint))) }
    @inlinable public func pushGlobalTable() { _ = lua_rawgeti(L, bk_registryindex(), lua_Integer(LUA_RIDX_GLOBALS)) }

    // MARK: Reading (never raises, never converts in place except strings from numbers)

    @inlinable public func toBool(_ index: Int32) -> Bool { lua_toboolean(L, index) != 0 }

    @inlinable public func toInteger(_ index: Int32) -> Int64? {
        var ok: Int32 = 0
        let value = lua_tointegerx(L, index, &ok)
        return ok != 0 ? Int64(value) : nil
    }

    @inlinable public func toNumber(_ index: Int32) -> Double? {
        var ok: Int32 = 0
        let value = lua_tonumberx(L, index, &ok)
        return ok != 0 ? value : nil
    }

    /// The string at `index` (numbers are converted, as `lua_tolstring` does); nil for other types.
    /// Invalid UTF-8 becomes U+FFFD (the replacement character): `value(at:)` keeps the bytes.
    public func toString(_ index: Int32) -> String? {
        var length = 0
        guard let chars = lua_tolstring(L, index, &length) else { return nil }
        return String(decoding: UnsafeRawBufferPointer(start: chars, count: length), as: UTF8.self)
    }

    /// A string only if the value is a string (no number conversion): for keys met in `next`.
    public func stringValue(_ index: Int32) -> String? {
        lua_type(L, index) == LUA_TSTRING ? toString(index) : nil
    }

    /// Calls `body` with the bytes of the string at `index` (numbers converted, as `toString`), or
    /// returns nil for other types. The bytes are valid only inside `body`. [-0, +0]
    public func withBytes<R>(at index: Int32, _ body: (UnsafeRawBufferPointer) -> R) -> R? {
        var length = 0
        guard let chars = lua_tolstring(L, index, &length) else { return nil }
        return body(UnsafeRawBufferPointer(start: chars, count: length))
    }

    @inlinable public func toPointer(_ index: Int32) -> UnsafeRawPointer? { lua_topointer(L, index) }
    @inlinable public func toUserdata(_ index: Int32) -> UnsafeMutableRawPointer? { lua_touserdata(L, index) }

    // MARK: Raw table access (no metamethods)

    @inlinable @discardableResult
    public func rawGet(_ table: Int32, _ i: Int64) -> LuaType {
        LuaType(rawValue: lua_rawgeti(L, table, lua_Integer(i))) ?? .none
    }

    /// Pushes `t[k]` where `k` is the value on top (popped).
    @inlinable @discardableResult
    public func rawGet(_ table: Int32) -> LuaType { LuaType(rawValue: lua_rawget(L, table)) ?? .none }

    @inlinable @discardableResult
    public func rawGet(_ table: Int32, field: String) -> LuaType {
        let t = lua_absindex(L, table)
        push(field)
        return LuaType(rawValue: lua_rawget(L, t)) ?? .none
    }

    /// `t[i] = top` (popped).
    @inlinable public func rawSet(_ table: Int32, _ i: Int64) { lua_rawseti(L, table, lua_Integer(i)) }
    /// `t[k] = v` where k and v are the two top values (popped).
    @inlinable public func rawSet(_ table: Int32) { lua_rawset(L, table) }
    /// `t[field] = top` (popped).
    public func rawSet(_ table: Int32, field: String) {
        let t = lua_absindex(L, table)
        push(field)
        insert(at: -2)
        lua_rawset(L, t)
    }

    /// `#t` without metamethods: a border, which a script can make 2^40 with a few keys. Use it
    /// for O(1) work only (appending, a binary search); loops use `listCount`.
    @inlinable public func rawLength(_ index: Int32) -> Int64 { Int64(bk_rawlen(L, index)) }

    /// The number of elements of the list at `index` as the helpers see it: positions `1 ... n`
    /// up to the first nil, at most `#t`. Costs one raw read per element, like the loop it bounds.
    public func listCount(_ index: Int32) -> Int64 {
        let border = rawLength(index)
        var count: Int64 = 0
        while count < border {
            let isNil = lua_rawgeti(L, index, lua_Integer(count + 1)) == LUA_TNIL
            pop()
            if isNil { break }
            count += 1
        }
        return count
    }
    @inlinable public func rawEqual(_ a: Int32, _ b: Int32) -> Bool { lua_rawequal(L, a, b) != 0 }

    /// `lua_next`: pops a key, pushes the next key and value; false at the end.
    /// The key on top must be a key of the table (or nil): walking code never changes it.
    @inlinable public func next(_ table: Int32) -> Bool { lua_next(L, table) != 0 }

    /// Pushes the metatable of the value at `index`; false (nothing pushed) when it has none.
    @inlinable public func pushMetatable(of index: Int32) -> Bool { lua_getmetatable(L, index) != 0 }
    /// Sets the table on top (popped) as the metatable of the value at `index`.
    @inlinable public func setMetatable(of index: Int32) { lua_setmetatable(L, index) }

    // MARK: Registry

    @inlinable public static var registryIndex: Int32 { bk_registryindex() }
    @inlinable public static func upvalueIndex(_ i: Int32) -> Int32 { bk_upvalueindex(i) }

    /// Turns Lua's warnings on (`warn("@on")`, as `lua -W`). [-0, +0]
    package func turnWarningsOn() { bk_warning_on(L) }

    /// Sets `bk` (the module table at `module`) and `bk_NAME` for each of its functions, with raw
    /// sets, in the table at `globals` (`bk_install_globals`). [-0, +0]
    func installGlobals(in globals: Int32, module: Int32) { bk_install_globals(L, globals, module) }

    /// Pushes `registry[name]`, creating it as an empty table when missing; true if it was created.
    @discardableResult
    public func pushRegistryTable(_ name: String) -> Bool {
        if rawGet(Self.registryIndex, field: name) == .table { return false }
        pop()
        pushNewTable()
        pushCopy(of: -1)
        rawSet(Self.registryIndex, field: name)
        return true
    }
}
