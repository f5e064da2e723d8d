/// Entering Lua: a pool of Lua threads, so each entry gets a stack of its own, and freeing what
/// blocks and waiters hold in the registry.
extension EventLoop {
    /// Runs `body` holding the state, on a Lua thread of its own; nil when the state is gone.
    /// Allocations are made unfailable (as inside an exported function) for the unprotected calls
    /// around the protected ones.
    func withLua<R>(_ body: (LuaStack) -> R) -> R? {
        stateLock.lock()
        defer { stateLock.unlock() }
        if isClosed { return nil }
        let runtime = self.runtime
        runtime.pointee.swift_depth += 1
        defer { runtime.pointee.swift_depth -= 1 }
        let main = LuaStack(L, runtime)
        var borrowed: (ref: Int32, thread: OpaquePointer)? = idleThreads.popLast()
        if borrowed == nil, main.ensureSpace(2), let thread = main.pushNewThread() {
            borrowed = (main.popIntoRegistry(), thread)
        }
        guard let borrowed else { return body(main) }
        let stack = LuaStack(borrowed.thread, runtime)
        defer {
            stack.top = 0
            idleThreads.append(borrowed)
        }
        return body(stack)
    }

    /// Frees a Lua body's registry slots: at once when `stack` is given (this thread holds the
    /// state), else at the state's next safe point (the release queue, which wakes the loop).
    func release(_ body: consuming BlockBody, on stack: LuaStack?) {
        body.release(on: stack)
    }
}
