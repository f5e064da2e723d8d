
/// The worker pool from Swift: its size, and running a Lua function on one of its warm states.
extension LuaState {
    /// The number of pool states (`bk.workerCount()`); set it from 1 to 256 (`bk.setWorkerCount`).
    public var workerCount: Int {
        get { lock.withLock { workerPool.count } }
        set { lock.withLock { workerPool.count = min(max(newValue, 1), 256) } }
    }

    /// Runs the Lua function `function` (of this state) with `arguments` on a warm pool state and
    /// returns its first result as `R`. The function is copied over (it must be transferable: see
    /// `bk.isTransferable`); the arguments are pushed there directly and the result is read there,
    /// so this state's lock is held only while the function is copied. Several threads may call
    /// this at once: each call gets a pool state of its own.
    /// - Throws: `LuaError` when the function cannot be copied, raises, or its result does not
    ///   convert to `R`.
    public func runOnWorker<each A: LuaConvertible, R: LuaConvertible>(
        _ function: LuaRef, _ arguments: repeat each A, as type: R.Type
    ) throws(LuaError) -> R {
        var debugger: DebugSession?  // the pool state joins this state's debugger, if any
        let worker: LuaState = try withHostCall { (s: LuaStack) throws(LuaError) -> LuaState in
            debugger = debuggerForWorkers
            function.push(on: s)
            guard let worker = try workerPool.take(1, settings: WorkerSettings(s)).first else {
                throw LuaError(kind: .runtime, message: "no worker state")
            }
            let copied: String? = worker.lock.withLock {
                s.copy(-1, count: 1, to: worker.stack, what: "the function") ? nil
                    : (worker.stack.toString(-1) ?? "cannot be copied")
            }
            if let copied {
                workerPool.giveBack([worker])
                throw LuaError(kind: .runtime, message: copied)
            }
            return worker
        }
        defer { lock.withLock { workerPool.giveBack([worker]) } }
        let joining = debugger
        return try worker.withHostCall { (s: LuaStack) throws(LuaError) -> R in
            let debugged = joining?.attachWorker(s, label: "worker pool", pooled: true)
            defer { debugged?.detach(on: s) }
            // The function is at the bottom of the pool state's stack; run it above.
            let function = s.top
            s.pushCopy(of: function)
            let count = try s.push(arguments: repeat each arguments)
            try s.call(arguments: count, results: 1)
            let result = try s.convert(at: -1, to: type, what: "result")
            s.top = 0
            return result
        }
    }
}
