#if canImport(Glibc)
import Glibc
#endif
import CLua
import CLuaShim
import Dispatch
import Synchronization

/// The event loop of one bridge state (`state.eventLoop`): delayed blocks, queues and timers.
///
/// Main-queue blocks and timers wait on a heap ordered by (deadline, submission); the thread that
/// runs the loop (`run`, `runDueWork`, `waitUntilIdle`) runs them, holding the state lock. Blocks
/// for other queues are handed to Dispatch when due, and their worker threads take the state lock
/// while in Lua, so Lua code of the state never runs on two threads at once. The loop gives the
/// lock up while it sleeps.
///
/// Lock order: the state lock, then `mutex`; `mutex` is never held while entering Lua.
public final class EventLoop: LuaStateExtension, @unchecked Sendable {
    /// The state's Lua state, runtime and lock, never the `LuaState` object: the loop and its
    /// handles may outlive that object, and its last reference may go on any thread, even inside
    /// a block the loop runs. `L` is used only holding `stateLock` with `closed` false (the state
    /// sets `closed` under the lock before it closes, and a close asked for inside a frame of the
    /// state waits until that frame ends: `LuaState.deinit`); the runtime lives as long as this.
    private let L: OpaquePointer
    private let runtimeStorage: LuaRuntimeStorage
    private var runtime: UnsafeMutablePointer<bk_runtime> { runtimeStorage.pointer }
    let stateLock: StateLock
    /// Guards the heap, counters and every handle's and timer's status.
    let mutex = PlainLock()
    var heap = TimerHeap()
    var nextSequence: UInt64 = 0
    /// Blocks handed to other queues that have not finished: they keep the loop alive too.
    var outstanding = 0
    /// Those of them `unref()`ed (not in `outstanding`): a wait on the loop still counts them.
    var unreferencedOutside = 0
    /// Registry references released by threads that did not hold the state lock.
    private var deferredReleases: [Int32] = []
    /// The thread driving the loop: work scheduled from any other thread wakes it. Fixed while
    /// drivers run: their thread, or 0 (everything wakes it) under an async driver, whose turns
    /// move between threads, or drivers on two threads.
    private var loopThread: UInt
    /// The threads of the drivers running, innermost last (0: an async driver).
    private var driverThreads: [UInt] = []
    /// The thread of a host calling `runDueWork` itself, outside any driver.
    private var hostThread: UInt
    let stopRequested = Atomic<Bool>(false)
    let interruptRequested = Atomic<Bool>(false)
    let wakeup = WakeupPipe()
    /// Idle Lua threads (with their registry references) for running blocks: each entry into Lua
    /// gets a stack of its own, whatever the thread that owns the state's main stack is doing.
    private var idleThreads: [(ref: Int32, thread: OpaquePointer)] = []
    private let waitQueue = DispatchQueue(label: "bk.loop.wait")
    /// Threads running a block of another queue right now: `run` refuses to start on them.
    private var workerThreads: [UInt] = []
    /// Main-queue blocks that suspended as tasks, until the engine reports their end (loop thread,
    /// holding the state). The engine knows them by their identity, a light userdata: pushing the
    /// handle itself would make a userdata (and a finalizer) for every block the loop runs.
    private var suspendedBlocks: [UnsafeMutableRawPointer: BlockHandle] = [:]
    /// The tasks engine's own delayed calls (a sleep, a timeout), by identity until they ran or
    /// were cancelled (holding the state): Lua holds only the light userdata (`scheduleForEngine`).
    private var engineBlocks: [UnsafeMutableRawPointer: BlockHandle] = [:]
    /// Set when the state closes: nothing is scheduled any more.
    private var closed = false

    /// This loop's entry in the state's interrupt wakers: an interrupt ends a wait at once.
    private let wakerToken: Int

    init(state: LuaState) {
        L = state.L
        runtimeStorage = state.runtimeStorage
        stateLock = state.lock
        loopThread = UInt(pthread_self())
        hostThread = loopThread
        wakerToken = state.runtimeStorage.wakers.add { [wakeup] in wakeup.signal() }
    }

    // MARK: - Driving the loop

