
/// What a worker state inherits from the state that starts it: `package.path` and `cpath`, the
/// library set (safe or standard) and the sandbox limits. Compared by the pool, which remakes its
/// warm states when the parent's settings changed.
struct WorkerSettings: Equatable, Sendable {
    var path: String?
    var cpath: String?
    var safeLibraries: Bool
    var memoryLimit: Int
    var instructionLimit: Int
    var timeLimit: Double

    /// Reads the parent's settings (raw reads only).
    init(_ stack: LuaStack) {
        let runtime = stack.runtime.pointee
        memoryLimit = runtime.memory_limit
        instructionLimit = Int(runtime.instruction_limit)
        timeLimit = runtime.time_limit
        safeLibraries = runtime.safe_libraries != 0
        path = nil
        cpath = nil
        if stack.pushPackageTable() {
            if stack.rawGet(-1, field: "path") == .string { path = stack.toString(-1) }
            stack.pop()
            if stack.rawGet(-1, field: "cpath") == .string { cpath = stack.toString(-1) }
            stack.pop()
        }
        stack.pop()
    }

    /// A fresh worker state: the libraries, `bk` (also as globals, as in bklua), the paths, the
    /// limits and the mark `bk.isWorker()` reads. No count hook unless a limit needs one (it slows
    /// the VM about 2.5x): `Worker.cancel` installs it when asked to stop.
    func makeState() throws(LuaError) -> LuaState {
        let state = safeLibraries ? try LuaState(sandbox: Sandbox(safeLibraries: true)) : try LuaState()
        state.installGlobals()
        let stack = state.stack
        if stack.pushPackageTable() {
            if let path { stack.push(path); stack.rawSet(-2, field: "path") }
            if let cpath { stack.push(cpath); stack.rawSet(-2, field: "cpath") }
        }
        stack.pop()
        stack.push(true)
        stack.rawSet(LuaStack.registryIndex, field: LuaStack.isWorkerKey)
        state.instructionLimit = instructionLimit
        state.timeLimit = timeLimit > 0 ? .nanoseconds(Int64(timeLimit * 1e9)) : nil
        state.memoryLimit = memoryLimit
        return state
    }
}

extension LuaStack {
    static let isWorkerKey = "bk.isWorker"

    /// Pushes `package.loaded.package` (raw reads); false when it is not a table (pushed anyway).
    func pushPackageTable() -> Bool {
        guard rawGet(LuaStack.registryIndex, field: "_LOADED") == .table else { return false }
        let isTable = rawGet(-1, field: "package") == .table
        remove(at: -2)
        return isTable
    }

    /// True in a worker state (bk.worker's or the pool's).
    var isWorkerState: Bool {
        let marked = rawGet(LuaStack.registryIndex, field: LuaStack.isWorkerKey) == .boolean
        pop()
        return marked
    }
}
