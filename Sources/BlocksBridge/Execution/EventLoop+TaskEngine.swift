/// The tasks engine's bookkeeping on the loop: its own delayed calls (a sleep, a timeout), known
/// by identity, and main-queue blocks that suspended as tasks. Everything here holds the state.
extension EventLoop {
    /// Calls the function at `function` with the value at `argument` on the main queue after
    /// `seconds`, for the tasks engine: returns the identity `cancelForEngine` takes. No userdata
    /// is made (tens of thousands of tasks may sleep at once), and the call never runs as a task.
    func scheduleForEngine(functionAt function: Int32, argument: Int32, after seconds: Double,
                           in stack: LuaStack) -> UnsafeMutableRawPointer {
        let handle = perform(after: seconds, on: .main, functionAt: function, object: argument, in: stack)
        engineBlocks[handle.identity] = handle
        return handle.identity
    }

    /// Cancels a call of `scheduleForEngine` that has not run yet; else does nothing.
    func cancelForEngine(_ identity: UnsafeMutableRawPointer, on stack: LuaStack) {
        if let handle = engineBlocks.removeValue(forKey: identity) { cancel(handle, on: stack) }
    }

    /// The engine reports that a block which suspended has ended (`asTaskOf`): `identity` is the
    /// light userdata it was given.
    func finishSuspendedBlock(identity: UnsafeMutableRawPointer) {
        if let handle = suspendedBlocks.removeValue(forKey: identity) { finishSuspendedBlock(handle) }
    }

    private func finishSuspendedBlock(_ handle: BlockHandle) {
        let waiters: [LuaWaiter] = mutex.withLock {
            guard handle.status == .running else { return [] }
            handle.status = .finished
            return takeWaiters(&handle.waiters)
        }
        notify(waiters)
    }
}
