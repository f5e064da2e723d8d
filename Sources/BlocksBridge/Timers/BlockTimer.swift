import CLua

/// What a timer runs each time it fires: a Lua function `f(timer)` or a Swift closure.
enum TimerBody {
    case none
    case lua(function: Int32)
    case swift(@Sendable (BlockTimer) -> Void)
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

    init(loop: EventLoop, interval: Double, repeats: Bool, body: TimerBody) {
        self.loop = loop
        self.timeInterval = max(interval, BlockTimer.minimumInterval)
        self.repeats = repeats
        self.body = body
    }

    deinit {
        // Dropped without ever being invalidated (e.g. never scheduled): free the function.
        if case .lua(let function) = body { loop.release(reference: function, on: nil) }
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

    /// Calls the timer's body with the timer; `releasing` frees a Lua function once pushed.
    func invoke(_ body: TimerBody, releasing: Bool, on stack: LuaStack?) {
        // Counted before the body runs: a body awaiting its own timer waits for the next firing.
        let waiters = loop.mutex.withLock {
            firings += 1
            return takeWaiters(&self.waiters)
        }
        loop.notify(waiters)
        switch body {
        case .none:
            break
        case .swift(let closure):
            closure(self)
        case .lua(let function):
            guard let stack else { return }
            _ = stack.ensureSpace(6)
            let base = stack.top
            // Runs as a task of its own when it suspends (once the tasks engine is loaded).
            let asTask = TaskEngine.pushBlockRunner(on: stack)
            if asTask { stack.pushNil() }  // no handle
            lua_rawgeti(stack.L, LuaStack.registryIndex, lua_Integer(function))
            if releasing { luaL_unref(stack.L, LuaStack.registryIndex, function) }
            stack.push(object: self)
            stack.callReportingErrors(arguments: asTask ? 3 : 1, results: 0)
            stack.top = base
        }
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
