import CLua
import CLuaShim

/// A Lua value held by Swift: a slot in the registry, released when the last Swift owner goes.
///
/// A reference keeps its value alive. It must be released on the thread that owns the state (or
/// with the state's lock held); a reference that outlives its state releases nothing.
public final class LuaRef {
    public let id: Int32
    public weak private(set) var state: LuaState?

    /// Pops the value on top of `stack` into a new reference.
    public init(popping stack: LuaStack) {
        state = stack.state
        id = luaL_ref(stack.L, bk_registryindex())  // LUA_REFNIL for nil; never raises but on memory
    }

    /// Makes a reference to the value at `index`, leaving the stack as it was.
    public convenience init(copying index: Int32, in stack: LuaStack) {
        stack.pushCopy(of: index)
        self.init(popping: stack)
    }

    /// Pushes the referenced value.
    public func push(on stack: LuaStack) {
        _ = lua_rawgeti(stack.L, bk_registryindex(), lua_Integer(id))
    }

    public var isNil: Bool { id == LUA_REFNIL }

    deinit {
        state?.release(registryRef: id)
    }
}
