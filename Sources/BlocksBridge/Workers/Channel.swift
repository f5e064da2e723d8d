
/// `bk.channel([capacity])`: a queue of copied values shared by every state that receives it.
///
/// Messages wait in a buffer state of the channel's own (copied in by `send`, out by `receive`),
/// so sender and receiver never hold each other's state. Waiting never blocks a state's loop: a
/// worker (or a block of another queue) waits on its thread; elsewhere the wait is the tasks
/// engine's (`WorkerWaits`): a task suspends, other code runs the loop. Such a wait arms a waiter
/// that the channel's next change notifies on the waiting state's loop.
/// Lock order: a state's lock, then `condition` (the buffer's lock, and a loop's mutex, inside it).
public final class Channel: LuaShareable, @unchecked Sendable {
    /// nil: unbounded.
    public let capacity: Int?
    /// Guards everything below and the buffer state.
    private let condition = ConditionLock()
    private let buffer: LuaState
    private var head: Int64 = 1
    private var tail: Int64 = 0
    private var closed = false
    /// Loops running while one of their scripts waits on this channel (the blocking path).
    private var waitingLoops: [ObjectIdentifier: (loop: EventLoop, count: Int)] = [:]
    /// Waits of the tasks engine, by token: each is notified once, at the next change, on its loop
    /// (which it keeps alive meanwhile, as outside work).
    private var armed: [Int: (loop: EventLoop, waiter: LuaWaiter)] = [:]
    private var nextToken = 1

    public init(capacity: Int? = nil) throws(LuaError) {
        self.capacity = capacity
        buffer = try LuaState()
        buffer.stack.pushNewTable()  // slot 1: the queue, head ... tail
    }

    private var queued: Int64 { tail - head + 1 }
    private var isFull: Bool { capacity.map { queued >= Int64($0) } ?? false }

    /// Changes made: wakes the threads and loops waiting, and notifies the armed waits (under
    /// `condition`).
    private func changedLocked() {
        condition.broadcast()
        for entry in waitingLoops.values { entry.loop.wake() }
        if armed.isEmpty { return }
        for entry in armed.values {
            entry.loop.notify([entry.waiter])  // scheduled first: the loop is never idle between
            entry.loop.endOutsideWork()
        }
        armed.removeAll()
    }

    private func isReadyLocked(sending: Bool) -> Bool {
        closed || (sending ? !isFull : queued > 0)
    }

    /// The engine's wait (`WorkerWaits`): nil when the channel is ready for a send (`sending`) or a
    /// receive; else the token of a waiter armed for the next change: `token` when it is still
    /// armed, else a new one made by `waiter` (`.some(nil)` without one). A ready channel disarms
    /// `token`. The caller holds the state `stack` belongs to.
    func arm(sending: Bool, token: Int?, on stack: LuaStack, waiter: (() -> LuaWaiter)?) -> Int?? {
        // The waiter's registry references are made before `condition` is taken: an allocation
        // can run finalizers, which may use this channel (its lock is not recursive).
        var made: LuaWaiter?
        while true {
            condition.lock()
            if isReadyLocked(sending: sending) {
                let dropped = token.flatMap { armed.removeValue(forKey: $0) }
                condition.unlock()
                if let dropped { release(dropped, on: stack) }
                if let made { release((stack.eventLoop, made), on: stack, endsWork: false) }
                return .none
            }
            if let token, armed[token] != nil {
                condition.unlock()
                if let made { release((stack.eventLoop, made), on: stack, endsWork: false) }
                return token
            }
            guard let waiter else {
                condition.unlock()
                return .some(nil)
            }
            guard let ready = made else {
                condition.unlock()
                made = waiter()
                continue  // checked again: the channel may have changed meanwhile
            }
            let loop = stack.eventLoop
            let token = nextToken
            nextToken += 1
            armed[token] = (loop, ready)
            loop.beginOutsideWork()
            condition.unlock()
            return token
        }
    }

    /// Drops an armed waiter that was not notified (the wait ended otherwise).
    func disarm(token: Int, on stack: LuaStack) {
        let dropped = condition.withLock { armed.removeValue(forKey: token) }
        if let dropped { release(dropped, on: stack) }
    }

