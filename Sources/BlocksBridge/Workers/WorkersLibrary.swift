
extension BKLibrary {
    /// Every core: worker states on threads of their own, the pool behind `bk.apply` and
    /// `bk.parallelMap` (registered with the collection helpers), and channels between states.
    public static let workers = BKLibrary(name: "Workers", functions: [
        // worker(f, ...) -> a bk.Worker running f(...) in a fresh state on a thread of its own
        BKFunction("worker") { stack throws(LuaRaise) in
            try stack.checkFunction(1)
            let state: LuaState
            do throws(LuaError) {
                state = try WorkerSettings(stack).makeState()
            } catch {
                throw .message(error.message)
            }
            let count = stack.top
            let copied: String? = state.lock.withLock {
                let target = state.stack
                if stack.copy(1, count: 1, to: target, what: "the function")
                    && stack.copy(2, count: count - 1, to: target, what: "argument", numbered: 2) {
                    return nil
                }
                return target.toString(-1) ?? "cannot be copied"
            }
            if let copied {
                // The argument that cannot cross, named as a bad argument (found only on failure).
                for i in 1 ... count {
                    if let problem = stack.crossingProblem(at: i, what: i == 1 ? "the function" : "the value") {
                        throw .argument(i, problem)
                    }
                }
                throw .message(copied)
            }
            let worker = Worker(state: state, parentLoop: stack.eventLoop)
            stack.push(newObject: worker)
            worker.profileSession = stack.state.profileSession
            worker.debugSession = stack.state.debuggerForWorkers
            worker.start()
            return 1
        },
        // isTransferable(v) -> true, or false and the reason
        BKFunction("isTransferable") { stack throws(LuaRaise) in
            try stack.checkAny(1)
            if let problem = try stack.answeredTransferProblem(at: 1, what: "the value") {
                stack.push(false)
                stack.push(problem)
                return 2
            }
            stack.push(true)
            return 1
        },
        BKFunction("workerCount") { stack in
            stack.push(stack.state.workerPool.count)
            return 1
        },
        // setWorkerCount(n): the pool's size from now on (1 ... 256)
        BKFunction("setWorkerCount") { stack throws(LuaRaise) in
            let n = try stack.checkInteger(1)
            try stack.argCheck(n >= 1 && n <= 256, 1, "worker count must be between 1 and 256")
            stack.state.workerPool.count = Int(n)
            return 0
        },
        BKFunction("isWorker") { stack in
            stack.push(stack.isWorkerState)
            return 1
        },
        // channel([capacity]) -> a bk.Channel (unbounded without a capacity)
        BKFunction("channel") { stack throws(LuaRaise) in
            var capacity: Int?
            if !stack.isNoneOrNil(1) {
                let n = try stack.checkInteger(1)
                try stack.argCheck(n >= 1, 1, "capacity must be at least 1")
                capacity = Int(n)
            }
            do throws(LuaError) {
                stack.push(object: try Channel(capacity: capacity))
            } catch {
                throw .message(error.message)
            }
            return 1
        },
    ] + frozenTableFunctions, setUp: { stack, _ in
        WorkerWaits.install(on: stack)
    })
}
