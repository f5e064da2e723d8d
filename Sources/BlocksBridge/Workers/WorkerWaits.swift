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
                do throws(EmbeddedChunkFailure) {
                    try stack.runEmbeddedChunk(PackageResources.WorkerWaits_lua, name: "=bk/WorkerWaits.lua",
                                               results: 1, handler: 0) {
                        stack.pushCopy(of: engine)
                        pushNatives(on: stack)
                        return 2
                    }
                } catch {
                    if case .load(let error) = error { throw .message("workers: \(error.message)") }
                    throw .valueOnTop
                }
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
        stack.rawGet(-1, field: "error")
        stack.rawSet(table, field: "error")
        stack.pop()
        add("now") { stack in
            stack.push(Double(MonotonicClock.now()) / 1e9)
            return 1
        }
        add("arm") { stack in arm(stack) }
        add("disarm") { stack in
            if let channel = stack.toObject(Channel.self, at: 1), let token = stack.toInteger(2) {
                channel.disarm(token: Int(token), on: stack)
            }
            return 0
        }
        // received.value, .empty, .closed: what tryReceive answers.
        stack.pushNewTable(recordCount: Int32(Channel.ReceiveAttempt.allCases.count))
        for attempt in Channel.ReceiveAttempt.allCases {
            stack.push(attempt.rawValue)
            stack.rawSet(-2, field: String(describing: attempt))
        }
        stack.rawSet(table, field: "received")
        add("tryReceive") { stack throws(LuaRaise) in
            let channel = try stack.checkObject(Channel.self, at: 1)
            let attempt = try channel.tryReceive(stack)
            stack.push(attempt.rawValue)
            if case .value = attempt {
                stack.insert(at: -2)
                return 2
            }
            return 1
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

    /// arm(ch, sending [, f, arg [, token]]) -> nil when the channel is ready to send (sending true)
    /// or receive; else the token of the waiter registered for its next change (the same token
    /// while it is still registered), or false without a waiter.
    private static func arm(_ stack: LuaStack) -> Int32 {
        guard let channel = stack.toObject(Channel.self, at: 1) else {
            stack.pushNil()
            return 1
        }
        let sending = stack.toBool(2)
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

/// `bk.await(worker)`: done with the worker's results, failed with its error (or a copy's), or
/// the cancellation when it was cancelled (`pushResults`).
extension Worker: LuaAwaitable {
    func poll(adding waiter: LuaWaiter?, on stack: LuaStack) -> LuaAwaitPoll {
        if !isFinished {
            // At once when it finished meanwhile: the engine checks again after attaching.
            let registration = waiter.flatMap { watch(adding: $0, on: stack.eventLoop) }
            return LuaAwaitPoll(state: .pending, registration: registration, events: 0)
        }
        if let waiter { stack.eventLoop.release(waiter, on: stack) }
        let base = stack.top
        do throws(LuaRaise) {
            // The worker's userdata is at 1 (native.poll's argument): its results are cached there.
            return LuaAwaitPoll(state: .done, events: 1, values: try pushResults(stack, handle: 1))
        } catch {
            if case .message(let message) = error { stack.push(message) }
            stack.insert(at: base + 1)  // the error, on top, with nothing below it
            stack.top = base + 1
            return LuaAwaitPoll(state: .failed, events: 1, values: 1)
        }
    }

    func cancelAwaited(on stack: LuaStack) { cancel() }
}