    /// Runs every block and timer due now (work that becomes due meanwhile waits for the next
    /// call) without waiting; returns how many ran. Drains `wakeupDescriptor`.
    @discardableResult
    public func runDueWork() -> Int {
        wakeup.drain()
        return withLua { stack in
            mutex.withLock {
                if driverThreads.isEmpty {
                    hostThread = UInt(pthread_self())
                    loopThread = hostThread
                }
            }
            releaseDeferred(on: stack)
            let now = MonotonicClock.now()
            var count = 0
            while true {
                mutex.lock()
                guard let deadline = heap.firstDeadline, deadline <= now, let first = heap.first else {
                    mutex.unlock()
                    break
                }
                heap.remove(first)
                let action = becameDue(first, now: now)
                mutex.unlock()
                perform(action, on: stack)
                count += 1
            }
            return count
        } ?? 0
    }

    /// Seconds until the next block or timer is due: nil when nothing is scheduled, 0 when work is
    /// due now. (Blocks running on other queues are not scheduled work: `wakeupDescriptor` tells.)
    public var secondsUntilNextWork: Double? {
        mutex.withLock {
            if !deferredReleases.isEmpty { return 0 }
            guard let deadline = heap.firstDeadline else { return nil }
            let now = MonotonicClock.now()
            return deadline > now ? Double(deadline - now) / 1e9 : 0
        }
    }

    /// A descriptor that becomes readable when another thread schedules work, finishes a block or
    /// calls `stop`; hosts with their own poll loop wait on it and call `runDueWork`.
    public var wakeupDescriptor: Int32 { wakeup.readDescriptor }

    /// Blocks and timers that keep the loop alive: scheduled blocks, valid scheduled timers and
    /// blocks running or queued on other queues, except those `unref()`ed.
    public var pendingCount: Int {
        mutex.withLock { heap.referencedCount + outstanding }
    }

    /// Runs the loop until nothing is pending (true), `stop` is called, the state's limits stop
    /// it or `seconds` have passed (false). Nested calls (from inside a block) are allowed.
    @discardableResult
    public func run(seconds: Double? = nil) -> Bool {
        if isClosed { return true }  // nothing can run any more
        let end = seconds.map { MonotonicClock.now() &+ MonotonicClock.nanoseconds($0) }
        stopRequested.store(false, ordering: .relaxed)
        return drive(LoopDriver(pending: .referenced, end: end)) { false } == .idle
    }

    /// Runs the loop until `done()` is true (checked after each turn; whoever makes it true calls
    /// `wake()`), waiting even when nothing is pending: how a script waits for a worker or a
    /// channel without blocking the loop. Returns false when the state closed, its limits stopped
    /// the script or `deadline` (monotonic nanoseconds) passed first.
    func run(until done: () -> Bool, deadline: UInt64? = nil) -> Bool {
        drive(LoopDriver(pending: .ignored, end: deadline, stops: false, doneBeforeWork: true), until: done) == .done
    }

    /// The state's sandbox limits (an interrupt, its time limit) stop the script while it waits on
    /// the loop: true when they do. The count hook of the main thread then runs before its next
    /// instruction and raises; a coroutine that called the wait raises at its own next hook.
    /// Limits are otherwise checked by that hook only, between Lua instructions, and a wait runs
    /// none: a sandboxed `bk.sleep(1e9)` or a repeating timer would outlive the budget.
    func limitsStop() -> Bool {
        guard bk_stop_requested(runtime) != nil else { return false }
        if !isClosed { bk_check_limits_soon(L) }
        return true
    }

    /// How long a wait may last before `limitsStop` must be asked again (nil: no limits apply).
    func limitsWaitCap() -> UInt64? {
        if isClosed { return nil }
        let seconds = bk_limits_wait_cap(runtime, L)
        return seconds < 0 ? nil : MonotonicClock.nanoseconds(seconds)
    }

    /// Work running outside the loop (a worker) keeps `run` alive like a block on another queue
    /// until `endOutsideWork`, which also wakes the loop.
    func beginOutsideWork() {
        mutex.withLock { outstanding += 1 }
    }

    func endOutsideWork() {
        mutex.withLock { outstanding -= 1 }
        wakeup.signal()
    }

