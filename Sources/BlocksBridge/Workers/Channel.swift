import CLua
import CLuaShim

/// `bk.channel([capacity])`: a queue of copied values shared by every state that receives it.
///
/// Messages wait in a buffer state of the channel's own (copied in by `send`, out by `receive`),
/// so sender and receiver never hold each other's state. Waiting never blocks a state's loop: a
/// worker waits on its thread; elsewhere the loop runs until the channel changes (whoever changes
/// it wakes the loops waiting on it).
/// Lock order: a state's lock, then `condition` (the buffer's lock inside it).
public final class Channel: LuaShareable, @unchecked Sendable {
    /// nil: unbounded.
    public let capacity: Int?
    /// Guards everything below and the buffer state.
    private let condition = ConditionLock()
    private let buffer: LuaState
    private var head: Int64 = 1
    private var tail: Int64 = 0
    private var closed = false
    /// Loops running while one of their scripts waits on this channel.
    private var waitingLoops: [ObjectIdentifier: (loop: EventLoop, count: Int)] = [:]

    public init(capacity: Int? = nil) throws(LuaError) {
        self.capacity = capacity
        buffer = try LuaState()
        buffer.stack.pushNewTable()  // slot 1: the queue, head ... tail
    }

    private var queued: Int64 { tail - head + 1 }
    private var isFull: Bool { capacity.map { queued >= Int64($0) } ?? false }

    /// Changes made: wakes the threads and loops waiting (under `condition`).
    private func changedLocked() {
        condition.broadcast()
        for entry in waitingLoops.values { entry.loop.wake() }
    }

    /// Waits (holding `condition` on entry and return) until `ready()` or the deadline; false on
    /// timeout. On a worker or a queue's thread it waits on the condition, else it runs the loop.
    private func waitLocked(_ stack: LuaStack, deadline: UInt64?, _ ready: () -> Bool) -> Bool {
        if ready() { return true }
        let loop = stack.eventLoop
        if stack.isWorkerState || loop.isInBackgroundBlock {
            while !ready() {
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
        condition.lock()
        if let entry = waitingLoops[key] {
            if entry.count <= 1 { waitingLoops[key] = nil } else { waitingLoops[key] = (loop, entry.count - 1) }
        }
        return ready()
    }

    /// `ch:send(v)`: copies the value at `index` in; waits while full; an error once closed.
    func send(_ stack: LuaStack, _ index: Int32) throws(LuaRaise) {
        condition.lock()
        defer { condition.unlock() }
        _ = waitLocked(stack, deadline: nil) { closed || !isFull }
        if closed { throw .message("send on a closed channel") }
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
        if let failure { throw .message(failure) }
        changedLocked()
    }

    /// `ch:receive([timeout])`: pushes the next value, or nil and "timed out" / "closed".
    func receive(_ stack: LuaStack, timeout: Double?) throws(LuaRaise) -> Int32 {
        let deadline = timeout.map { MonotonicClock.now() &+ MonotonicClock.nanoseconds($0) }
        condition.lock()
        defer { condition.unlock() }
        let ready = waitLocked(stack, deadline: deadline) { closed || queued > 0 }
        if queued == 0 {
            stack.pushNil()
            stack.push(ready ? "closed" : "timed out")
            return 2
        }
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
        return 1
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
                try channel.send(stack, 2)
                return 0
            },
            BKFunction("receive") { stack throws(LuaRaise) in
                let channel = try stack.checkObject(Channel.self, at: 1)
                var timeout: Double?
                if !stack.isNoneOrNil(2) {
                    let seconds = try stack.checkNumber(2)
                    try stack.argCheck(seconds.isFinite && seconds >= 0, 2, "timeout must be a finite number >= 0")
                    timeout = seconds
                }
                return try channel.receive(stack, timeout: timeout)
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
        ])
}