    private func release(_ entry: (loop: EventLoop, waiter: LuaWaiter), on stack: LuaStack, endsWork: Bool = true) {
        entry.loop.release(entry.waiter, on: stack)
        if endsWork { entry.loop.endOutsideWork() }
    }

    /// Waits (holding `condition` on entry and return) until `ready()` or the deadline; false on
    /// timeout. On a worker or a queue's thread it waits on the condition, else it runs the loop.
    /// Either way an interrupt of the state (a cancelled worker) raises its reason at once.
    private func waitLocked(_ stack: LuaStack, deadline: UInt64?, _ ready: () -> Bool) throws(LuaRaise) -> Bool {
        if ready() { return true }
        let loop = stack.eventLoop
        if stack.isWorkerState || loop.isInBackgroundBlock {
            // Registered under `condition`, before the stop is checked: an interrupt after the
            // check finds this wait and broadcasts once it has started waiting.
            let wakers = stack.state.runtimeStorage.wakers
            let token = wakers.add { [condition] in condition.withLock { condition.broadcast() } }
            defer { wakers.remove(token) }
            while !ready() {
                try stack.raiseIfLimitsStopped()
                if let deadline {
                    let now = MonotonicClock.now()
                    if now >= deadline { return false }
                    condition.wait(until: deadline)
                } else {
                    condition.wait()
                }
            }
            return true
        }
        let key = ObjectIdentifier(loop)
        waitingLoops[key, default: (loop, 0)].count += 1
        condition.unlock()
        _ = loop.run(until: { self.condition.withLock { ready() } }, deadline: deadline)
        defer { if stack.isStopRequested { stack.checkLimitsSoon() } }
        condition.lock()
        if let entry = waitingLoops[key] {
            if entry.count <= 1 { waitingLoops[key] = nil } else { waitingLoops[key] = (loop, entry.count - 1) }
        }
        return ready()
    }

    enum SendAttempt { case sent, full, closed }
    /// Exported to `WorkerWaits.lua` as `native.received` (its numbers, by case name).
    enum ReceiveAttempt: Int64, CaseIterable { case value = 1, empty, closed }

    /// Copies the value at `index` in when there is room, without waiting.
    func trySend(_ stack: LuaStack, _ index: Int32) throws(LuaRaise) -> SendAttempt {
        defer { settle(stack) }
        condition.lock()
        defer { condition.unlock() }
        if closed { return .closed }
        if isFull { return .full }
        try appendLocked(stack, index)
        return .sent
    }

    /// Pushes the next value when there is one, without waiting.
    func tryReceive(_ stack: LuaStack) throws(LuaRaise) -> ReceiveAttempt {
        defer { settle(stack) }
        condition.lock()
        defer { condition.unlock() }
        if queued > 0 {
            try takeLocked(stack)
            return .value
        }
        return closed ? .closed : .empty
    }

    /// `ch:send(v)` where a thread waits: copies the value at `index` in; waits on this thread
    /// (or runs the loop) while full; an error once closed.
    func send(_ stack: LuaStack, _ index: Int32) throws(LuaRaise) {
        defer { settle(stack) }
        condition.lock()
        defer { condition.unlock() }
        _ = try waitLocked(stack, deadline: nil) { closed || !isFull }
        if closed { throw .message("send on a closed channel") }
        try appendLocked(stack, index)
    }

    /// After a copy, once `condition` is released: the collector work the copy put off (it stopped
    /// the collectors, Transfer.c), in the caller's state and in the buffer's.
    private func settle(_ stack: LuaStack) {
        stack.settleCollector()
        buffer.lock.withLock { buffer.stack.settleCollector() }
    }

    private func appendLocked(_ stack: LuaStack, _ index: Int32) throws(LuaRaise) {
        let failure: String? = buffer.lock.withLock {
            let target = buffer.stack
            guard stack.copy(index, count: 1, to: target, what: "the value") else {
                let message = target.toString(-1) ?? "cannot be copied"
                target.top = 1
                return message
            }
            tail += 1
            target.rawSet(1, tail)
            return nil
        }
        if let failure {
            // Named as a bad argument when the value itself cannot cross (not for lack of memory).
            if let problem = stack.crossingProblem(at: index) { throw .argument(index, problem) }
            throw .message(failure)
        }
        changedLocked()
    }