    /// `stop`, for Ctrl-C at bklua's prompt: a wait of `bk.await` outside a task also cancels
    /// what it awaits (`LoopWaitOutcome.interrupted`).
    public func interrupt() {
        interruptRequested.store(true, ordering: .relaxed)
        stop()
    }

    /// Ends the innermost running `run` (or `waitUntilIdle`) after the block running now.
    public func stop() {
        stopRequested.store(true, ordering: .relaxed)
        wakeup.signal()
    }

    /// Waits on the wakeup pipe (at most `nanoseconds`; nil: until woken) on a Dispatch thread,
    /// suspending the caller.
    func sleepAsync(nanoseconds: UInt64?) async {
        let wakeup = self.wakeup
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            waitQueue.async {
                wakeup.wait(nanoseconds: nanoseconds)
                done.resume()
            }
        }
    }

    /// Drives the loop from an async context until nothing is pending, `stop`, the state's limits
    /// or an interrupt stop it, or the task is cancelled. Waiting happens on a Dispatch thread,
    /// not on the cooperative pool.
    public func waitUntilIdle() async {
        stopRequested.store(false, ordering: .relaxed)
        _ = await driveAsync(LoopDriver(pending: .referenced)) { false }
    }

    /// A driver starts on `thread` (0: an async driver) and runs until `endDriving(on:)`.
    func beginDriving(on thread: UInt) {
        mutex.withLock {
            driverThreads.append(thread)
            settleLoopThread()
        }
    }

    func endDriving(on thread: UInt) {
        mutex.withLock {
            if let i = driverThreads.lastIndex(of: thread) { driverThreads.remove(at: i) }
            settleLoopThread()
        }
    }

    /// `loopThread` from the drivers running (under `mutex`).
    private func settleLoopThread() {
        guard let first = driverThreads.first else {
            loopThread = hostThread
            return
        }
        loopThread = driverThreads.allSatisfy { $0 == first } ? first : 0
    }

    // MARK: - Scheduling

    /// Runs `body` after `delay` seconds on `queue`. Returns a handle that can cancel it.
    @discardableResult
    public func perform(after delay: Double = 0, on queue: BlockQueue = .main,
                        _ body: @escaping @Sendable () -> Void) -> BlockHandle {
        let handle = BlockHandle(loop: self, queue: queue, body: .swift(body))
        submit(handle, delay: delay)
        return handle
    }

    /// Runs the Lua function at `function` (with the value at `object` as its argument, when
    /// given) after `delay` seconds on `queue`. The caller must hold the state (be in Lua or hold
    /// `state.lock`).
    @discardableResult
    public func perform(after delay: Double = 0, on queue: BlockQueue = .main,
                        functionAt function: Int32, object: Int32? = nil, in stack: LuaStack) -> BlockHandle {
        let objectRef: Int32
        if let object {
            stack.pushCopy(of: object)
            objectRef = luaL_ref(stack.L, LuaStack.registryIndex)
        } else {
            objectRef = LUA_NOREF
        }
        stack.pushCopy(of: function)
        let functionRef = luaL_ref(stack.L, LuaStack.registryIndex)
        let handle = BlockHandle(loop: self, queue: queue, body: .lua(function: functionRef, object: objectRef))
        submit(handle, delay: delay)
        return handle
    }

    private func submit(_ handle: BlockHandle, delay: Double) {
        if handle.queue.kind != .main, !(delay > 0) {
            // No delay: straight to the queue (serial queues keep submission order).
            mutex.withLock {
                handle.status = .queued
                countOutsideWork(handle, 1)
            }
            dispatch(handle)
        } else {
            schedule(handle, delay: delay)
        }
    }

    /// Puts `work` on the heap, due in `delay` seconds.
    func schedule(_ work: ScheduledWork, delay: Double) {
        let deadline = MonotonicClock.now() &+ MonotonicClock.nanoseconds(delay)
        mutex.lock()
        let wake = insertLocked(work, deadline: deadline)
        mutex.unlock()
        if wake { wakeup.signal() }
    }

    /// Puts `work` on the heap (under `mutex`); true when the loop must be woken for it.
    func insertLocked(_ work: ScheduledWork, deadline: UInt64) -> Bool {
        if closed { return false }
        work.deadline = deadline
        work.sequence = nextSequence
        nextSequence &+= 1
        heap.insert(work)
        return work.heapIndex == 0 && loopThread != UInt(pthread_self())
    }

    func cancel(_ handle: BlockHandle, on stack: LuaStack?) {
        mutex.lock()
        switch handle.status {
        case .scheduled:
            heap.remove(handle)
        case .queued:
            countOutsideWork(handle, -1)
        case .running, .finished, .cancelled:
            mutex.unlock()
            return
        }
        handle.status = .cancelled
        let body = handle.body
        handle.body = .none
        let wake = loopThread != UInt(pthread_self())
        let waiters = takeWaiters(&handle.waiters)
        mutex.unlock()
        notify(waiters)
        release(body, on: stack)
        if wake { wakeup.signal() }
    }

    // MARK: - Running due work

    enum DueAction {
        case nothing
        case run(BlockHandle, BlockBody)
        case dispatch(BlockHandle)
        /// A repeating timer's body is nil: read when it runs, in case it was invalidated meanwhile.
        case fire(BlockTimer, TimerBody?, releasing: Bool)
    }

    /// Decides what a due item does, under `mutex` (it is already off the heap).
    private func becameDue(_ work: ScheduledWork, now: UInt64) -> DueAction {
        if let handle = work as? BlockHandle {
            guard handle.status == .scheduled else { return .nothing }
            if handle.queue.kind == .main {
                handle.status = .running
                let body = handle.body
                handle.body = .none
                return .run(handle, body)
            }
            handle.status = .queued
            countOutsideWork(handle, 1)
            return .dispatch(handle)
        }
        if let timer = work as? BlockTimer {
            return timerBecameDue(timer, now: now)
        }
        return .nothing
    }

    private func perform(_ action: DueAction, on stack: LuaStack) {
        switch action {
        case .nothing:
            break
        case .run(let handle, let body):
            if !engineBlocks.isEmpty, engineBlocks.removeValue(forKey: handle.identity) != nil {
                invoke(body, on: stack)
                mutex.withLock { handle.status = .finished }
                break
            }
            // A block that suspended (bk.sleep) runs on as a task: finished when it ends.
            if invoke(body, on: stack, asTaskOf: handle) { break }
            let waiters = mutex.withLock {
                if handle.status == .running { handle.status = .finished }
                return takeWaiters(&handle.waiters)
            }
            notify(waiters)
        case .dispatch(let handle):
            dispatch(handle)
        case .fire(let timer, let body, let releasing):
            if let body = body ?? currentBody(of: timer) { timer.invoke(body, releasing: releasing, on: stack) }
        }
    }

    /// Hands a queued block to its Dispatch queue.
    private func dispatch(_ handle: BlockHandle) {
        guard let queue = handle.queue.dispatchQueue else { return }
        queue.async { [self] in runOnWorker(handle) }
    }

    /// A worker thread running a block of another queue.
    private func runOnWorker(_ handle: BlockHandle) {
        func start() -> BlockBody? {
            mutex.withLock {
                guard handle.status == .queued else { return nil }
                handle.status = .running
                let body = handle.body
                handle.body = .none
                return body
            }
        }
        let entersLua = mutex.withLock { if case .lua = handle.body { true } else { false } }
        var ran = false
        if entersLua {
            // Take the state first: a cancel made meanwhile from Lua is then still honoured.
            withLua { stack in
                if let body = start() {
                    let me = UInt(pthread_self())
                    mutex.withLock { workerThreads.append(me) }
                    invoke(body, on: stack)
                    mutex.withLock { if let i = workerThreads.lastIndex(of: me) { workerThreads.remove(at: i) } }
                    ran = true
                }
            }
        } else if let body = start() {
            invoke(body, on: nil)
            ran = true
        }
        guard ran else { return }
        let waiters = mutex.withLock {
            handle.status = .finished
            countOutsideWork(handle, -1)
            return takeWaiters(&handle.waiters)
        }
        notify(waiters)
        wakeup.signal()
    }

    /// Calls a block's body. A Lua function's references are released before the call (the stack
    /// holds the values while it runs). With `asTaskOf` (main-queue blocks), a Lua block runs as a
    /// task when the tasks engine is loaded: returns true when it suspended (it goes on as a task,
    /// and the engine marks the handle finished when it ends).
    @discardableResult
    func invoke(_ body: BlockBody, on stack: LuaStack?, asTaskOf handle: BlockHandle? = nil) -> Bool {
        switch body {
        case .none:
            return false
        case .swift(let closure):
            closure()
            return false
        case .lua(let function, let object):
            guard let stack else { return false }
            _ = stack.ensureSpace(6)
            let base = stack.top
            var arguments: Int32 = 0
            if let handle, TaskEngine.pushBlockRunner(on: stack) {
                stack.push(lightUserdata: handle.identity)
                arguments = 1
            }
            let asTask = arguments == 1
            lua_rawgeti(stack.L, LuaStack.registryIndex, lua_Integer(function))
            luaL_unref(stack.L, LuaStack.registryIndex, function)
            if asTask { arguments += 1 }
            if object != LUA_NOREF {
                lua_rawgeti(stack.L, LuaStack.registryIndex, lua_Integer(object))
                luaL_unref(stack.L, LuaStack.registryIndex, object)
                arguments += 1
            }
            let ok = stack.callReportingErrors(arguments: arguments, results: asTask ? 1 : 0)
            let suspended = asTask && ok && stack.toBool(-1)
            stack.top = base
            if suspended, let handle { suspendedBlocks[handle.identity] = handle }
            return suspended
        }
    }

    /// Calls the function at `function` with the value at `argument` on the main queue after
    /// `seconds`, for the tasks engine: returns the identity `cancelForEngine` takes. No userdata
    /// is made (tens of thousands of tasks may sleep at once), and the call never runs as a task.
    func scheduleForEngine(functionAt function: Int32, argument: Int32, after seconds: Double,
                           in stack: LuaStack) -> UnsafeMutableRawPointer {
        let handle = perform(after: seconds, on: .main, functionAt: function, object: argument, in: stack)
        engineBlocks[handle.identity] = handle
        return handle.identity
    }

    /// Cancels a call of `scheduleForEngine` that has not run yet; else does nothing.
    func cancelForEngine(_ identity: UnsafeMutableRawPointer, on stack: LuaStack) {
        if let handle = engineBlocks.removeValue(forKey: identity) { cancel(handle, on: stack) }
    }

    /// The engine reports that a block which suspended has ended (`asTaskOf`): `identity` is the
    /// light userdata it was given.
    func finishSuspendedBlock(identity: UnsafeMutableRawPointer) {
        if let handle = suspendedBlocks.removeValue(forKey: identity) { finishSuspendedBlock(handle) }
    }

    private func finishSuspendedBlock(_ handle: BlockHandle) {
        let waiters: [LuaWaiter] = mutex.withLock {
            guard handle.status == .running else { return [] }
            handle.status = .finished
            return takeWaiters(&handle.waiters)
        }
        notify(waiters)
    }

    // MARK: - Entering Lua

    /// Runs `body` holding the state, on a Lua thread of its own; nil when the state is gone.
    /// Allocations are made unfailable (as inside an exported function) for the unprotected calls
    /// around the protected ones.
    func withLua<R>(_ body: (LuaStack) -> R) -> R? {
        stateLock.lock()
        defer { stateLock.unlock() }
        if isClosed { return nil }
        let runtime = self.runtime
        runtime.pointee.swift_depth += 1
        defer { runtime.pointee.swift_depth -= 1 }
        let main = LuaStack(L, runtime)
        var borrowed: (ref: Int32, thread: OpaquePointer)? = idleThreads.popLast()
        if borrowed == nil, main.ensureSpace(2), let thread = lua_newthread(L) {
            borrowed = (luaL_ref(L, LuaStack.registryIndex), thread)
        }
        guard let borrowed else { return body(main) }
        let stack = LuaStack(borrowed.thread, runtime)
        defer {
            stack.top = 0
            idleThreads.append(borrowed)
        }
        return body(stack)
    }

    /// Releases a Lua body's registry references: at once when this thread holds the state,
    /// else on the loop thread's next turn.
    func release(_ body: BlockBody, on stack: LuaStack?) {
        guard case .lua(let function, let object) = body else { return }
        release(reference: function, on: stack)
        release(reference: object, on: stack)
    }

    func release(reference: Int32, on stack: LuaStack?) {
        guard reference >= 0 else { return }
        if stateLock.isHeldByCurrentThread {
            if let stack {
                luaL_unref(stack.L, LuaStack.registryIndex, reference)
                return
            }
            if !isClosed {
                luaL_unref(L, LuaStack.registryIndex, reference)
            }
            return
        } else {
            mutex.withLock { deferredReleases.append(reference) }
            wakeup.signal()
        }
    }

    private func releaseDeferred(on stack: LuaStack) {
        let references: [Int32] = mutex.withLock {
            if deferredReleases.isEmpty { return [] }
            defer { deferredReleases.removeAll() }
            return deferredReleases
        }
        for reference in references {
            luaL_unref(stack.L, LuaStack.registryIndex, reference)
        }
    }

    func wake() { wakeup.signal() }

    var isClosed: Bool { mutex.withLock { closed } }

    /// Whether the calling thread drives the loop (under `mutex`).
    var isLoopThreadLocked: Bool { loopThread == UInt(pthread_self()) }

    /// True on a worker thread running a block of another queue (where the loop must not run).
    public var isInBackgroundBlock: Bool {
        let me = UInt(pthread_self())
        return mutex.withLock { workerThreads.contains(me) }
    }

    /// The state is closing: drop every scheduled block and timer (they hold the loop) and the
    /// Lua threads. Their Lua values go with the state.
    public func stateWillClose() {
        // Waits for a background block still in Lua: after this no thread enters the state.
        stateLock.lock()
        defer { stateLock.unlock() }
        runtimeStorage.wakers.remove(wakerToken)
        let dropped: [ScheduledWork] = mutex.withLock {
            closed = true
            deferredReleases.removeAll()
            let items = heap.items
            heap.removeAll()
            return items
        }
        idleThreads.removeAll()
        // Handles keep their loop: those the engine still knew by identity (a sleep the close cut
        // short) would keep it, and themselves, alive after the state.
        let known = (Array(engineBlocks.values), Array(suspendedBlocks.values))
        engineBlocks.removeAll()
        suspendedBlocks.removeAll()
        // Released outside the mutex: a timer's deinit may defer a release, which takes it.
        // (`_ = dropped` let the optimizer drop the array, and the last release, inside the mutex.)
        withExtendedLifetime((dropped, known)) {}
    }
}

