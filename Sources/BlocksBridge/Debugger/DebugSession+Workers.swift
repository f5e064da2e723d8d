import CLuaShim

/// A worker state the debugger is attached to: its DAP thread, its name and its own hook client
/// (a client's per-thread fields belong to one OS thread, so each state has its own; breakpoints
/// are set in all of them).
struct DebugWorker {
    var thread: Int
    var name: String
    var client: OpaquePointer
}

/// The session debugging a state, for the workers and pool states it starts (which join it as
/// profiled runs do): set by `DebugSession.attach`, cleared by `stopDebugServer` and when a
/// worker state leaves. Read and written by the thread holding the state's lock.
final class DebugLink: LuaStateExtension {
    var session: DebugSession?
    func stateWillClose() { session = nil }
}

extension LuaState {
    var debugLink: DebugLink { extensionObject(DebugLink.self) { DebugLink() } }
    /// The session debugging this state (its lock is held), for the workers it starts; nil when
    /// none (then a worker gets no hook at all).
    var debuggerForWorkers: DebugSession? { existingExtensionObject(DebugLink.self)?.session }
}

extension DebugSession {
    /// Attaches the debugger to a worker state on the thread about to run it (holding its lock):
    /// its own hook client with the session's breakpoints, the agent, a DAP thread named
    /// "`label` N" and a `thread` event. Nil when the session takes no more workers or the agent
    /// cannot load (the worker then runs undebugged). Detach on the same thread before it lets go.
    func attachWorker(_ stack: LuaStack, label: String) -> DebugWorkerTarget? {
        guard let client = bk_debugger_create() else { return nil }
        let joined: (slot: Int, worker: DebugWorker)? = clientsLock.withLock {
            let joined: (slot: Int, worker: DebugWorker)? = lock.withLock {
                guard !closedToWorkers else { return nil }
                var slot = 1
                while workers[slot] != nil { slot += 1 }
                return (slot, DebugWorker(thread: 0, name: "\(label) \(slot)", client: client))
            }
            guard var joined else { return nil }
            joined.worker.thread = newThreadID()
            lock.withLock { workers[joined.slot] = joined.worker }
            bk_debugger_copy_breakpoints(client, hookClient)
            return joined
        }
        guard let (slot, worker) = joined else {
            bk_debugger_destroy(client)
            return nil
        }
        do throws(LuaError) {
            try stack.attachDebugger(client, agent: PackageResources.DebugAgent_lua, stopOnEntry: false) { stack in
                pushHostNatives(on: stack, slot: slot, worker: (worker.thread, worker.name))
            }
        } catch {
            leave(slot: slot)
            bk_debugger_destroy(client)
            return nil
        }
        stack.state.debugLink.session = self  // its own workers join too
        event("thread", .object([("reason", .string("started")), ("threadId", .number(Double(worker.thread)))]))
        return DebugWorkerTarget(session: self, slot: slot, thread: worker.thread, client: client)
    }

    /// Takes a worker state off the list: no breakpoint, pause or release reaches its client after.
    fileprivate func leave(slot: Int) {
        clientsLock.withLock {
            _ = lock.withLock { workers.removeValue(forKey: slot) }
        }
    }

    /// No worker state joins from now on (stopDebugServer).
    func closeToWorkers() { lock.withLock { closedToWorkers = true } }
}

/// A worker state being debugged: detach it on the thread that runs it, holding its lock, before
/// the state is given back or closed.
final class DebugWorkerTarget {
    private let session: DebugSession
    private let slot: Int
    private let thread: Int
    private var client: OpaquePointer?

    fileprivate init(session: DebugSession, slot: Int, thread: Int, client: OpaquePointer) {
        self.session = session
        self.slot = slot
        self.thread = thread
        self.client = client
    }

    func detach(on stack: LuaStack) {
        guard let client else { return }
        self.client = nil
        session.leave(slot: slot)
        stack.detachDebugger(client)
        stack.state.debugLink.session = nil
        bk_debugger_destroy(client)
        session.event("thread", .object([("reason", .string("exited")), ("threadId", .number(Double(thread)))]))
    }
}
