/// The loop's life is its state's (`LuaStateLife`, one state machine for the whole state): the
/// loop schedules and enters nothing once it left `open`, and lets go of everything it holds
/// when the state closes.
extension EventLoop {
    /// The state's life (an atomic read: any thread may ask).
    var life: LuaStateLife { runtimeStorage.life }

    /// The state began closing or is closed: nothing is scheduled or run any more.
    var isClosed: Bool { life != .open }

    /// The state is closing (its life already left `open`, under the state lock): drop every
    /// scheduled block and timer (they hold the loop) and the Lua threads. Their Lua values go
    /// with the state, and so do slots released from now on (the release queue drops them).
    public func stateWillClose() {
        // Waits for a background block still in Lua: after this no thread enters the state.
        stateLock.lock()
        defer { stateLock.unlock() }
        assert(isClosed, "the state's life leaves open before its extensions are told")
        runtimeStorage.wakers.remove(wakerToken)
        releases.setWake(nil)
        let dropped: [ScheduledWork] = mutex.withLock {
            let items = heap.items
            heap.removeAll()
            return items
        }
        idleThreads.removeAll()
        // Handles keep their loop: those the engine still knew by identity (a sleep the close cut
        // short) would keep it, and themselves, alive after the state.
        let known = (Array(engineBlocks.values), Array(suspendedBlocks.values))
        engineBlocks.removeAll()
        suspendedBlocks.removeAll()
        // Released outside the mutex: a timer's or a handle's body is dropped with it.
        // (`_ = dropped` let the optimizer drop the array, and the last release, inside the mutex.)
        withExtendedLifetime((dropped, known)) {}
    }
}
