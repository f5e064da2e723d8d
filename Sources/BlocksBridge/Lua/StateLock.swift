#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// The lock that keeps Lua code of one state on one thread at a time.
///
/// Recursive and owned by a thread: every entry into Lua (`call`, `callReportingErrors`,
/// `LuaState.run`, the event loop, background blocks) takes it, and nested entries on the owning
/// thread only count. A thread that waits for something a worker must do (the loop sleeping, a
/// REPL reading a line) gives it up completely with `withoutHolding`.
public final class StateLock: @unchecked Sendable {
    /// How many states' locks the calling thread holds. Code that would take another state's lock
    /// while holding one (a cross-state notification) posts to that state's loop instead.
    static var heldByCurrentThread: Int { Int(bitPattern: pthread_getspecific(heldLocksKey)) }

    private static func countHeld(_ delta: Int) {
        pthread_setspecific(heldLocksKey, UnsafeRawPointer(bitPattern: heldByCurrentThread + delta))
    }

    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    /// The owning thread (`pthread_self`), 0 when free. Only its owner stores its own id, so a
    /// thread reading its own id here knows it holds the lock.
    private let owner = Atomic<UInt>(0)
    /// Nesting depth; touched only by the owner.
    private var depth = 0
    /// Work for the end of the owner's outermost hold (touched only by the owner): the close of a
    /// state whose last reference went inside one of its own frames (see `LuaState.deinit`).
    private var atRelease: [() -> Void] = []

    public init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    public var isHeldByCurrentThread: Bool {
        owner.load(ordering: .relaxed) == UInt(pthread_self())
    }

    public func lock() {
        let me = UInt(pthread_self())
        if owner.load(ordering: .relaxed) == me {
            depth += 1
            return
        }
        pthread_mutex_lock(mutex)
        owner.store(me, ordering: .relaxed)
        depth = 1
        Self.countHeld(1)
    }

    /// Takes the lock if this thread holds it or it is free; false (without waiting) when another
    /// thread holds it. For work that must not wait for another thread, such as releasing a
    /// `LuaRef` on a thread the lock holder may be waiting for.
    public func tryLock() -> Bool {
        let me = UInt(pthread_self())
        if owner.load(ordering: .relaxed) == me {
            depth += 1
            return true
        }
        guard pthread_mutex_trylock(mutex) == 0 else { return false }
        owner.store(me, ordering: .relaxed)
        depth = 1
        Self.countHeld(1)
        return true
    }

    public func unlock() {
        if depth == 1, !atRelease.isEmpty {
            // Still held: the work runs as the last frame of the state on this thread.
            let work = atRelease
            atRelease = []
            for item in work { item() }
        }
        depth -= 1
        if depth == 0 {
            owner.store(0, ordering: .relaxed)
            Self.countHeld(-1)
            pthread_mutex_unlock(mutex)
        }
    }

    /// Whether this thread holds the lock in an enclosing frame as well as the caller's own hold.
    var isHeldByEnclosingFrame: Bool { isHeldByCurrentThread && depth > 1 }

    /// Runs `work` when this thread's outermost hold ends (after every frame that holds the lock
    /// on this thread has returned; not while `withoutHolding` lends it out). The caller holds it.
    func runWhenReleased(_ work: @escaping () -> Void) {
        atRelease.append(work)
    }

    public func withLock<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        lock()
        defer { unlock() }
        return try body()
    }

    /// Runs `body` with the lock released by this thread (all nesting levels), then takes it back
    /// at the same depth. Without the lock, `body` is simply run.
    public func withoutHolding<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        guard isHeldByCurrentThread else { return try body() }
        let saved = depth
        depth = 0
        owner.store(0, ordering: .relaxed)
        Self.countHeld(-1)
        pthread_mutex_unlock(mutex)
        defer {
            pthread_mutex_lock(mutex)
            owner.store(UInt(pthread_self()), ordering: .relaxed)
            depth = saved
            Self.countHeld(1)
        }
        return try body()
    }
}

/// The per-thread count behind `StateLock.heldByCurrentThread`.
private let heldLocksKey: pthread_key_t = {
    var key = pthread_key_t()
    pthread_key_create(&key, nil)
    return key
}()
