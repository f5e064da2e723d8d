import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// The warm worker states of one state (`bk.workerCount()` of them at most), which `bk.apply`,
/// `bk.parallelMap` and hosts (`LuaState.runOnPool`) run Lua functions in.
///
/// A pool state lives as long as its parent and keeps what blocks leave in it between calls: its
/// globals and loaded modules are not reset (only its stack is cleared, and its sandbox budget is
/// fresh for each job). The states are remade when the parent's settings (paths, limits) change.
/// Used only by the thread holding the parent state; each job holds its pool state's own lock.
final class WorkerPool: LuaStateExtension {
    /// How many states jobs are split over (`bk.setWorkerCount`); default one per core.
    var count = max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) {
        didSet { if idle.count > count { idle.removeFirst(idle.count - count) } }
    }
    private var idle: [LuaState] = []
    private var settings: WorkerSettings?
    /// The pool's threads: Dispatch's, for jobs that each hold one pool state.
    static let queue = DispatchQueue(label: "bk.workers", qos: .userInitiated, attributes: .concurrent)

    /// `n` warm states for the parent's `settings` (made on first use).
    func take(_ n: Int, settings: WorkerSettings) throws(LuaError) -> [LuaState] {
        if self.settings != settings {
            idle.removeAll()
            self.settings = settings
        }
        var states: [LuaState] = []
        while states.count < n {
            if let state = idle.popLast() { states.append(state) } else { states.append(try settings.makeState()) }
        }
        return states
    }

    /// Returns states after a job (their stacks are cleared); those past `count` are closed.
    func giveBack(_ states: [LuaState]) {
        for state in states {
            state.lock.withLock { state.stack.top = 0 }
        }
        idle.append(contentsOf: states)
        if idle.count > count { idle.removeFirst(idle.count - count) }  // closes them
    }

    func stateWillClose() {
        idle.removeAll()
    }
}

extension LuaState {
    var workerPool: WorkerPool { extensionObject(WorkerPool.self) { WorkerPool() } }
}
