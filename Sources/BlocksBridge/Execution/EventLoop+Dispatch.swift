#if canImport(Glibc)
import Glibc
#endif

/// Blocks of other queues, handed to Dispatch when due, and other work outside the loop (a
/// worker) that keeps it alive.
extension EventLoop {
    /// Hands a queued block to its Dispatch queue.
    func dispatch(_ handle: BlockHandle) {
        guard let queue = handle.queue.dispatchQueue else { return }
        queue.async { [self] in runOnWorker(handle) }
    }

    /// A worker thread running a block of another queue.
    private func runOnWorker(_ handle: BlockHandle) {
        func start() -> BlockBody? {
            mutex.withLock {
                guard handle.status == .queued else { return nil }
                handle.status = .running
                return handle.body.take()
            }
        }
        let entersLua = mutex.withLock { handle.body.entersLua }
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

    /// True on a worker thread running a block of another queue (where the loop must not run).
    public var isInBackgroundBlock: Bool {
        let me = UInt(pthread_self())
        return mutex.withLock { workerThreads.contains(me) }
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
}
