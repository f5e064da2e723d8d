
/// Awaiting Lua code that suspends: `try await state.callAsync("f", args..., as: T.self)` runs the
/// function as a task (`bk.async`) and drives the event loop until it has finished. Waiting
/// suspends the Swift task (no thread blocks); cancelling the Swift task cancels the Lua task
/// (which raises `bk.cancelled` where it waits, so its cleanups run), and the call then throws
/// the Lua task's outcome (`cancelled`).
extension LuaState {
    /// Calls the global function `function` (a dotted path) as a Lua task and returns its first
    /// result as `R` once it has finished.
    /// - Throws: `LuaError` for the task's error, a result that does not convert, or "cancelled".
    nonisolated(nonsending)
    public func callAsync<each A: LuaConvertible, R: LuaConvertible>(
        _ function: String, _ arguments: repeat each A, as type: R.Type
    ) async throws(LuaError) -> R {
        let task = try startTask { (s: LuaStack) throws(LuaError) in
            try s.pushGlobal(path: function)
            return try s.push(arguments: repeat each arguments)
        }
        return try await finish(task, as: type)
    }

    /// Starts a task calling the function `pushFunction` pushes (it returns the argument count).
    func startTask(_ pushFunction: (LuaStack) throws(LuaError) -> Int32) throws(LuaError) -> LuaRef {
        try withHostCall { (s: LuaStack) throws(LuaError) -> LuaRef in
            try pushEngine(on: s, field: "async", from: TaskEngine.functionsKey)
            let count = try pushFunction(s)
            try s.call(arguments: count + 1, results: 1)  // async(f, arguments...)
            return LuaRef(popping: s)
        }
    }

    /// Drives the loop until `task` has finished (cancelling it when the Swift task is
    /// cancelled), then returns its first result.
    nonisolated(nonsending)
    func finish<R: LuaConvertible>(_ task: LuaRef, as type: R.Type) async throws(LuaError) -> R {
        var cancelled = false
        let loop = eventLoop
        let outcome = await withTaskCancellationHandler {
            await loop.waitAsync { [self] in
                if Task.isCancelled, !cancelled {
                    cancelled = true
                    _ = try? callEngine("cancel", on: task, from: TaskEngine.registryKey)
                }
                return (try? callEngine("isFinished", on: task, from: TaskEngine.registryKey)) ?? true
            }
        } onCancel: {
            loop.wake()
        }
        // The state's limits (or an interrupt) stopped the script while it waited: the task is
        // left where it is, as a run of `eventLoop.run` leaves its timers.
        if outcome == .limited, let reason = stopReason { throw LuaError(kind: .runtime, message: reason) }
        return try withHostCall { (s: LuaStack) throws(LuaError) -> R in
            try pushEngine(on: s, field: "await", from: TaskEngine.functionsKey)
            task.push(on: s)
            try s.call(arguments: 1, results: 1)
            return try s.convert(at: -1, to: type, what: "result")
        }
    }

    /// Calls the engine's `field(task)` and returns whether its answer is true.
    /// Part of the call that started the task: it shares its sandbox budget.
    private func callEngine(_ field: String, on task: LuaRef, from key: String) throws(LuaError) -> Bool {
        try withHostCall(startingBudget: false) { (s: LuaStack) throws(LuaError) -> Bool in
            try pushEngine(on: s, field: field, from: key)
            task.push(on: s)
            try s.call(arguments: 1, results: 1)
            return s.toBool(-1)
        }
    }

    private func pushEngine(on s: LuaStack, field: String, from key: String) throws(LuaError) {
        guard TaskEngine.pushFunction(field, ofTableAt: key, on: s) else {
            throw LuaError(kind: .runtime, message: "tasks need the base, coroutine and table libraries")
        }
    }
}

extension LuaRef {
    /// Calls the referenced function as a Lua task and returns its first result as `R` once it has
    /// finished (see `LuaState.callAsync`).
    nonisolated(nonsending)
    public func callAsync<each A: LuaConvertible, R: LuaConvertible>(
        _ arguments: repeat each A, as type: R.Type
    ) async throws(LuaError) -> R {
        guard let state else { throw LuaRef.closedError }
        let task = try state.startTask { (s: LuaStack) throws(LuaError) in
            push(on: s)
            return try s.push(arguments: repeat each arguments)
        }
        return try await state.finish(task, as: type)
    }
}

extension EventLoop {
    /// Drives the loop from an async context until `isDone()` (checked holding the state), the
    /// state closes or its limits (or an interrupt) stop the script. Waiting happens on a
    /// Dispatch thread.
    func waitAsync(until isDone: () -> Bool) async -> LoopWaitOutcome {
        await driveAsync(LoopDriver(pending: .ignored, stops: false, endsWhenCancelled: false), until: isDone)
    }
}

extension LuaRef {
    /// Calls the referenced function on the state's loop, on its next turn (from any thread: a
    /// Swift timer, a Dispatch queue, a task). An error goes to `bk.onError`, as a callback's.
    /// Returns the block's handle (cancel it to drop the call); nil once the state is gone.
    @discardableResult
    public func callOnLoop<each A: LuaConvertible & Sendable>(_ arguments: repeat each A) -> BlockHandle? {
        guard let state else { return nil }
        let call = LoopCall(self, repeat each arguments)
        return state.eventLoop.perform { call.run() }
    }
}

/// A reference and its arguments, called on the loop's thread (which holds the state's lock).
private struct LoopCall<each A: LuaConvertible & Sendable>: Sendable {
    let function: LuaRef
    let arguments: (repeat each A)

    init(_ function: LuaRef, _ arguments: repeat each A) {
        self.function = function
        self.arguments = (repeat each arguments)
    }

    func run() {
        guard let state = function.state else { return }
        _ = try? state.withHostCall { (s: LuaStack) throws(LuaError) in
            function.push(on: s)
            let count = try s.push(arguments: repeat each arguments)
            s.callReportingErrors(arguments: count, results: 0)
        }
    }
}
