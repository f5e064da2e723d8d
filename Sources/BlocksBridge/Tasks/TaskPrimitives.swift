import CLua
import CLuaShim

/// The Swift functions `TaskEngine.lua` is built on (never exported in `bk`): waiting on the loop,
/// watching handles and timers, reporting errors.
enum TaskPrimitives {
    /// Pushes the table of primitives.
    static func push(on stack: LuaStack) {
        stack.pushNewTable(recordCount: 20)
        let table = stack.top
        func add(_ name: String, _ body: @escaping LuaFunction) {
            stack.push(function: name, body)
            stack.rawSet(table, field: name)
        }
        // runUntil(cell, seconds|nil) -> "done" | "timeout" | "stopped" | "interrupted" | "idle": runs
        // the loop until cell[1] is set (what the awaited thing's waiter does).
        add("runUntil") { stack throws(LuaRaise) in
            try stack.checkTable(1)
            let loop = stack.eventLoop
            if loop.isInBackgroundBlock {
                throw .message("cannot wait on the loop from a block of another queue")
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
        // watchHandle(handle [, f, arg]) -> "pending" | "finished" | "cancelled" [, registration];
        // while pending, f(arg) is called on the main queue once it finished or was cancelled
        // (unless unwatch(handle, registration) removed it first).
        add("watchHandle") { stack in
            guard let handle = stack.toObject(BlockHandle.self, at: 1) else {
                stack.pushNil()
                return 1
            }
            let (status, registration) = handle.loop.watch(handle, adding: waiter(stack), on: stack)
            stack.push(status)
            return 1 + pushRegistration(registration, on: stack)
        }
        // watchTimer(timer [, f, arg]) -> firings, valid [, registration]; while valid, f(arg) is
        // called on the main queue after its next firing or its invalidation.
        add("watchTimer") { stack in
            guard let timer = stack.toObject(BlockTimer.self, at: 1) else {
                stack.pushNil()
                return 1
            }
            let state = timer.loop.watch(timer, adding: waiter(stack), on: stack)
            stack.push(state.firings)
            stack.push(state.valid)
            return 2 + pushRegistration(state.registration, on: stack)
        }
        // unwatch(x, registration): a wait on the handle, timer or Swift call x ended otherwise
        // (timed out, cancelled): x drops the waiter it registered, which was not notified.
        add("unwatch") { stack in
            guard let number = stack.toInteger(2) else { return 0 }
            let registration = Int(number)
            if let handle = stack.toObject(BlockHandle.self, at: 1) {
                handle.loop.unwatch(handle, registration: registration, on: stack)
            } else if let timer = stack.toObject(BlockTimer.self, at: 1) {
                timer.loop.unwatch(timer, registration: registration, on: stack)
            } else if let call = stack.toObject(SwiftAsyncCall.self, at: 1) {
                call.unwatch(registration: registration, on: stack)
            }
            return 0
        }
        // closing() -> whether the state is closing: each entry of the engine refuses then, naming
        // itself (rule 10). C: it runs at close, never raises, and costs little on every entry.
        bk_pushcfunction(stack.L, bk_stateclosing)
        stack.rawSet(table, field: "closing")
        // finishHandle(identity): a delayed block that suspended has ended (the light userdata the
        // loop passed to runBlock).
        add("finishHandle") { stack in
            if stack.type(at: 1) == .lightUserdata, let identity = lua_touserdata(stack.L, 1) {
                stack.eventLoop.finishSuspendedBlock(identity: identity)
            }
            return 0
        }
        // schedule(f, arg, seconds) -> token: f(arg) on the main queue after `seconds` (a sleep's
        // end, a timeout); unschedule(token) cancels it until it ran. Lua holds a light userdata.
        add("schedule") { stack in
            let token = stack.eventLoop.scheduleForEngine(functionAt: 1, argument: 2, after: stack.toNumber(3) ?? 0,
                                                          in: stack)
            stack.push(lightUserdata: token)
            return 1
        }
        add("unschedule") { stack in
            if stack.type(at: 1) == .lightUserdata, let token = lua_touserdata(stack.L, 1) {
                stack.eventLoop.cancelForEngine(token, on: stack)
            }
            return 0
        }
        add("pollSwiftCall") { stack in pollSwiftCall(stack) }
        add("isSwiftCall") { stack in
            stack.push(stack.toObject(SwiftAsyncCall.self, at: 1) != nil)
            return 1
        }
        add("isHandle") { stack in
            stack.push(stack.toObject(BlockHandle.self, at: 1) != nil)
            return 1
        }
        add("isTimer") { stack in
            stack.push(stack.toObject(BlockTimer.self, at: 1) != nil)
            return 1
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
        bk_pushcfunction(stack.L, bk_recordcoroutinetraceback)
        stack.rawSet(table, field: "recordCoroutineTraceback")
        // errorReport(err): what a report of err says, with the traceback recorded where it was
        // raised (any value: a string gets it appended).
        bk_pushcfunction(stack.L, bk_errorreport)
        stack.rawSet(table, field: "errorReport")
    }

    /// Pushes a waiter's registration (nothing without one); returns how many values it pushed.
    static func pushRegistration(_ registration: Int?, on stack: LuaStack) -> Int32 {
        guard let registration else { return 0 }
        stack.push(Int64(registration))
        return 1
    }

    /// The waiter at 2 (a function) and 3 (its argument), as registry references; nil without one.
    static func waiter(_ stack: LuaStack) -> LuaWaiter? {
        guard stack.type(at: 2) == .function else { return nil }
        return LuaWaiter(stack, function: 2, argument: 3)
    }
}