    /// `ch:receive([timeout])` where a thread waits: pushes the next value, or nil and "timed out"
    /// / "closed".
    func receive(_ stack: LuaStack, timeout: Double?) throws(LuaRaise) -> Int32 {
        let deadline = timeout.map { MonotonicClock.now() &+ MonotonicClock.nanoseconds($0) }
        defer { settle(stack) }
        condition.lock()
        defer { condition.unlock() }
        let ready = try waitLocked(stack, deadline: deadline) { closed || queued > 0 }
        if queued == 0 {
            stack.pushNil()
            stack.push(ready ? "closed" : "timed out")
            return 2
        }
        try takeLocked(stack)
        return 1
    }

    private func takeLocked(_ stack: LuaStack) throws(LuaRaise) {
        let copied: Bool = buffer.lock.withLock {
            let source = buffer.stack
            source.rawGet(1, head)
            let ok = source.copy(-1, count: 1, to: stack, what: "the value")
            source.pop()
            source.pushNil()
            source.rawSet(1, head)
            head += 1
            if head > tail { head = 1; tail = 0 }
            return ok
        }
        changedLocked()
        if !copied { throw .valueOnTop }
    }

    /// `ch:close()`: later sends fail; receivers get what is queued, then nil, "closed".
    public func close() {
        condition.withLock {
            closed = true
            changedLocked()
        }
    }

    public var isClosed: Bool { condition.withLock { closed } }
    /// Messages waiting.
    public var count: Int { condition.withLock { Int(queued) } }

    public static let luaClass = LuaClass(
        name: "bk.Channel",
        methods: [
            BKFunction("send") { stack throws(LuaRaise) in
                let channel = try stack.checkObject(Channel.self, at: 1)
                try stack.checkAny(2)
                stack.top = 2
                switch try channel.trySend(stack, 2) {
                case .sent: return 0
                case .closed: throw .message("send on a closed channel")
                case .full:
                    if WorkerWaits.canWaitOnLoop(stack), WorkerWaits.pushChannelWait("send", on: stack) {
                        stack.pushCopy(of: 1)
                        stack.pushCopy(of: 2)
                        return stack.continueWithCall(arguments: 2)
                    }
                    try channel.send(stack, 2)
                    return 0
                }
            },
            BKFunction("receive") { stack throws(LuaRaise) in
                let channel = try stack.checkObject(Channel.self, at: 1)
                var timeout: Double?
                if !stack.isNoneOrNil(2) {
                    let seconds = try stack.checkNumber(2)
                    try stack.argCheck(seconds.isFinite && seconds >= 0, 2, "timeout must be a finite number >= 0")
                    timeout = seconds
                }
                stack.top = 2
                switch try channel.tryReceive(stack) {
                case .value: return 1
                case .closed:
                    stack.pushNil()
                    stack.push("closed")
                    return 2
                case .empty:
                    if timeout == 0 {
                        stack.pushNil()
                        stack.push("timed out")
                        return 2
                    }
                    if WorkerWaits.canWaitOnLoop(stack), WorkerWaits.pushChannelWait("receive", on: stack) {
                        stack.pushCopy(of: 1)
                        stack.pushCopy(of: 2)
                        return stack.continueWithCall(arguments: 2)
                    }
                    return try channel.receive(stack, timeout: timeout)
                }
            },
            BKFunction("close") { stack throws(LuaRaise) in
                try stack.checkObject(Channel.self, at: 1).close()
                return 0
            },
        ],
        properties: [
            .readOnly("isClosed") { (channel: Channel, stack) in stack.push(channel.isClosed) },
            .readOnly("count") { (channel: Channel, stack) in stack.push(channel.count) },
            .readOnly("capacity") { (channel: Channel, stack) in
                if let capacity = channel.capacity { stack.push(capacity) } else { stack.pushNil() }
            },
        ],
        metamethods: [
            BKFunction("__tostring") { stack in
                let text = stack.toObject(Channel.self, at: 1).map { channel in
                    "bk.Channel(\(channel.count) queued\(channel.isClosed ? ", closed" : ""))"
                }
                stack.push(text ?? "bk.Channel(?)")
                return 1
            },
        ],
        methodsFirst: true)
}
