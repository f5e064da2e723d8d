#if canImport(Glibc)
import Glibc
#endif
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
///
/// The loop's code, by concern (all in `Execution/` but the timers'):
/// - `EventLoop+Drivers.swift`: the public drivers (`run`, `runDueWork`, `waitUntilIdle`, `stop`)
///   and which thread is the loop's;
/// - `EventLoop+Turn.swift`: the one turn every driver repeats (`LoopDriver`, `turn`, `drive`);
/// - `EventLoop+Limits.swift`: the sandbox's limits and interrupts, asked by each turn;
/// - `EventLoop+Scheduling.swift`: the heap: submitting, cancelling, running due blocks;
/// - `EventLoop+Dispatch.swift`: blocks of other queues, handed to Dispatch, and outside work;
/// - `EventLoop+LuaThreads.swift`: entering Lua (a pool of Lua threads) and freeing bodies;
/// - `EventLoop+TaskEngine.swift`: the tasks engine's bookkeeping (its sleeps, suspended blocks);
/// - `EventLoop+Life.swift`: the loop's life, which is the state's (`LuaStateLife`), and its close;
/// - `EventLoop+Waiting.swift`, `LoopWaiters.swift`: waiters of handles and timers (`bk.await`);
/// - `Timers/EventLoop+Timers.swift`: timers.
public final class EventLoop: LuaStateExtension, @unchecked Sendable {
    /// The state's Lua state, runtime and lock, never the `LuaState` object: the loop and its
    /// handles may outlive that object, and its last reference may go on any thread, even inside
    /// a block the loop runs. `L` is used only holding `stateLock` with the state's life open (it
    /// leaves `open` under the lock before the state closes, and a close asked for inside a frame
    /// of the state waits until that frame ends: `LuaState.deinit`); the runtime lives as long as
    /// this.
    let L: OpaquePointer
    let runtimeStorage: LuaRuntimeStorage
    var runtime: UnsafeMutablePointer<bk_runtime> { runtimeStorage.pointer }
    let stateLock: StateLock
    /// The state's one release queue: drained at each turn, which it wakes.
    let releases: RegistryReleaseQueue
    /// Guards the heap, counters and every handle's and timer's status.
    let mutex = PlainLock()
    var heap = TimerHeap()
    var nextSequence: UInt64 = 0
    /// Blocks handed to other queues that have not finished: they keep the loop alive too.
    var outstanding = 0
    /// Those of them `unref()`ed (not in `outstanding`): a wait on the loop still counts them.
    var unreferencedOutside = 0
    /// The thread driving the loop: work scheduled from any other thread wakes it. Changed only
    /// when a driver begins or ends (`beginDriving`, `endDriving`) or, with no driver running, by
    /// a host calling `runDueWork`: fixed while drivers run (their thread, or 0: everything wakes
    /// it, under an async driver, whose turns move between threads, or drivers on two threads).
    var loopThread: UInt
    /// The threads of the drivers running, innermost last (0: an async driver).
    var driverThreads: [UInt] = []
    /// The thread of a host calling `runDueWork` itself, outside any driver.
    var hostThread: UInt
    let stopRequested = Atomic<Bool>(false)
    let interruptRequested = Atomic<Bool>(false)
    let wakeup = WakeupPipe()
    /// Idle Lua threads (with their registry references) for running blocks: each entry into Lua
    /// gets a stack of its own, whatever the thread that owns the state's main stack is doing.
    var idleThreads: [(ref: Int32, thread: OpaquePointer)] = []
    let waitQueue = DispatchQueue(label: "bk.loop.wait")
    /// Threads running a block of another queue right now: `run` refuses to start on them.
    var workerThreads: [UInt] = []
    /// Main-queue blocks that suspended as tasks, until the engine reports their end (loop thread,
    /// holding the state). The engine knows them by their identity, a light userdata: pushing the
    /// handle itself would make a userdata (and a finalizer) for every block the loop runs.
    var suspendedBlocks: [UnsafeMutableRawPointer: BlockHandle] = [:]
    /// The tasks engine's own delayed calls (a sleep, a timeout), by identity until they ran or
    /// were cancelled (holding the state): Lua holds only the light userdata (`scheduleForEngine`).
    var engineBlocks: [UnsafeMutableRawPointer: BlockHandle] = [:]

    /// This loop's entry in the state's interrupt wakers: an interrupt ends a wait at once.
    let wakerToken: Int

    init(state: LuaState) {
        L = state.L
        runtimeStorage = state.runtimeStorage
        stateLock = state.lock
        releases = state.releases
        loopThread = UInt(pthread_self())
        hostThread = loopThread
        wakerToken = state.runtimeStorage.wakers.add { [wakeup] in wakeup.signal() }
        releases.setWake { [wakeup] in wakeup.signal() }
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
        if rawGetRegistry(key: eventLoopKey) == .lightUserdata, let address = toUserdata(-1) {
            pop()
            return Unmanaged<EventLoop>.fromOpaque(address).takeUnretainedValue()
        }
        pop()
        let loop = state.eventLoop
        push(lightUserdata: Unmanaged.passUnretained(loop).toOpaque())
        rawSetRegistry(key: eventLoopKey)
        return loop
    }
}
