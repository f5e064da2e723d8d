import CLua
import CLuaShim

/// Waiting on workers and channels without blocking the loop: `bk.await(worker)`, and `w:result()`,
/// `ch:send(v)`, `ch:receive()` that suspend the calling task (elsewhere they run the loop).
///
/// The waits are Lua (`WorkerWaits.lua`, loaded with the tasks engine as one of its extensions),
/// so that they can yield; the Swift methods try first without waiting and hand a wait over to
/// them once their Swift frame is gone (`continueWithCall`). A worker state, and a block of another
/// queue, cannot run the loop: they wait on their own thread instead (the methods' blocking path).
enum WorkerWaits {
    /// The table `WorkerWaits.lua` returns (its `send` and `receive`).
    static let registryKey = "bk.workers.waits"

    /// Registers the extension that loads `WorkerWaits.lua` with the tasks engine.
    static func install(on stack: LuaStack) {
        TaskEngine.extend(on: stack) { stack in
            stack.push(function: "workers") { stack throws(LuaRaise) in
                let engine = stack.top
                do throws(LuaError) {
                    try stack.load(bytes: PackageResources.WorkerWaits_lua, name: "=bk/WorkerWaits.lua")
                } catch {
                    throw .message("workers: \(error.message)")
                }
                stack.pushCopy(of: engine)
                pushNatives(on: stack)
                guard stack.protectedCall(arguments: 2, results: 1, handler: 0) == LUA_OK else { throw .valueOnTop }
                stack.rawSet(LuaStack.registryIndex, field: registryKey)
                return 0
            }
        }
    }

    /// Whether a wait of this caller goes through the engine (it may run the loop or suspend).
    static func canWaitOnLoop(_ stack: LuaStack) -> Bool {
        !stack.isWorkerState && !stack.eventLoop.isInBackgroundBlock
    }

    /// Pushes the engine's `bk.await`; false (nothing pushed) when the engine cannot load (a state
    /// without the coroutine library): the caller then waits the blocking way.
    static func pushAwait(on stack: LuaStack) -> Bool {
        TaskEngine.pushFunction("await", ofTableAt: TaskEngine.functionsKey, on: stack)
    }

    /// Pushes the channel wait `name` ("send" or "receive") of `WorkerWaits.lua`; false as above.
    static func pushChannelWait(_ name: String, on stack: LuaStack) -> Bool {
        TaskEngine.pushFunction(name, ofTableAt: registryKey, on: stack)
    }

    private static func pushNatives(on stack: LuaStack) {
        stack.pushNewTable(recordCount: 12)
        let table = stack.top
        func add(_ name: String, _ body: @escaping LuaFunction) {
            stack.push(function: name, body)
            stack.rawSet(table, field: name)
        }
        stack.pushGlobalTable()
        for name in ["select", "error"] {
            stack.rawGet(-1, field: name)
            stack.rawSet(table, field: name)
        }
        stack.pop()
        add("now") { stack in
            stack.push(Double(MonotonicClock.now()) / 1e9)
            return 1
        }
        add("isWorker") { stack in
            stack.push(stack.toObject(Worker.self, at: 1) != nil)
            return 1
        }
        add("cancelWorker") { stack in
            stack.toObject(Worker.self, at: 1)?.cancel()
            return 0
        }
        add("pollWorker") { stack in pollWorker(stack) }
        // unwatchWorker(w, registration): a wait on w ended otherwise; w drops its waiter.
        add("unwatchWorker") { stack in
            if let worker = stack.toObject(Worker.self, at: 1), let registration = stack.toInteger(2) {
                worker.unwatch(registration: Int(registration), on: stack)
            }
            return 0
        }
        add("arm") { stack in arm(stack) }
        add("disarm") { stack in
            if let channel = stack.toObject(Channel.self, at: 1), let token = stack.toInteger(2) {
                channel.disarm(token: Int(token), on: stack)
            }
            return 0
        }
        add("tryReceive") { stack throws(LuaRaise) in
            let channel = try stack.checkObject(Channel.self, at: 1)
            switch try channel.tryReceive(stack) {
            case .value: stack.push("value"); stack.insert(at: -2); return 2
            case .closed: stack.push("closed"); return 1
            case .empty: stack.push("empty"); return 1
            }
        }
        // trySend(ch, v) -> true | false, closed
        add("trySend") { stack throws(LuaRaise) in
            let channel = try stack.checkObject(Channel.self, at: 1)
            switch try channel.trySend(stack, 2) {
            case .sent: stack.push(true); return 1
            case .full: stack.push(false); stack.push(false); return 2
            case .closed: stack.push(false); stack.push(true); return 2
            }
        }
    }

    /// pollWorker(w [, f, arg]) -> "pending" [, registration] | "done", results... | "failed", error;
    /// while pending, f(arg) is called on the loop once the worker finishes (unless
    /// unwatchWorker(w, registration) removed it first).
    private static func pollWorker(_ stack: LuaStack) -> Int32 {
        guard let worker = stack.toObject(Worker.self, at: 1) else {
            stack.pushNil()
            return 1
        }
        if !worker.isFinished {
            var registration: Int?
            if let waiter = TaskPrimitives.waiter(stack) {
                // At once when it finished meanwhile: the engine checks again after attaching.
                registration = worker.watch(adding: waiter, on: stack.eventLoop)
            }
            stack.top = 1
            stack.push("pending")
            return 1 + TaskPrimitives.pushRegistration(registration, on: stack)
        }
        stack.top = 1
        stack.push("done")
        do throws(LuaRaise) {
            return 1 + (try worker.pushResults(stack, handle: 1))
        } catch {
            if case .message(let message) = error { stack.push(message) }
            let failure = stack.top
            stack.push("failed")
            stack.pushCopy(of: failure)
            return 2
        }
    }

    /// arm(ch, op [, f, arg [, token]]) -> nil when the channel is ready for op ("send" or
    /// "receive"); else the token of the waiter registered for its next change (the same token
    /// while it is still registered), or false without a waiter.
    private static func arm(_ stack: LuaStack) -> Int32 {
        guard let channel = stack.toObject(Channel.self, at: 1) else {
            stack.pushNil()
            return 1
        }
        let sending = stack.toString(2) == "send"
        let hasWaiter = stack.type(at: 3) == .function
        let token = stack.toInteger(5).map { Int($0) }
        let armed = channel.arm(sending: sending, token: token, on: stack,
                                waiter: hasWaiter ? { LuaWaiter(stack, function: 3, argument: 4) } : nil)
        switch armed {
        case .none: stack.pushNil()
        case .some(nil): stack.push(false)
        case .some(let token?): stack.push(Int64(token))
        }
        return 1
    }
}
