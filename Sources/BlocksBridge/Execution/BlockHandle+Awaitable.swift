/// `bk.await(handle)`: done when the block finished, cancelled when it was cancelled first.
extension BlockHandle: LuaAwaitable {
    func poll(adding waiter: LuaWaiter?, on stack: LuaStack) -> LuaAwaitPoll {
        let (state, registration) = loop.watch(self, adding: waiter, on: stack)
        return LuaAwaitPoll(state: state, registration: registration, events: state == .pending ? 0 : 1)
    }

    func unwatch(registration: Int, on stack: LuaStack) {
        loop.unwatch(self, registration: registration, on: stack)
    }

    func cancelAwaited(on stack: LuaStack) {
        loop.cancel(self, on: stack)
    }
}
