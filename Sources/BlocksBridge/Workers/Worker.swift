import CLua
import CLuaShim

/// `bk.worker(f, ...)`: `f(...)` running in a fresh Lua state on a thread of its own.
///
/// The worker's state is touched by one thread at a time: the starting thread copies the function
/// and arguments in before the thread starts; the thread runs it; once `isFinished`, the thread
/// has let go and the parent copies the results out (`result()`), after which the state is closed.
/// Awaitable: `isFinished` and `onFinish` are the surface an `await` builds on.
public final class Worker: LuaBridged, @unchecked Sendable {
    /// Guards every field below.
    private let condition = ConditionLock()
    private var state: LuaState?
    private var finished = false
    private var cancelled = false
    private var succeeded = false
    private var finishCallbacks: [@Sendable () -> Void] = []
    /// Waits of the tasks engine (`bk.await`), by registration (never reused): each is notified on
    /// its loop when the worker finishes, and a wait that ends otherwise removes its own in O(1).
    private var luaWaiters: [Int: (loop: EventLoop, waiter: LuaWaiter)] = [:]
    private var nextRegistration = 1
    /// A call is copying the results out (`cacheResults`): `state` is its own meanwhile.
    private var copyingResults = false
    /// The parent's loop: a running worker keeps it alive, and its end wakes it.
    let parentLoop: EventLoop
    /// The profiling run sampling the parent when the worker started (set before its thread starts).
    var profileSession: ProfileSession?
    /// The debugging session of the parent when the worker started (set before its thread starts).
    var debugSession: DebugSession?

    init(state: LuaState, parentLoop: EventLoop) {
        self.state = state
        self.parentLoop = parentLoop
    }

    public var isFinished: Bool { condition.withLock { finished } }
    /// Cancelled before it finished: awaiting it raises `bk.cancelled` (or "cancelled").
    public var isCancelled: Bool { condition.withLock { cancelled } }

    /// Runs `body` once the worker has finished: at once on this thread when it has, else on the
    /// worker's thread as it finishes (so an awaiting task can schedule its resumption on a loop).
    public func onFinish(_ body: @escaping @Sendable () -> Void) {
        condition.lock()
        if finished {
            condition.unlock()
            body()
            return
        }
        finishCallbacks.append(body)
        condition.unlock()
    }

    /// Adds a waiter notified on `loop` when the worker finishes; returns its registration, or nil
    /// when it has finished (the waiter is notified at once).
    func watch(adding waiter: LuaWaiter, on loop: EventLoop) -> Int? {
        condition.lock()
        if finished {
            condition.unlock()
            loop.notify([waiter])
            return nil
        }
        let registration = nextRegistration
        nextRegistration += 1
        luaWaiters[registration] = (loop, waiter)
        condition.unlock()
        return registration
    }

    /// Removes a waiter `watch` added that was not notified (its wait ended otherwise); the caller
    /// holds the state of `stack`, where its references are released.
    func unwatch(registration: Int, on stack: LuaStack) {
        if let entry = condition.withLock({ luaWaiters.removeValue(forKey: registration) }) {
            entry.loop.release(entry.waiter, on: stack)
        }
    }

    /// Stops the worker: its Lua code gets the error "interrupted" at its next count hook (even an
    /// endless loop) or at once where it waits (`bk.sleep`, a channel), and awaiting it raises the
    /// cancellation. After it finished this does nothing.
    public func cancel() {
        condition.lock()
        if finished {
            condition.unlock()
            return
        }
        cancelled = true
        // Under the lock: the state cannot be closed meanwhile (results are taken only once finished).
        var wakers: InterruptWakers?
        if let state {
            state.stack.interruptInstallingHook()
            wakers = state.runtimeStorage.wakers
        }
        condition.unlock()
        // Outside the lock: a wake takes the lock of what the worker waits on.
        wakers?.wakeAll()
    }

    /// Blocks this thread until the worker finished (for threads that cannot run the loop).
    func waitUntilFinished() {
        condition.lock()
        while !finished { condition.wait() }
        condition.unlock()
    }

    /// Starts the thread; the function and its arguments are on the state's stack (1 ... top).
    func start() {
        parentLoop.beginOutsideWork()
        if !startDetachedThread({ [self] in run() }) {
            run(failedToStart: true)
        }
    }

