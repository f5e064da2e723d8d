/// What a block runs: a Lua function with its argument (registry slots, pushed and freed when it
/// starts, freed when it is cancelled) or a Swift closure. Non-copyable: the slots have one owner,
/// so taking the body out of its handle (`take`) is the only way to run or free it.
enum BlockBody: ~Copyable {
    case none
    /// `object` is nil when the block takes no argument.
    case lua(function: RegistrySlot, object: RegistrySlot?)
    case swift(@Sendable () -> Void)

    /// The body, leaving `.none` in its place.
    mutating func take() -> BlockBody {
        let body = consume self
        self = .none
        return body
    }

    var entersLua: Bool {
        switch self {
        case .lua: true
        default: false
        }
    }

    /// Frees a Lua body's slots now when `stack` is given (its state's lock held), else at the
    /// state's next safe point (the release queue).
    consuming func release(on stack: LuaStack?) {
        switch consume self {
        case .lua(let function, let object):
            guard let stack else { return }  // dropped: queued
            function.release(on: stack)
            if let object { object.release(on: stack) }
        default:
            break
        }
    }
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

    init(loop: EventLoop, queue: BlockQueue, body: consuming BlockBody) {
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
