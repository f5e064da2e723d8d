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
    /// A pool state's DAP thread and name, kept between the chunks it runs for `poolSession`: one
    /// thread for the state's life (started as it first joins, exited as the state closes).
    weak var poolSession: DebugSession?
    var poolThread = 0
    var poolName = ""
    func stateWillClose() {
        session = nil
        poolSession?.threadExited(poolThread)
        poolSession = nil
    }
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
    /// `pooled`: a pool state, which joins for each chunk it runs and keeps its thread between them
    /// ("`label` N", N counting the pool states that joined).
    func attachWorker(_ stack: LuaStack, label: String, pooled: Bool = false) -> DebugWorkerTarget? {
        let link = stack.state.debugLink
        let kept: (thread: Int, name: String)? = pooled && link.poolSession === self ? (link.poolThread, link.poolName) : nil
        guard let client = bk_debugger_create() else { return nil }
        let joined: (slot: Int, worker: DebugWorker)? = clientsLock.withLock {
            let joined: (slot: Int, worker: DebugWorker)? = lock.withLock {
                guard !closedToWorkers else { return nil }
                var slot = 1
                while workers[slot] != nil { slot += 1 }
                // Its ids, [slot, slot + 1) * idsPerSlot, must stay below 2^31 (DAP's ids are 32-bit).
                guard slot < DebugSession.slots else { return nil }
                var name = "\(label) \(slot)"
                if let kept {
                    name = kept.name
                } else if pooled {
                    poolStatesJoined += 1
                    name = "\(label) \(poolStatesJoined)"
                }
                return (slot, DebugWorker(thread: kept?.thread ?? 0, name: name, client: client))
            }
            guard var joined else { return nil }
            if kept == nil { joined.worker.thread = newThreadID() }
            lock.withLock { workers[joined.slot] = joined.worker }
            if kept != nil { listWhileIdle(joined.worker.thread, name: nil) }  // listed as a worker now
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
        link.session = self  // its own workers join too
        if kept == nil {
            event("thread", .object([("reason", .string("started")), ("threadId", .number(Double(worker.thread)))]))
        }
        if pooled {
            link.poolSession = self
            link.poolThread = worker.thread
            link.poolName = worker.name
        }
        return DebugWorkerTarget(session: self, slot: slot, thread: worker.thread, name: pooled ? worker.name : nil, client: client)
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
    private let poolName: String?  // a pool state's: its thread stays (listed) between chunks
    private var client: OpaquePointer?

    fileprivate init(session: DebugSession, slot: Int, thread: Int, name poolName: String?, client: OpaquePointer) {
        self.session = session
        self.slot = slot
        self.thread = thread
        self.poolName = poolName
        self.client = client
    }

    func detach(on stack: LuaStack) {
        guard let client else { return }
        self.client = nil
        session.leave(slot: slot)
        stack.detachDebugger(client)
        stack.state.debugLink.session = nil
        bk_debugger_destroy(client)
        if let poolName {
            session.listWhileIdle(thread, name: poolName)  // until the state closes (DebugLink)
        } else {
            session.event("thread", .object([("reason", .string("exited")), ("threadId", .number(Double(thread)))]))
        }
    }
}
