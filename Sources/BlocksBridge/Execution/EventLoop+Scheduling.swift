#if canImport(Glibc)
import Glibc
#endif

/// The heap: submitting blocks, cancelling them and running those that are due.
extension EventLoop {
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
        let objectSlot = object.map { RegistrySlot(copying: $0, in: stack, queue: releases) }
        let body = BlockBody.lua(function: RegistrySlot(copying: function, in: stack, queue: releases), object: objectSlot)
        let handle = BlockHandle(loop: self, queue: queue, body: body)
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

    /// Puts `work` on the heap (under `mutex`); true when the loop must be woken for it. Nothing
    /// is scheduled once the state began closing (`stateWillClose` empties the heap under `mutex`
    /// after the state's life left `open`, so a racing insert is either seen or refused).
    func insertLocked(_ work: ScheduledWork, deadline: UInt64) -> Bool {
        if isClosed { return false }
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
        let body = handle.body.take()
        let wake = loopThread != UInt(pthread_self())
        let waiters = takeWaiters(&handle.waiters)
        mutex.unlock()
        notify(waiters)
        body.release(on: stack)
        if wake { wakeup.signal() }
    }

    // MARK: - Running due work

    /// What a due item does, decided under `mutex`, done without it. Owns the body it runs.
    enum DueAction: ~Copyable {
        case nothing
        case run(BlockHandle, BlockBody)
        case dispatch(BlockHandle)
        /// A timer's last firing, with the body it gave up.
        case fire(BlockTimer, TimerBody)
        /// A repeating timer: its body is read when it runs, in case it was invalidated meanwhile.
        case fireRepeating(BlockTimer)
    }

    /// Runs the blocks and timers due at `now` (holding the state); returns how many.
    func runDue(now: UInt64, on stack: LuaStack) -> Int {
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
    }

    /// Decides what a due item does, under `mutex` (it is already off the heap).
    private func becameDue(_ work: ScheduledWork, now: UInt64) -> DueAction {
        if let handle = work as? BlockHandle {
            guard handle.status == .scheduled else { return .nothing }
            if handle.queue.kind == .main {
                handle.status = .running
                return .run(handle, handle.body.take())
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

    private func perform(_ action: consuming DueAction, on stack: LuaStack) {
        switch consume action {
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
        case .fire(let timer, let body):
            timer.invoke(taking: body, on: stack)
        case .fireRepeating(let timer):
            timer.invokeCurrentBody(on: stack)
        }
    }

    /// Calls a block's body. A Lua function's slots are freed as they are pushed (the stack holds
    /// the values while it runs). With `asTaskOf` (main-queue blocks), a Lua block runs as a task
    /// when the tasks engine is loaded: returns true when it suspended (it goes on as a task, and
    /// the engine marks the handle finished when it ends).
    @discardableResult
    func invoke(_ body: consuming BlockBody, on stack: LuaStack?, asTaskOf handle: BlockHandle? = nil) -> Bool {
        switch consume body {
        case .none:
            return false
        case .swift(let closure):
            closure()
            return false
        case .lua(let function, let object):
            guard let stack else { return false }  // dropped: queued
            _ = stack.ensureSpace(6)
            let base = stack.top
            var arguments: Int32 = 0
            if let handle, TaskEngine.pushBlockRunner(on: stack) {
                stack.push(lightUserdata: handle.identity)
                arguments = 1
            }
            let asTask = arguments == 1
            function.pushReleasing(on: stack)
            if asTask { arguments += 1 }
            if let object {
                object.pushReleasing(on: stack)
                arguments += 1
            }
            let ok = stack.callReportingErrors(arguments: arguments, results: asTask ? 1 : 0)
            let suspended = asTask && ok && stack.toBool(-1)
            stack.top = base
            if suspended, let handle { suspendedBlocks[handle.identity] = handle }
            return suspended
        }
    }
}
