import CLuaShim

/// The Swift functions `TaskEngine.lua` is built on (never exported in `bk`): waiting on the loop,
/// polling the awaitables of Swift (`LuaAwaitable`), the engine's own delayed calls, reporting
/// errors. Each entry is described here and annotated (LuaLS) where the engine takes it
/// (`bk.TaskNatives` in `TaskEngine.lua`).
enum TaskPrimitives {
    /// Pushes the table of primitives.
    static func push(on stack: LuaStack) {
        stack.pushNewTable(recordCount: 20)
        let table = stack.top
        func add(_ name: String, _ body: @escaping LuaFunction) {
            stack.push(function: name, body)
            stack.rawSet(table, field: name)
        }
        // runUntil(cell, seconds|nil) -> how the run ended, one of `ran`'s values: runs the loop until
        // cell[1] is set (what the awaited thing's waiter does).
        add("runUntil") { stack throws(LuaRaise) in
            try stack.checkTable(1)
            let loop = stack.eventLoop
            if loop.isInBackgroundBlock {
                throw .message("cannot wait on the loop from a block of another queue")
            }
            // Running the loop from a debugger's evaluation would run the stopped script's other
            // tasks and timers behind its back (and the evaluation's time limit would kill them).
            if stack.runtime.pointee.debugger_stopped > 0 {
                throw .message("cannot wait on the loop while stopped in the debugger")
            }
            let seconds = stack.toNumber(2)
            let outcome = loop.run(seconds: seconds) {
                let done = stack.rawGet(1, 1) != .nil
                stack.pop()
                return done
            }
            if outcome == .limited { try stack.raiseIfLimitsStopped() }
            // Also in the cell: a hook may raise before the caller reads the result (Ctrl-C).
            stack.push(outcome.rawValue)
            stack.pushCopy(of: -1)
            stack.rawSet(1, field: "outcome")
            return 1
        }
        // The awaitables of Swift (LuaAwaitable: handles, timers, workers, async Swift calls).
        // PENDING, DONE, FAILED, CANCELLED: the states poll answers (LuaAwaitState).
        for state in LuaAwaitState.allCases {
            stack.push(state.rawValue)
            stack.rawSet(table, field: state.luaName)
        }
        // isAwaitable(x) -> whether x is one.
        add("isAwaitable") { stack in
            stack.push(stack.awaitable(at: 1) != nil)
            return 1
        }
        // poll(x [, notify, waiter]) -> state, registration|nil, events, values...: see
        // `pushPoll`.
        add("poll") { stack in pushPoll(stack) }
        // unwatch(x, registration): a wait on x ended otherwise (timed out, cancelled): x drops the
        // waiter poll kept, which was not notified.
        add("unwatch") { stack in
            if let awaitable = stack.awaitable(at: 1), let registration = stack.toInteger(2) {
                awaitable.unwatch(registration: Int(registration), on: stack)
            }
            return 0
        }
        // cancel(x): what an interrupted wait (Ctrl-C at the prompt) does to x.
        add("cancel") { stack in
            stack.awaitable(at: 1)?.cancelAwaited(on: stack)
            return 0
        }
        // closing() -> whether the state is closing: each entry of the engine refuses then, naming
        // itself (rule 10). C: it runs at close, never raises, and costs little on every entry.
        stack.push(cFunction: bk_stateclosing)
        stack.rawSet(table, field: "closing")
        // finishHandle(identity): a delayed block that suspended has ended (the light userdata the
        // loop passed to runBlock).
        add("finishHandle") { stack in
            if stack.type(at: 1) == .lightUserdata, let identity = stack.toUserdata(1) {
                stack.eventLoop.finishSuspendedBlock(identity: identity)
            }
            return 0
        }
        // schedule(f, arg, seconds) -> token: f(arg) on the main queue after `seconds` (a sleep's
        // end, a timeout); unschedule(token) cancels it until it ran. Lua holds a light userdata.
        // ran.done, .timeout, .stopped, .interrupted, .idle, .limited: what runUntil answers.
        stack.pushNewTable(recordCount: Int32(LoopWaitOutcome.allCases.count))
        for outcome in LoopWaitOutcome.allCases {
            stack.push(outcome.rawValue)
            stack.rawSet(-2, field: outcome.rawValue)
        }
        stack.rawSet(table, field: "ran")
        add("schedule") { stack in
            let token = stack.eventLoop.scheduleForEngine(functionAt: 1, argument: 2, after: stack.toNumber(3) ?? 0,
                                                          in: stack)
            stack.push(lightUserdata: token)
            return 1
        }
        add("unschedule") { stack in
            if stack.type(at: 1) == .lightUserdata, let token = stack.toUserdata(1) {
                stack.eventLoop.cancelForEngine(token, on: stack)
            }
            return 0
        }
        // report(err [, message]): to bk.onError, with `message` when given (made by errorReport
        // while the traceback recorded where err was raised was still there), else made now.
        add("report") { stack in
            stack.top = 2
            if stack.type(at: 2) == .string {
                stack.deliverReport(value: 1)
            } else {
                stack.pop()
                stack.reportError()
            }
            return 0
        }
        // Raw: ignores __metatable, as luaL_typeerror's __name lookup does.
        add("getmetatable") { stack in
            if !stack.pushMetatable(of: 1) { stack.pushNil() }
            return 1
        }
        stack.rawGet(LuaStack.registryIndex, field: TaskEngine.cancelledKey)
        stack.rawSet(table, field: "cancelled")
        // taskObserver: the attached debugger's watcher of tasks, or nil (then the engine calls nothing).
        stack.pushDebuggerTaskObserver()
        stack.rawSet(table, field: "taskObserver")
        stack.push(cFunction: bk_recordcoroutinetraceback)
        stack.rawSet(table, field: "recordCoroutineTraceback")
        // recordAwaitedTraceback(err, traced): an await raises a task's error again; its report
        // shows where it was raised (traced), then the line that awaited it.
        stack.push(cFunction: bk_recordawaitedtraceback)
        stack.rawSet(table, field: "recordAwaitedTraceback")
        // errorReport(err): what a report of err says, with the traceback recorded where it was
        // raised (any value: a string gets it appended).
        stack.push(cFunction: bk_errorreport)
        stack.rawSet(table, field: "errorReport")
    }