extension LuaState {
    /// The state's event loop, created on first use.
    public var eventLoop: EventLoop {
        extensionObject(EventLoop.self) { EventLoop(state: self) }
    }

    /// The state's event loop if anything made it, else nil: a state that never scheduled work
    /// has nothing to run (bklua skips making a loop after such a script: start-up time).
    public var eventLoopIfMade: EventLoop? {
        existingExtensionObject(EventLoop.self)
    }
}

/// The registry key (a light userdata) under which a state keeps its loop's address, so the hot
/// functions (`performBlock`) find it with one raw read instead of a Swift dictionary lookup.
// A pointer's size: the trampoline may read the first word of any light userdata (Boundary.c).
nonisolated(unsafe) private let eventLoopKey = UnsafeMutableRawPointer.allocate(byteCount: 8, alignment: 8)

extension LuaStack {
    /// The loop of this stack's state (the state keeps it alive as long as Lua runs).
    var eventLoop: EventLoop {
        if lua_rawgetp(L, LuaStack.registryIndex, eventLoopKey) == LUA_TLIGHTUSERDATA, let address = toUserdata(-1) {
            pop()
            return Unmanaged<EventLoop>.fromOpaque(address).takeUnretainedValue()
        }
        pop()
        let loop = state.eventLoop
        push(lightUserdata: Unmanaged.passUnretained(loop).toOpaque())
        lua_rawsetp(L, LuaStack.registryIndex, eventLoopKey)
        return loop
    }
}
