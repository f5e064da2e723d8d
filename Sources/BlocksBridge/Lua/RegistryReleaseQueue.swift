import CLuaShim
import Synchronization

/// The one queue of registry slots released where they could not be freed at once: `LuaRef`s
/// dropped on a thread that could not take the state's lock, and `RegistrySlot`s dropped anywhere
/// (their deinit never touches Lua).
///
/// Releasing never waits for the lock: the thread holding it may be waiting for the releasing
/// thread (a host holding `lock` while it joins a worker that drops a `LuaRef`), and a blocking
/// release would deadlock both. Such a slot waits here and is freed by the next thread that holds
/// the lock at a safe point: a host call, a release of a `LuaRef`, a turn of the loop (which is
/// woken for it), a new `RegistrySlot`. Until then it only keeps its value alive. Once the state
/// began closing nothing is queued or freed: the values go with the state.
final class RegistryReleaseQueue: @unchecked Sendable {
    // @unchecked: `slots` and `wake` are touched only under `mutex`; `runtime` outlives this
    // (both belong to the state's `LuaRuntimeStorage`) and is only read atomically.
    private let mutex = PlainLock()
    private var slots: [Int32] = []
    /// `slots.count`, readable without the mutex: every safe point drains, and almost always
    /// finds nothing (a slot queued meanwhile waits for the next one).
    private let waitingCount = Atomic<Int>(0)
    private let runtime: UnsafeMutablePointer<bk_runtime>
    /// Wakes the state's loop when the queue stops being empty (its next turn drains it).
    private var wake: (@Sendable () -> Void)?

    init(runtime: UnsafeMutablePointer<bk_runtime>) {
        self.runtime = runtime
    }

    private var isOpen: Bool { bk_runtime_life(runtime) == LuaStateLife.open.rawValue }

    /// Whether slots wait to be freed.
    var hasWaiting: Bool { waitingCount.load(ordering: .relaxed) != 0 }

    /// Queues `id` (from any thread, holding any lock: takes only this queue's mutex).
    func enqueue(_ id: Int32) {
        guard id >= 0, isOpen else { return }
        let wake: (@Sendable () -> Void)? = mutex.withLock {
            slots.append(id)
            waitingCount.store(slots.count, ordering: .relaxed)
            return slots.count == 1 ? self.wake : nil
        }
        wake?()
    }

    /// The loop's wake-up (nil: none, once the loop let go).
    func setWake(_ wake: (@Sendable () -> Void)?) {
        mutex.withLock { self.wake = wake }
    }

    /// Frees the waiting slots. The caller holds the state's lock and `stack` is a stack of it.
    func drain(on stack: LuaStack) {
        guard hasWaiting, isOpen else { return }
        let waiting: [Int32] = mutex.withLock {
            defer {
                slots.removeAll()
                waitingCount.store(0, ordering: .relaxed)
            }
            return slots
        }
        guard !waiting.isEmpty else { return }
        guard stack.ensureSpace(1) else {
            requeue(waiting)
            return
        }
        for id in waiting { stack.freeRegistrySlot(id) }
    }

    private func requeue(_ ids: [Int32]) {
        mutex.withLock {
            slots.append(contentsOf: ids)
            waitingCount.store(slots.count, ordering: .relaxed)
        }
    }
}