    private func run(failedToStart: Bool = false) {
        var ok = false
        if failedToStart, let state = condition.withLock({ self.state }) {
            state.lock.withLock {
                state.stack.top = 0
                state.stack.push("cannot start a thread for the worker")
            }
        } else if let state = condition.withLock({ self.state }) {
            ok = state.lock.withLock {
                let stack = state.stack
                let profiled = profileSession?.attach(stack, label: "worker")
                defer { profiled?.detach(on: stack) }
                let debugged = debugSession?.attachWorker(stack, label: "worker")
                defer { debugged?.detach(on: stack) }
                state.resetLimits()
                let arguments = stack.top - 1
                _ = stack.pushUncaughtMessageHandler()
                stack.insert(at: 1)
                let status = stack.protectedCall(arguments: arguments, results: LUA_MULTRET, handler: 1)
                stack.remove(at: 1)
                return status == LUA_OK
            }
        }
        condition.lock()
        succeeded = ok
        finished = true
        let callbacks = finishCallbacks
        finishCallbacks = []
        let waiters = luaWaiters.sorted { $0.key < $1.key }.map(\.value)
        luaWaiters = [:]
        condition.broadcast()
        condition.unlock()
        // Callbacks first: they schedule the waiters' wake-ups, so the loop never looks idle between.
        for callback in callbacks { callback() }
        for entry in waiters { entry.loop.notify([entry.waiter]) }
        parentLoop.endOutsideWork()
    }

    /// Pushes the results (or raises the error) onto `stack`, from the cache in the handle's user
    /// value (`handle` is its slot), copying them out of the worker's state the first time.
    func pushResults(_ stack: LuaStack, handle: Int32) throws(LuaRaise) -> Int32 {
        if stack.pushUserValue(of: handle) != .table {
            stack.pop()
            try cacheResults(stack, handle: handle)
            stack.settleCollector()  // the collector work the copy put off; finalizers find the cache
            stack.pushUserValue(of: handle)
        }
        let cache = stack.top
        stack.rawGet(cache, field: "n")
        let count = Int32(clamping: stack.toInteger(-1) ?? 0)
        stack.pop()
        let failed = stack.rawGet(cache, field: "failed") == .boolean
        stack.pop()
        guard stack.ensureSpace(count + 1) else { throw .message("too many results") }
        var i: Int32 = 1
        while i <= count {
            stack.rawGet(cache, Int64(i))
            i += 1
        }
        stack.remove(at: cache)
        if failed { throw .valueOnTop }
        return count
    }

    private func cacheResults(_ stack: LuaStack, handle: Int32) throws(LuaRaise) {
        // Taken out under the lock, so exactly one call copies. The caller's collector is stopped
        // until the cache is in place: its finalizers (which may call w:result()) run afterwards and
        // find the cache. A call re-entered anyway (from a hook) gets an error, not a half copy.
        let taken: (state: LuaState?, succeeded: Bool, cancelled: Bool)? = condition.withLock {
            if copyingResults { return nil }
            copyingResults = true
            defer { self.state = nil }
            return (self.state, self.succeeded, self.cancelled)
        }
        guard let taken else {
            throw .message("the worker's results are being copied (w:result() called again meanwhile)")
        }
        defer { condition.withLock { copyingResults = false } }
        let paused = stack.pauseCollector()
        defer { stack.resumeCollector(paused) }
        let (succeeded, cancelled) = (taken.succeeded, taken.cancelled)
        stack.pushNewTable()
        let cache = stack.top
        var count: Int32 = 0
        var failed = !succeeded || cancelled
        if cancelled {
            stack.pushCancelled()
            stack.rawSet(cache, 1)
            count = 1
        } else if let state = taken.state {
            state.lock.withLock {
                let source = state.stack
                count = succeeded ? source.top : 1
                let base = stack.top
                if !source.copy(1, count: count, to: stack, what: succeeded ? "result" : "the worker's error",
                                numbered: succeeded ? 1 : 0) {
                    failed = true  // the copier's message, naming what could not cross, is on top
                    count = 1
                    stack.top = base + 1
                } else if !succeeded, let hinted = Worker.globalsHint(error: stack, worker: source) {
                    stack.pop()
                    stack.push(hinted)
                }
                source.top = 0
            }
            for i in stride(from: count, through: 1, by: -1) { stack.rawSet(cache, Int64(i)) }
        }
        stack.push(Int(count))
        stack.rawSet(cache, field: "n")
        if failed {
            stack.push(true)
            stack.rawSet(cache, field: "failed")
        }
        stack.setUserValue(of: handle)
        // The results live in the parent now: the worker's state goes when `taken` does (closed
        // here, outside `condition`: its finalizers run).
    }

