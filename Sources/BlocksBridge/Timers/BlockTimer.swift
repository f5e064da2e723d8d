/// What a timer runs each time it fires: a Lua function `f(timer)` (a registry slot, freed when
/// the timer is invalidated, fires for the last time or is dropped) or a Swift closure.
enum TimerBody: ~Copyable {
    case none
    case lua(function: RegistrySlot)
    case swift(@Sendable (BlockTimer) -> Void)

    /// The body, leaving `.none` in its place.
    mutating func take() -> TimerBody {
        let body = consume self
        self = .none
        return body
    }

    /// The closure of a Swift body (nil for any other).
    var closure: (@Sendable (BlockTimer) -> Void)? {
        switch self {
        case .swift(let closure): closure
        default: nil
        }
    }

    /// Pushes a Lua body's function, keeping its slot; false for any other body.
    mutating func pushFunction(on stack: LuaStack) -> Bool {
        // Taken and put back: a borrowing switch binding the slot does not compile (Swift 6.3).
        switch consume self {
        case .lua(let function):
            function.push(on: stack)
            self = .lua(function: function)
            return true
        case .swift(let closure):
            self = .swift(closure)
            return false
        case .none:
            self = .none
            return false
        }
    }

    var isSwift: Bool {
        switch self {
        case .swift: true
        default: false
        }
    }

    /// Frees a Lua body's slot now when `stack` is given, else at the state's next safe point.
    consuming func release(on stack: LuaStack?) {
        switch consume self {
        case .lua(let function):
            if let stack { function.release(on: stack) }
        default:
            break
        }
    }
}

/// A timer on the event loop (NSTimer+BlocksKit): fires after `timeInterval` seconds, again and
/// again when it repeats, until invalidated.
public final class BlockTimer: ScheduledWork, LuaBridged, @unchecked Sendable {
    /// Seconds between firings (at least 0.1 ms, as NSTimer).
    public let timeInterval: Double
    public let repeats: Bool
    /// Strong, as a handle's (see `BlockHandle.loop`).
    let loop: EventLoop
    // Guarded by the loop's mutex.
    var valid = true
    var body: TimerBody
    /// How many times the body ran, and who awaits the next firing (`EventLoop.watch`).
    var firings = 0
    var waiters = LuaWaiterList()

    /// NSTimer's floor for intervals.
    static let minimumInterval = 0.0001

    init(loop: EventLoop, interval: Double, repeats: Bool, body: consuming TimerBody) {
        self.loop = loop
        self.timeInterval = max(interval, BlockTimer.minimumInterval)
        self.repeats = repeats
        self.body = body
    }

    public var isValid: Bool {
        loop.mutex.withLock { valid }
    }

    /// Puts the timer on the loop, first firing `timeInterval` seconds from now. Does nothing
    /// when it is already scheduled or invalidated.
    public func schedule() { loop.schedule(self) }

    /// Stops the timer for good and releases its block (also from inside its own block).
    public func invalidate() { loop.invalidate(self, on: nil) }

    /// Runs the block now; a non-repeating timer is then invalidated, a repeating one keeps its
    /// schedule.
    public func fire() { loop.fire(self) }

    /// Fires with `body`, taken from the timer (its last firing): a Lua function's slot is freed
    /// once pushed. The caller holds the state when the body is Lua.
    func invoke(taking body: consuming TimerBody, on stack: LuaStack?) {
        notify(loop.mutex.withLock { countFiring() })
        switch consume body {
        case .none:
            break
        case .swift(let closure):
            closure(self)
        case .lua(let function):
            guard let stack else { return }  // dropped: queued
            let call = beginCall(on: stack)
            function.pushReleasing(on: stack)
            endCall(call, on: stack)
        }
    }

    /// Fires with the body it has now (a repeating timer), read holding the state: nothing when it
    /// was invalidated since it became due, so a slot freed meanwhile is never called.
    func invokeCurrentBody(on stack: LuaStack?) {
        let closure: (@Sendable (BlockTimer) -> Void)? = loop.mutex.withLock {
            valid ? body.closure : nil
        }
        if let closure {
            notify(loop.mutex.withLock { countFiring() })
            closure(self)
            return
        }
        guard let stack else { return }
        let call = beginCall(on: stack)
        // The validity check, the count and the read are one step under the mutex: space is
        // reserved, so the raw read allocates nothing (rule 16).
        let waiters: [LuaWaiter]? = loop.mutex.withLock {
            guard valid, body.pushFunction(on: stack) else { return nil }
            return countFiring()
        }
        guard let waiters else {
            stack.top = call.base
            return
        }
        notify(waiters)
        endCall(call, on: stack)
    }

    /// Counts a firing (under the loop's mutex) before the body runs, so a body awaiting its own
    /// timer waits for the next one; returns the waiters to notify.
    private func countFiring() -> [LuaWaiter] {
        firings += 1
        return takeWaiters(&waiters)
    }

    private func notify(_ waiters: [LuaWaiter]) {
        loop.notify(waiters)
    }

    /// Pushes what comes before the timer's function: the block runner and no handle, when the
    /// tasks engine is loaded (the body then runs as a task of its own when it suspends).
    private func beginCall(on stack: LuaStack) -> (base: Int32, asTask: Bool) {
        _ = stack.ensureSpace(6)
        let base = stack.top
        let asTask = TaskEngine.pushBlockRunner(on: stack)
        if asTask { stack.pushNil() }  // no handle
        return (base, asTask)
    }

    /// Calls the function pushed after `beginCall` with the timer.
    private func endCall(_ call: (base: Int32, asTask: Bool), on stack: LuaStack) {
        stack.push(object: self)
        stack.callReportingErrors(arguments: call.asTask ? 3 : 1, results: 0)
        stack.top = call.base
    }

    public static let luaClass = LuaClass(
        name: "bk.Timer",
        methods: [
            BKFunction("invalidate") { stack throws(LuaRaise) in
                let timer = try stack.checkObject(BlockTimer.self, at: 1)
                timer.loop.invalidate(timer, on: stack)
                return 0
            },
            BKFunction("fire") { stack throws(LuaRaise) in
                try stack.checkObject(BlockTimer.self, at: 1).fire()
                return 0
            },
            BKFunction("schedule") { stack throws(LuaRaise) in
                try stack.checkObject(BlockTimer.self, at: 1).schedule()
                stack.top = 1
                return 1
            },
        ] + BKFunction.loopReferenceMethods(BlockTimer.self) { $0.loop },
        properties: [
            .readOnly("isValid") { (timer: BlockTimer, stack) in stack.push(timer.isValid) },
            .readOnly("timeInterval") { (timer: BlockTimer, stack) in stack.push(timer.timeInterval) },
            .readOnly("repeats") { (timer: BlockTimer, stack) in stack.push(timer.repeats) },
        ],
        metamethods: [
            BKFunction("__tostring") { stack in
                let timer = stack.toObject(BlockTimer.self, at: 1)
                let text = timer.map { "\($0.timeInterval)s\($0.repeats ? ", repeats" : "")\($0.isValid ? "" : ", invalid")" }
                stack.push("bk.Timer(\(text ?? "?"))")
                return 1
            },
        ],
        methodsFirst: true)
}
