#if canImport(Glibc)
import Glibc
#endif

/// The loop's public drivers and which thread is the loop's. Each driver is `turn` repeated
/// (`EventLoop+Turn.swift`); `runDueWork` is one turn's due work, for hosts with a poll loop.
extension EventLoop {
    /// Runs every block and timer due now (work that becomes due meanwhile waits for the next
    /// call) without waiting; returns how many ran. Drains `wakeupDescriptor` and the state's
    /// release queue.
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
            releases.drain(on: stack)
            return runDue(now: MonotonicClock.now(), on: stack)
        } ?? 0
    }

    /// Seconds until the next block or timer is due: nil when nothing is scheduled, 0 when work is
    /// due now. (Blocks running on other queues are not scheduled work: `wakeupDescriptor` tells.)
    public var secondsUntilNextWork: Double? {
        if releases.hasWaiting { return 0 }
        return mutex.withLock {
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

    /// Drives the loop from an async context until nothing is pending, `stop`, the state's limits
    /// or an interrupt stop it, or the task is cancelled. Waiting happens on a Dispatch thread,
    /// not on the cooperative pool.
    public func waitUntilIdle() async {
        stopRequested.store(false, ordering: .relaxed)
        _ = await driveAsync(LoopDriver(pending: .referenced)) { false }
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

    func wake() { wakeup.signal() }

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

    // MARK: - The loop's thread

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

    /// Whether the calling thread drives the loop (under `mutex`).
    var isLoopThreadLocked: Bool { loopThread == UInt(pthread_self()) }

    /// The loop's thread now (0: every scheduling wakes it), for tests.
    var currentLoopThread: UInt { mutex.withLock { loopThread } }
}
