import CLua

/// What a block or timer runs: a Lua function (registry references, released the moment the
/// block is cancelled or has started) or a Swift closure.
enum BlockBody {
    case none
    /// `object` is LUA_NOREF when the block takes no object.
    case lua(function: Int32, object: Int32)
    case swift(@Sendable () -> Void)
}

/// A block waiting to run: returned by `performBlock`, cancelled with `cancel`.
public final class BlockHandle: ScheduledWork, LuaBridged, @unchecked Sendable {
    enum Status {
        /// On the heap, waiting for its delay.
        case scheduled
        /// Handed to another queue, not started.
        case queued
        case running, finished, cancelled
    }

    public let queue: BlockQueue
    /// Strong: the loop's heap holds the handle only while it is scheduled, and the loop drops its
    /// heap when the state closes (`stateWillClose`), so no cycle outlives the state.
    let loop: EventLoop
    // Guarded by the loop's mutex.
    var status = Status.scheduled
    var body: BlockBody
    /// Lua functions (with their argument) to call on the main queue once the block finished or
    /// was cancelled: how a task awaiting the handle is woken (`EventLoop.watch`).
    var waiters = LuaWaiterList()

    init(loop: EventLoop, queue: BlockQueue, body: BlockBody) {
        self.loop = loop
        self.queue = queue
        self.body = body
    }

    /// Whether it counts in the loop's outstanding work now (under the mutex): queued, or running
    /// on another queue (a main-queue block, even one that suspended as a task, does not).
    var isOutsideWorkLocked: Bool {
        status == .queued || (status == .running && queue.kind != .main)
    }

    /// How the tasks engine knows a handle it holds no userdata of (a light userdata).
    var identity: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    private func read<T>(_ value: () -> T) -> T {
        loop.mutex.withLock(value)
    }

    public var isCancelled: Bool { read { status == .cancelled } }
    public var isFinished: Bool { read { status == .finished } }

    /// The block will not run; after it ran (or once cancelled) this does nothing.
    public func cancel() {
        loop.cancel(self, on: nil)
    }

    public static let luaClass = LuaClass(
        name: "bk.BlockHandle",
        methods: [
            BKFunction("cancel") { stack throws(LuaRaise) in
                let handle = try stack.checkObject(BlockHandle.self, at: 1)
                handle.loop.cancel(handle, on: stack)
                return 0
            },
        ] + BKFunction.loopReferenceMethods(BlockHandle.self) { $0.loop },
        properties: [
            .readOnly("isCancelled") { (handle: BlockHandle, stack) in stack.push(handle.isCancelled) },
            .readOnly("isFinished") { (handle: BlockHandle, stack) in stack.push(handle.isFinished) },
            .readOnly("queue") { (handle: BlockHandle, stack) in stack.push(object: handle.queue) },
        ],
        metamethods: [
            BKFunction("__tostring") { stack in
                let state = stack.toObject(BlockHandle.self, at: 1).map { handle -> String in
                    if handle.isCancelled { return "cancelled" }
                    return handle.isFinished ? "finished" : "pending"
                }
                stack.push("bk.BlockHandle(\(state ?? "?"))")
                return 1
            },
        ],
        methodsFirst: true)
}
