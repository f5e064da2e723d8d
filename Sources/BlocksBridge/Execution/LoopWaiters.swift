/// The waiters of one awaitable (a handle, a timer, a Swift call), guarded by the loop's mutex.
///
/// Each waiter added gets a registration number; a wait that ends otherwise (timed out, cancelled,
/// its coroutine closed) removes its own with it (`EventLoop.unwatch`), so waits that time out
/// again and again leave nothing behind. Adding and removing are O(1); waiters are told in the
/// order they came.
struct LuaWaiterList {
    private var waiters: [Int: LuaWaiter] = [:]
    /// Never reused: a wait may remove its registration after the waiters were taken, and must not
    /// remove a later wait's.
    private var nextRegistration = 1

    var isEmpty: Bool { waiters.isEmpty }

    /// Adds `waiter`; returns its registration.
    mutating func add(_ waiter: LuaWaiter) -> Int {
        let registration = nextRegistration
        nextRegistration += 1
        waiters[registration] = waiter
        return registration
    }

    /// Removes the waiter of `registration` when it is still there (not taken).
    mutating func remove(_ registration: Int) -> LuaWaiter? {
        waiters.removeValue(forKey: registration)
    }

    /// Takes every waiter, in the order they were added, leaving the list empty.
    mutating func takeAll() -> [LuaWaiter] {
        if waiters.isEmpty { return [] }
        let taken = waiters.sorted { $0.key < $1.key }.map(\.value)
        waiters = [:]
        return taken
    }
}

/// Takes the waiters out of their owner (under the loop's mutex), leaving it empty.
func takeWaiters(_ waiters: inout LuaWaiterList) -> [LuaWaiter] {
    waiters.takeAll()
}

extension EventLoop {
    /// A handle starts (1) or stops (-1) being queued or running on another queue (under the
    /// mutex): counted in `outstanding`, which keeps the loop alive, unless `unref()`ed
    /// (`setReferenced` moves it between the two counts meanwhile).
    func countOutsideWork(_ handle: BlockHandle, _ delta: Int) {
        if handle.referenced { outstanding += delta } else { unreferencedOutside += delta }
    }

    /// Removes a waiter that `watch` added to `handle` and that was not notified: the wait ended
    /// otherwise. The caller holds the state.
    func unwatch(_ handle: BlockHandle, registration: Int, on stack: LuaStack) {
        if let waiter = mutex.withLock({ handle.waiters.remove(registration) }) { release(waiter, on: stack) }
    }

    /// The same for a timer's waiter.
    func unwatch(_ timer: BlockTimer, registration: Int, on stack: LuaStack) {
        if let waiter = mutex.withLock({ timer.waiters.remove(registration) }) { release(waiter, on: stack) }
    }
}
