#if canImport(Glibc)
import Glibc
#endif

/// What ends a driver of the loop (`run(seconds:)`, `run(until:deadline:)`, `run(seconds:until:)`,
/// `waitUntilIdle`, `waitAsync`): each is the same `turn`, repeated, with its own rules.
struct LoopDriver {
    enum Pending {
        /// Ends (`.idle`) when no referenced work is left (`run`, `waitUntilIdle`: `unref()`ed
        /// work does not keep it).
        case referenced
        /// Ends when nothing at all is scheduled (a wait whose condition any work may make true),
        /// `unref()`ed blocks running on other queues included.
        case any
        /// Never ends for want of work: a worker or a channel wakes it (each wait is capped).
        case ignored
    }
    var pending: Pending
    /// Monotonic nanoseconds after which it ends (`.timeout`).
    var end: UInt64? = nil
    /// Whether `stop` (and bklua's `interrupt`) ends it; the request is consumed.
    var stops = true
    /// Whether its condition is asked before the turn runs any due work.
    var doneBeforeWork = false
    /// Whether cancelling the Swift task of an async driver ends it (`.stopped`).
    var endsWhenCancelled = true

    /// The longest wait of a driver that waits with nothing scheduled (`.ignored`).
    static let idleWait: UInt64 = 50_000_000
}

/// What a turn decided: the driver ends, or waits (at most `nanoseconds`; nil: until woken; 0:
/// turns again at once).
enum LoopTurn {
    case ended(LoopWaitOutcome)
    case wait(nanoseconds: UInt64?)
}

extension EventLoop {
    /// One turn of the loop, shared by every driver: runs the work due now, then decides whether
    /// the driver ends (its condition, the state closing, `stop`, the state's sandbox limits or an
    /// interrupt, no work left, its end) or how long it may wait for the next work, a wake-up or
    /// the next check of the limits. Takes the state itself (the async drivers hold nothing).
    func turn(_ driver: LoopDriver, until isDone: () -> Bool) -> LoopTurn {
        stateLock.lock()
        defer { stateLock.unlock() }
        if driver.doneBeforeWork, isDone() { return .ended(.done) }
        if isClosed { return .ended(.idle) }
        runDueWork()
        if isDone() { return .ended(.done) }
        if isClosed { return .ended(.idle) }  // a block dropped the state's last reference
        if driver.stops, stopRequested.exchange(false, ordering: .relaxed) {
            return .ended(interruptRequested.exchange(false, ordering: .relaxed) ? .interrupted : .stopped)
        }
        if limitsStop() { return .ended(.limited) }
        let (pending, next) = mutex.withLock {
            (driver.pending == .any ? heap.count + outstanding + unreferencedOutside : heap.referencedCount + outstanding,
             heap.firstDeadline)
        }
        if driver.pending != .ignored, pending == 0 { return .ended(.idle) }
        let now = MonotonicClock.now()
        var timeout = next.map { $0 > now ? $0 - now : 0 }
        if driver.pending == .ignored { timeout = timeout ?? LoopDriver.idleWait }
        if let end = driver.end {
            if now >= end { return .ended(.timeout) }
            timeout = min(timeout ?? .max, end - now)
        }
        if let cap = limitsWaitCap() { timeout = min(timeout ?? .max, cap) }
        return .wait(nanoseconds: timeout)
    }

    /// Drives the loop on this thread until `driver` ends: turns, waiting between them without
    /// the state lock (background blocks and other host threads run meanwhile).
    func drive(_ driver: LoopDriver, until isDone: () -> Bool) -> LoopWaitOutcome {
        stateLock.lock()
        defer { stateLock.unlock() }
        let me = UInt(pthread_self())
        beginDriving(on: me)
        defer { endDriving(on: me) }
        while true {
            switch turn(driver, until: isDone) {
            case .ended(let outcome):
                return outcome
            case .wait(let nanoseconds):
                if nanoseconds == 0 { continue }
                stateLock.withoutHolding { wakeup.wait(nanoseconds: nanoseconds) }
            }
        }
    }

    /// `drive` from an async context: waits suspend the task (on a Dispatch thread, not the
    /// cooperative pool), and a cancelled task ends it (`.stopped`). Turns may run on different
    /// threads, so no thread is the loop's meanwhile: all scheduling wakes it.
    func driveAsync(_ driver: LoopDriver, until isDone: () -> Bool) async -> LoopWaitOutcome {
        beginDriving(on: 0)
        defer { endDriving(on: 0) }
        while true {
            if driver.endsWhenCancelled, Task.isCancelled { return .stopped }
            switch turn(driver, until: isDone) {
            case .ended(let outcome):
                return outcome
            case .wait(let nanoseconds):
                if nanoseconds == 0 {
                    await Task.yield()
                } else {
                    await sleepAsync(nanoseconds: nanoseconds)
                }
            }
        }
    }
}
