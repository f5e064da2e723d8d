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

/// Registry slots of references dropped on a thread that could not take the state's lock at once.
///
/// Releasing never waits for the lock: the thread holding it may be waiting for the releasing
/// thread (a host holding `lock` while it joins a worker that drops a `LuaRef`), and a blocking
/// release would deadlock both. Such a slot waits here and is freed by the next thread that
/// holds the lock in a host call or release. Until then it only keeps its value alive.
final class ReferenceReleases: @unchecked Sendable {
    // @unchecked: `slots` is touched only under `mutex`.
    private let mutex = PlainLock()
    private var slots: [Int32] = []
    /// `slots.count`, readable without the mutex: every host call drains, and almost always finds
    /// nothing (a slot deferred meanwhile waits for the next one).
    private let waitingCount = Atomic<Int>(0)

    func `defer`(_ id: Int32) {
        mutex.withLock {
            slots.append(id)
            waitingCount.store(slots.count, ordering: .relaxed)
        }
    }

    /// Frees the waiting slots; the caller holds the state's lock and `stack` is its active stack.
    func drain(on stack: LuaStack) {
        guard waitingCount.load(ordering: .relaxed) != 0 else { return }
        let waiting: [Int32] = mutex.withLock {
            defer {
                slots.removeAll()
                waitingCount.store(0, ordering: .relaxed)
            }
            return slots
        }
        guard !waiting.isEmpty else { return }
        guard stack.ensureSpace(1) else {
            self.defer(all: waiting)
            return
        }
        for id in waiting { luaL_unref(stack.L, bk_registryindex(), id) }
    }

    private func `defer`(all ids: [Int32]) {
        mutex.withLock {
            slots.append(contentsOf: ids)
            waitingCount.store(slots.count, ordering: .relaxed)
        }
    }
}