    /// The worker's error (a string on top of `stack`, the caller's) with a hint when it names a
    /// global the worker's state lacks but the caller's has (`attempt to index a nil value (global
    /// 'config')`): globals do not cross, which a user meeting this for the first time cannot
    /// guess. Nil when it does not apply.
    static func globalsHint(error stack: LuaStack, worker source: LuaStack) -> String? {
        guard stack.type(at: -1) == .string, let message = stack.toString(-1),
              let start = message.firstRange(of: "(global '"),
              let end = message[start.upperBound...].firstRange(of: "')") else { return nil }
        let name = String(message[start.upperBound ..< end.lowerBound])
        func hasGlobal(_ s: LuaStack) -> Bool {
            s.withRestoredTop {
                guard s.ensureSpace(2) else { return false }
                s.pushGlobalTable()
                return s.rawGet(-1, field: name) != .nil
            }
        }
        guard !hasGlobal(source), hasGlobal(stack) else { return nil }
        return message + " (globals do not cross to a worker: pass the value as an argument, or capture it in a local)"
    }

    public static let luaClass = LuaClass(
        name: "bk.Worker",
        methods: [
            // w:result() -> the worker's results; raises its error (or the cancellation)
            BKFunction("result") { stack throws(LuaRaise) in
                let worker = try stack.checkObject(Worker.self, at: 1)
                stack.top = 1
                if !worker.isFinished, WorkerWaits.canWaitOnLoop(stack), WorkerWaits.pushAwait(on: stack) {
                    // bk.await(w): a task suspends; elsewhere the loop runs until the worker is done.
                    stack.pushCopy(of: 1)
                    return stack.continueWithCall(arguments: 1)
                }
                try worker.waitForResult(stack)
                return try worker.pushResults(stack, handle: 1)
            },
            BKFunction("cancel") { stack throws(LuaRaise) in
                try stack.checkObject(Worker.self, at: 1).cancel()
                return 0
            },
        ],
        properties: [
            .readOnly("isFinished") { (worker: Worker, stack) in stack.push(worker.isFinished) },
            .readOnly("isCancelled") { (worker: Worker, stack) in stack.push(worker.isCancelled) },
        ],
        metamethods: [
            BKFunction("__tostring") { stack in
                let status = stack.toObject(Worker.self, at: 1).map { worker -> String in
                    if worker.isCancelled { return "cancelled" }
                    return worker.isFinished ? "finished" : "running"
                }
                stack.push("bk.Worker(\(status ?? "?"))")
                return 1
            },
        ],
        methodsFirst: true)

    /// Waits for the worker without blocking the caller's loop: runs it (a thread that cannot
    /// run the loop, a block of another queue, waits on the worker itself).
    func waitForResult(_ stack: LuaStack) throws(LuaRaise) {
        if isFinished { return }
        let loop = stack.eventLoop
        if loop.isInBackgroundBlock {
            waitUntilFinished()
            return
        }
        if !loop.run(until: { self.isFinished }) {
            try stack.raiseIfLimitsStopped()
            throw .message("the worker's result is not available (the state is closing)")
        }
    }
}

extension LuaStack {
    /// Pushes `bk.cancelled` when the module has one (tasks), else the string "cancelled".
    func pushCancelled() {
        let base = top
        if rawGet(LuaStack.registryIndex, field: "_LOADED") == .table, rawGet(-1, field: "bk") == .table,
           rawGet(-1, field: "cancelled") != .nil {
            replace(at: base + 1)
            top = base + 1
            return
        }
        top = base
        push("cancelled")
    }
}
