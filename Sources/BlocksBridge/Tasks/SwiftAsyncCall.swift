import CLua
import CLuaShim
import Dispatch

/// Where the Swift work of async closures runs: Dispatch threads, not Swift's cooperative pool.
/// A host commonly calls into Lua synchronously from an async context (a cooperative thread) and
/// the Lua code then waits on the loop for that work: on the cooperative pool (one thread per
/// core) a few such waits would leave no thread to run the work itself.
final class SwiftCallExecutor: TaskExecutor {
    static let shared = SwiftCallExecutor()
    private let queue = DispatchQueue(label: "bk.swift-async", attributes: .concurrent)

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}

/// Swift `async` work started by a Lua call of an async closure registered with `register`:
/// awaitable from Lua (`TaskEngine.lua`'s Swift-call kind), so the calling task suspends until it
/// finishes, and the Lua side can cancel it (`call:cancel()` cancels the Swift `Task`).
///
/// The work runs off the state's thread and never touches Lua: its arguments were converted to
/// Swift values first, and its result is pushed by the loop's thread when a waiter polls it. While
/// it runs it counts as outstanding work of the loop (it keeps `bk.run` alive).
final class SwiftAsyncCall: LuaBridged, @unchecked Sendable {
    enum Outcome {
        case pending
        /// Pushes the results (the state's thread, holding the lock); returns how many.
        case done(@Sendable (LuaStack) -> Int32)
        case failed(String)
    }

    let loop: EventLoop
    // Guarded by the loop's mutex.
    private var outcome = Outcome.pending
    private var waiters = LuaWaiterList()
    private var task: Task<Void, Never>?

    init(loop: EventLoop) { self.loop = loop }

    /// Starts `work` in a new Swift task.
    func start(_ work: @escaping @Sendable () async throws -> @Sendable (LuaStack) -> Int32) {
        loop.mutex.withLock { loop.outstanding += 1 }
        let started = Task(executorPreference: SwiftCallExecutor.shared) { [self] in
            let outcome: Outcome
            do { outcome = .done(try await work()) } catch { outcome = .failed(Self.message(error)) }
            let waiters = loop.mutex.withLock {
                self.outcome = outcome
                return takeWaiters(&self.waiters)
            }
            // Scheduled before the work stops counting, so the loop never looks idle between.
            loop.notify(waiters)
            loop.mutex.withLock { loop.outstanding -= 1 }
            loop.wake()
        }
        loop.mutex.withLock { task = started }
    }

    func cancel() {
        let running = loop.mutex.withLock { task }
        running?.cancel()
    }

    /// The outcome as the engine polls it; while pending, `waiter` (when given) is added, with the
    /// registration `unwatch` takes.
    func poll(adding waiter: LuaWaiter?) -> (Outcome, registration: Int?) {
        loop.mutex.withLock {
            if case .pending = outcome, let waiter { return (outcome, waiters.add(waiter)) }
            return (outcome, nil)
        }
    }

    /// Drops a waiter `poll` added that was not notified (its wait ended otherwise).
    func unwatch(registration: Int, on stack: LuaStack) {
        if let waiter = loop.mutex.withLock({ waiters.remove(registration) }) { loop.release(waiter, on: stack) }
    }

    private static func message(_ error: any Error) -> String {
        if let luaError = error as? LuaError { return luaError.description }
        if error is CancellationError { return "cancelled" }
        if case LuaRaise.message(let message)? = error as? LuaRaise { return message }
        return String(describing: error)
    }

    static let luaClass = LuaClass(
        name: "bk.SwiftCall",
        methods: [
            BKFunction("cancel") { stack throws(LuaRaise) in
                try stack.checkObject(SwiftAsyncCall.self, at: 1).cancel()
                return 0
            },
        ],
        properties: [
            .readOnly("isFinished") { (call: SwiftAsyncCall, stack) in
                if case .pending = call.poll(adding: nil).0 { stack.push(false) } else { stack.push(true) }
            },
        ])
}

extension TaskPrimitives {
    /// pollSwiftCall(call [, f, arg]) -> "pending" [, registration] | "done", results... | "failed",
    /// message; while pending, f(arg) is called on the main queue once it finishes (unless
    /// unwatch(call, registration) removed it first).
    static func pollSwiftCall(_ stack: LuaStack) -> Int32 {
        guard let call = stack.toObject(SwiftAsyncCall.self, at: 1) else {
            stack.pushNil()
            return 1
        }
        let waiter = TaskPrimitives.waiter(stack)
        let (outcome, registration) = call.poll(adding: waiter)
        if let waiter, !(outcome.isPending) {
            call.loop.release(waiter, on: stack)
        }
        stack.top = 1
        switch outcome {
        case .pending:
            stack.push("pending")
            return 1 + TaskPrimitives.pushRegistration(registration, on: stack)
        case .failed(let message):
            stack.push("failed")
            stack.push(message)
            return 2
        case .done(let push):
            stack.push("done")
            _ = stack.ensureSpace(20)
            return 1 + push(stack)
        }
    }
}

extension SwiftAsyncCall.Outcome {
    var isPending: Bool { if case .pending = self { true } else { false } }
}
