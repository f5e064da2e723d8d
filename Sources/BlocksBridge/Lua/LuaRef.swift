import CLua
import Synchronization
import CLuaShim

/// A Lua value held by Swift: a slot in the registry, released when the last Swift owner goes.
///
/// A reference keeps its value alive. It may be released on any thread: the slot is freed at
/// once when the state's lock is free (or held by this thread), else at the state's next host
/// call. A reference that outlives its state releases nothing. It belongs to one state: pushing
/// it into another (or once its state is closed) is an error, never another state's value.
///
/// Sendable: hand it to a Swift timer, a Dispatch queue or a task. `id` and `runtime` never change;
/// `state` is a weak reference (atomic); every use of the slot takes the state's lock (`push` runs
/// inside host calls, which hold it; release takes it or queues). `callOnLoop` runs a call on the
/// loop's thread.
public final class LuaRef: @unchecked Sendable {
    public let id: Int32
    public weak private(set) var state: LuaState?
    /// The runtime of the state the slot is in: compared (never read) to tell the state a push
    /// goes to. `state` being alive rules out a new state at a reused address.
    private let runtime: UnsafeMutablePointer<bk_runtime>

    /// Pops the value on top of `stack` into a new reference.
    public init(popping stack: LuaStack) {
        state = stack.state
        runtime = stack.runtime
        id = luaL_ref(stack.L, bk_registryindex())  // LUA_REFNIL for nil; never raises but on memory
    }

    /// Makes a reference to the value at `index`, leaving the stack as it was.
    public convenience init(copying index: Int32, in stack: LuaStack) {
        stack.pushCopy(of: index)
        self.init(popping: stack)
    }

    /// Pushes the referenced value. Into another state, or once this one is closed, it pushes nil
    /// and the host call or Swift function pushing it fails with a clear error (see
    /// `LuaStack.checkingPushes`).
    public func push(on stack: LuaStack) {
        guard stack.runtime == runtime, state != nil else {
            stack.pushNil()
            stack.recordPushFailure(state == nil ? "a LuaRef of a closed Lua state"
                                                 : "a LuaRef of another Lua state")
            return
        }
        _ = lua_rawgeti(stack.L, bk_registryindex(), lua_Integer(id))
    }

    public var isNil: Bool { id == LUA_REFNIL }

    deinit {
        state?.release(registryRef: id)
    }
}
