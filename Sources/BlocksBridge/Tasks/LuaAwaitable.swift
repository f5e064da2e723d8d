/// Where an awaitable stands when the tasks engine polls it (`native.poll`).
///
/// The engine compares these as the numbers exported once into its `native` table (`native.PENDING`,
/// `native.DONE`, ...: `TaskPrimitives.push`), never as copies of Swift names.
enum LuaAwaitState: Int64, CaseIterable {
    case pending = 0
    /// Ended with results (none for a handle or a timer).
    case done
    /// Ended with an error (a worker's, an async Swift call's).
    case failed
    /// Ended without coming due: a handle cancelled, a timer invalidated before it ever fired.
    case cancelled

    /// The field of `native` that holds it.
    var luaName: String {
        switch self {
        case .pending: "PENDING"
        case .done: "DONE"
        case .failed: "FAILED"
        case .cancelled: "CANCELLED"
        }
    }
}

/// One poll's answer. The values an awaitable pushed (its results when done, its error when
/// failed) follow it on the stack.
struct LuaAwaitPoll {
    var state: LuaAwaitState
    /// While pending and given a waiter: the registration `unwatch` takes to drop it.
    var registration: Int? = nil
    /// How many times it came due so far: a timer's firings, a one-shot's 1 once it ended (else 0).
    /// A wait is done at the first event after it began (the engine's `nativeKind`).
    var events: Int
    /// How many values it pushed.
    var values: Int32 = 0
}

/// What `bk.await` waits on that is a Swift object: block handles, timers, workers and async Swift
/// calls. The engine reaches every kind through the same three natives (`poll`, `unwatch`,
/// `cancel`: `TaskPrimitives.push`), and treats them as one kind of awaitable (`TaskEngine.lua`).
///
/// Called on the state's thread, holding its lock, inside an exported function (raw stack work
/// only, rule 1).
protocol LuaAwaitable: LuaBridged {
    /// Where it stands, its values pushed above the stack's top. While pending, `waiter` (when
    /// given) is kept until it may be done (ended, fired) and then notified on the loop, and its
    /// registration returned; otherwise the waiter is released (or notified at once).
    func poll(adding waiter: LuaWaiter?, on stack: LuaStack) -> LuaAwaitPoll
    /// Drops a waiter `poll` kept that was not notified: its wait ended otherwise (timed out,
    /// cancelled), in O(1) (rule 19).
    func unwatch(registration: Int, on stack: LuaStack)
    /// What an interrupted wait on it (Ctrl-C at bklua's prompt) does to it.
    func cancelAwaited(on stack: LuaStack)
}

extension LuaStack {
    /// The awaitable Swift object at `index`, whatever its class; nil for any other value.
    func awaitable(at index: Int32) -> (any LuaAwaitable)? {
        bridgedObject(at: index) as? any LuaAwaitable
    }
}