    /// poll(x [, notify, waiter]) -> state, registration|nil, events, values...: where the
    /// awaitable x stands (`LuaAwaitState`: the engine's PENDING, DONE, FAILED, CANCELLED); while
    /// pending and given a waiter, notify(waiter) is called on the loop once x may be done, until
    /// unwatch(x, registration) drops it. `events`: how many times x came due (a timer's firings,
    /// a one-shot's 1 once it ended). The values: the results when done, the error when failed.
    /// Nothing but nil for anything else.
    static func pushPoll(_ stack: LuaStack) -> Int32 {
        guard let awaitable = stack.awaitable(at: 1) else {
            stack.pushNil()
            return 1
        }
        let waiter = waiter(stack)
        stack.top = 1
        let poll = awaitable.poll(adding: waiter, on: stack)
        guard stack.ensureSpace(3) else {  // only when a worker returned ~a million values
            stack.top = 1
            stack.push(LuaAwaitState.failed.rawValue)
            stack.pushNil()
            stack.push(Int64(poll.events))
            stack.push("too many results")
            return 4
        }
        stack.push(poll.state.rawValue)
        if let registration = poll.registration { stack.push(Int64(registration)) } else { stack.pushNil() }
        stack.push(Int64(poll.events))
        if poll.values > 0 {
            // state, registration, events below the values: each insert moves the top one.
            for _ in 0 ..< 3 { stack.insert(at: 2) }
        }
        return 3 + poll.values
    }

    /// The waiter at 2 (a function) and 3 (its argument), as registry references; nil without one.
    static func waiter(_ stack: LuaStack) -> LuaWaiter? {
        guard stack.type(at: 2) == .function else { return nil }
        return LuaWaiter(stack, function: 2, argument: 3)
    }
}
