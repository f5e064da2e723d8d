import Dispatch

/// Where a block runs: the main queue (the thread running the loop) or a Dispatch queue whose
/// worker threads take the state's lock while they are in Lua.
public final class BlockQueue: LuaBridged, Sendable {
    public enum Kind: Sendable {
        case main, serial, concurrent
    }

    public let label: String
    public let kind: Kind
    /// nil for the main queue, whose blocks the loop runs itself.
    let dispatchQueue: DispatchQueue?

    /// The loop's own queue: blocks run on the thread running `bk.run` / `runDueWork`.
    public static let main = BlockQueue(label: "main", kind: .main, dispatchQueue: nil)
    /// Dispatch's global concurrent queue.
    public static let background = BlockQueue(label: "background", kind: .concurrent,
                                              dispatchQueue: .global())

    private init(label: String, kind: Kind, dispatchQueue: DispatchQueue?) {
        self.label = label
        self.kind = kind
        self.dispatchQueue = dispatchQueue
    }

    /// A new serial (blocks run one after another, in order) or concurrent queue.
    public convenience init(label: String, concurrent: Bool = false) {
        self.init(label: label, kind: concurrent ? .concurrent : .serial,
                  dispatchQueue: DispatchQueue(label: "bk." + label, attributes: concurrent ? .concurrent : []))
    }

    public static let luaClass = LuaClass(
        name: "bk.Queue",
        properties: [
            .readOnly("label") { (queue: BlockQueue, stack) in stack.push(queue.label) },
            .readOnly("isConcurrent") { (queue: BlockQueue, stack) in stack.push(queue.kind == .concurrent) },
            .readOnly("isMain") { (queue: BlockQueue, stack) in stack.push(queue.kind == .main) },
        ],
        metamethods: [
            BKFunction("__tostring") { stack in
                let queue = stack.toObject(BlockQueue.self, at: 1)
                stack.push("bk.Queue(\(queue?.label ?? "?"))")
                return 1
            },
        ])
}
