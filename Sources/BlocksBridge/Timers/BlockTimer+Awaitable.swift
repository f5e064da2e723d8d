/// `bk.await(timer)`: pending while the timer is valid, each firing an event (the wait is done at
/// the first one after it began). Invalid: done when it ever fired, else cancelled.
extension BlockTimer: LuaAwaitable {
    func poll(adding waiter: LuaWaiter?, on stack: LuaStack) -> LuaAwaitPoll {
        let watched = loop.watch(self, adding: waiter, on: stack)
        let state: LuaAwaitState = watched.valid ? .pending : watched.firings > 0 ? .done : .cancelled
        return LuaAwaitPoll(state: state, registration: watched.registration, events: watched.firings)
    }

    func unwatch(registration: Int, on stack: LuaStack) {
        loop.unwatch(self, registration: registration, on: stack)
    }

    /// An interrupted wait leaves the timer running.
    func cancelAwaited(on stack: LuaStack) {}
}
