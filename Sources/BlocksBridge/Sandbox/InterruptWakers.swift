/// How to wake the threads that wait on behalf of a state without running Lua: its loop asleep
/// until the next timer, a worker blocked on a channel. No count hook runs during such a wait, so
/// an interrupt (`LuaInterruptHandle`, `Worker.cancel`) would be seen only at the wait's next
/// deadline, which may be never. Each wait registers how to wake it; `wakeAll` wakes them, and
/// each then finds the stop (`bk_stop_requested`) at once.
final class InterruptWakers: @unchecked Sendable {
    // Sendable: every field is guarded by `lock`.
    private let lock = PlainLock()
    private var wakers: [Int: @Sendable () -> Void] = [:]
    private var nextToken = 0

    /// Registers `wake` (which must not take a lock its registrant holds while calling `remove`);
    /// returns the token `remove` takes.
    func add(_ wake: @escaping @Sendable () -> Void) -> Int {
        lock.withLock {
            nextToken += 1
            wakers[nextToken] = wake
            return nextToken
        }
    }

    func remove(_ token: Int) {
        _ = lock.withLock { wakers.removeValue(forKey: token) }
    }

    /// Calls every registered wake, outside the lock: a wake takes the lock of what it wakes,
    /// which its waiter holds while it registers.
    func wakeAll() {
        let wakes = lock.withLock { Array(wakers.values) }
        for wake in wakes { wake() }
    }
}
