import CLuaShim
#if canImport(Glibc)
import Glibc
#endif

/// One debugging session of the Debug Adapter Protocol: the requests a client sends, answered on the
/// transport's reader thread when they need no Lua (initialize, breakpoints, threads, pause,
/// disconnect) and handed to the stopped Lua thread otherwise (stack, variables, evaluate, steps),
/// where the agent (`DebugAgent.lua`) takes them with `host.next()`. The session never touches the
/// Lua state from the reader thread: breakpoints go to the C hook client (`bk_debugger`) under its
/// own lock, and a pause is an atomic the hook reads.
package final class DebugSession: @unchecked Sendable {
    /// What `launch` asked for (bklua --dap).
    package struct Launch: Sendable {
        package var program: String
        package var arguments: [String]
        package var workingDirectory: String?
        package var environment: [(String, String)]
        package var stopOnEntry: Bool
    }

    package enum Mode: Sendable { case launch, attach }

    package let mode: Mode
    /// The hook client (breakpoints, steps, pause); owned here.
    package let hookClient: OpaquePointer

    let lock = ConditionLock()
    private var transport: DebugTransport?
    private var launch: Launch?
    private var configured = false
    private var connectionEnded = false
    /// This connection's `initialize` was answered: DAP allows no event before that answer (a
    /// script that runs while a client connects makes tasks; the client asks `threads` later).
    private var initializeAnswered = false
    /// Where this connection's lines and columns start: 1, or 0 when `initialize` says
    /// `linesStartAt1`/`columnsStartAt1: false` (breakpoints' and frames' positions are converted).
    private var lineBase = 1
    private var columnBase = 1
    /// The stopped threads, by agent slot (0: the state the session attached to; a worker state's
    /// slot otherwise): each state has at most one, and each blocks in its own `host.next()`.
    private var stops: [Int: Stop] = [:]
    /// Connections ended so far: a stop made under an earlier count goes on running (its client
    /// left), even when the next client has connected before the stopped thread woke (a count, not
    /// a flag the next connection clears).
    private var connectionsEnded = 0
    private var ended = false
    /// The worker states the debugger is attached to, by slot (DebugSession+Workers.swift).
    var workers: [Int: DebugWorker] = [:]
    /// DAP thread ids: 1 is the main code; every other thread (a task, a coroutine that stopped, a
    /// worker state) takes the next one, for every state the session debugs, so they never clash.
    private var nextThreadID = 2
    /// The threads `threads` lists besides the main code and the worker states (live tasks), by id.
    private var liveThreads: [Int: String] = [:]
    /// Threads announced but listed only while stopped (plain coroutines), until they end.
    private var unlistedThreads: Set<Int> = []
    /// Pool states that joined so far (their threads are named "worker pool N" by it).
    var poolStatesJoined = 0
    /// stopDebugServer ran: no worker state joins any more.
    var closedToWorkers = false
    /// Taken around every change of the hook clients' breakpoints and of the worker list, so a
    /// worker joining gets every breakpoint set meanwhile, and no client is used after it left.
    let clientsLock = PlainLock()
    /// scriptEnded was called.
    package var hasEnded: Bool { lock.withLock { ended } }
    private let breakpoints = DebugBreakpoints()

    typealias Request = (seq: Int, command: String, arguments: JSONValue)
    private struct Stop {
        var thread: Int
        var name: String
        var connectionsEnded: Int  // when it stopped: its client left once the count moved on
        var requests: [Request] = []
        /// A continue or step is queued: a pause sent after it is for the run that follows.
        var resuming = false
    }

    /// Called (on the reader thread) for `terminate`, and for `disconnect` in launch mode, after the
    /// response went out: bklua ends the process; a host interrupts the script.
    package var onTerminate: @Sendable () -> Void = {}
    /// Called when the client leaves (disconnect or end of the connection), after the script was
    /// let go.
    package var onConnectionEnded: @Sendable () -> Void = {}

    package init(mode: Mode) {
        self.mode = mode
        guard let client = bk_debugger_create() else { fatalError("bklua: out of memory (debugger)") }
        hookClient = client
    }

    deinit { bk_debugger_destroy(hookClient) }

    // MARK: Connection

    /// Serves `transport` on a new thread until it ends.
    package func serve(_ transport: DebugTransport) -> Bool {
        lock.withLock {
            self.transport = transport
            connectionEnded = false
            initializeAnswered = false
            lineBase = 1
            columnBase = 1
        }
        return startDetachedThread { [self] in
            transport.readMessages({ message in self.handle(message) }, failed: { why in
                self.output("bklua: debug adapter: \(why); closing the connection\n", category: "important")
            })
            self.connectionClosed(transport)
        }
    }

    /// Serves the clients that connect to `listener`, one at a time, on a thread of its own, until
    /// the listener is closed.
    package func acceptClients(from listener: DebugListener) -> Bool {
        startDetachedThread { [self] in
            while let transport = listener.accept() {
                guard serve(transport) else { transport.close(); continue }
                waitUntilConnectionEnds()
            }
        }
    }

    private func connectionClosed(_ closing: DebugTransport) {
        // Breakpoints, filters and steps go first: a stopped thread let go below must not stop
        // again on them (before the next client has even been answered).
        if lock.withLock({ transport === closing && !connectionEnded }) { releaseScript() }
        let current = lock.withLock { () -> Bool in
            guard transport === closing, !connectionEnded else { return false }
            connectionEnded = true
            connectionsEnded += 1
            lock.broadcast()
            return true
        }
        closing.close()
        guard current else { return }
        onConnectionEnded()
    }

    /// Ends the session's connection (stopDebugServer, bklua at exit).
    package func closeConnection() {
        let current = lock.withLock { transport }
        current?.close()
    }

    // MARK: Sending

    /// Sends one message on the current connection, which numbers it (`seq`).
    private func send(_ members: [(String, JSONValue)]) {
        lock.withLock { transport }?.send(members)
    }

    package func event(_ name: String, _ body: JSONValue? = nil) {
        // The flag and the connection read together: a new connection's flag starts false.
        guard let out = lock.withLock({ initializeAnswered ? transport : nil }) else { return }
        var members: [(String, JSONValue)] = [("type", .string("event")), ("event", .string(name))]
        if let body { members.append(("body", body)) }
        out.send(members)
    }

    package func respond(_ requestSeq: Int, _ command: String, body: JSONValue? = nil) {
        var members: [(String, JSONValue)] = [
            ("type", .string("response")), ("request_seq", .number(Double(requestSeq))),
            ("success", .bool(true)), ("command", .string(command)),
        ]
        if let body { members.append(("body", body)) }
        send(members)
    }

    package func fail(_ requestSeq: Int, _ command: String, _ message: String) {
        send([
            ("type", .string("response")), ("request_seq", .number(Double(requestSeq))),
            ("success", .bool(false)), ("command", .string(command)), ("message", .string(message)),
            ("body", .object([("error", .object([("id", .number(1)), ("format", .string(message)), ("showUser", .bool(false))]))])),
        ])
    }

    /// An `output` event (the script's stdout and stderr, log points, the adapter's own notes).
    package func output(_ text: String, category: String) {
        event("output", .object([("category", .string(category)), ("output", .string(text))]))
    }

    /// The script ended: `exited` with its status, then `terminated`.
    package func scriptEnded(status: Int32) {
        // Threads still listed end with the script (a coroutine that stopped last had no later
        // stop or task event to end it).
        let left = lock.withLock { () -> [Int] in
            ended = true
            defer { liveThreads = [:]; unlistedThreads = [] }
            return (Array(liveThreads.keys) + Array(unlistedThreads)).sorted()
        }
        for id in left { event("thread", .object([("reason", .string("exited")), ("threadId", .number(Double(id)))])) }
        event("exited", .object([("exitCode", .number(Double(status)))]))
        event("terminated")
    }

    // MARK: Waiting (bklua)

    /// Waits for `launch` and `configurationDone` (nil when the client left first).
    package func waitForLaunch() -> Launch? {
        lock.withLock {
            while !(launch != nil && configured) && !connectionEnded { lock.wait() }
            return connectionEnded ? nil : launch
        }
    }

    /// Waits for `configurationDone` (`--dap-wait`, `startDebugServer(wait: true)`).
    package func waitForConfiguration() {
        lock.withLock {
            while !configured && !connectionEnded { lock.wait() }
        }
    }

    /// Waits until the current client leaves.
    package func waitUntilConnectionEnds() {
        lock.withLock {
            while !connectionEnded { lock.wait() }
        }
    }

    /// Waits up to `seconds` for the client to leave (after `terminated`).
    package func waitForDisconnect(seconds: Double) {
        let deadline = MonotonicClock.now() + UInt64(seconds * 1e9)
        lock.withLock {
            // No client ever connected: nobody to wait for (bklua --dap-listen ended a second late).
            while transport != nil && !connectionEnded && MonotonicClock.now() < deadline { lock.wait(until: deadline) }
        }
    }

    // MARK: Requests

    /// Answers one message as if the client sent it (the reader thread's entry; benchmarks and
    /// tests set breakpoints through it).
    package func handle(_ message: JSONValue?) {
        guard let message, message["type"]?.string == "request", let seq = message["seq"]?.int,
              let command = message["command"]?.string else {
            output("bklua: debug adapter: ignored a message that is not a DAP request\n", category: "important")
            return
        }
        let arguments = message["arguments"] ?? .object([])
        switch command {
        case "initialize":
            lock.withLock {
                lineBase = arguments["linesStartAt1"]?.bool == false ? 0 : 1
                columnBase = arguments["columnsStartAt1"]?.bool == false ? 0 : 1
            }
            respond(seq, command, body: DebugSession.capabilities)
            lock.withLock { initializeAnswered = true }
            event("initialized")
        case "launch":
            guard mode == .launch, let program = arguments["program"]?.string else {
                fail(seq, command, mode == .launch ? "launch needs \"program\" (a Lua file)" : "this adapter was started to attach: use an attach configuration")
                return
            }
            var environment: [(String, String)] = []
            if case let .object(members)? = arguments["env"] {
                for (key, value) in members { if let text = value.string { environment.append((key, text)) } }
            }
            let request = Launch(
                program: program,
                arguments: (arguments["args"]?.array ?? []).compactMap(\.string),
                workingDirectory: arguments["cwd"]?.string,
                environment: environment,
                stopOnEntry: arguments["stopOnEntry"]?.bool ?? false)
            lock.withLock {
                launch = request
                lock.broadcast()
            }
            respond(seq, command)
        case "attach":
            respond(seq, command)
        case "configurationDone":
            lock.withLock {
                configured = true
                lock.broadcast()
            }
            respond(seq, command)
        case "setBreakpoints":
            let lineBase = positionBases.line
            respond(seq, command, body: clientsLock.withLock { breakpoints.setLines(arguments, lineBase: lineBase, in: hookClients()) })
        case "setFunctionBreakpoints":
            respond(seq, command, body: clientsLock.withLock { breakpoints.setFunctions(arguments, in: hookClients()) })
        case "setExceptionBreakpoints":
            var filters: Int32 = 0
            for filter in arguments["filters"]?.array ?? [] {
                if filter.string == "uncaught" { filters |= BK_DEBUG_UNCAUGHT }
                if filter.string == "all" { filters |= BK_DEBUG_ALL }
            }
            clientsLock.withLock {
                for client in hookClients() { bk_debugger_set_exceptions(client, filters) }
            }
            respond(seq, command, body: .object([("breakpoints", .array([]))]))
        case "threads":
            var threads: [(id: Int, name: String)] = [(1, "main")]
            lock.withLock {
                // A plain coroutine of the main state is listed while it is stopped.
                if let main = stops[0], main.thread != 1, liveThreads[main.thread] == nil {
                    threads.append((main.thread, main.name))
                }
                threads += liveThreads.sorted { $0.key < $1.key }.map { (id: $0.key, name: $0.value) }
                for slot in workers.keys.sorted() {
                    if let worker = workers[slot] { threads.append((worker.thread, worker.name)) }
                }
            }
            respond(seq, command, body: .object([("threads", .array(threads.map { thread in
                .object([("id", .number(Double(thread.id))), ("name", .string(thread.name))])
            }))]))
        case "pause":
            pause(thread: arguments["threadId"]?.int)
            respond(seq, command)
        case "disconnect", "terminate":
            let terminates = command == "terminate" || (mode == .launch && arguments["terminateDebuggee"]?.bool != false)
            respond(seq, command)
            if terminates {
                if command == "terminate" { event("terminated") }
                onTerminate()
            }
            let current = lock.withLock { transport }
            if let current { connectionClosed(current) }
        case "stackTrace" where otherThreadOfAStoppedState(arguments["threadId"]?.int):
            // Not the stopped thread (another task, main waiting for it, an unknown id): no frames,
            // rather than the stopped thread's.
            respond(seq, command, body: .object([("stackFrames", .array([])), ("totalFrames", .number(0))]))
        default:
            let handedOver = lock.withLock { () -> Bool in
                // A stop of a client that has left is ending: it takes no request of the next one.
                guard let slot = stopSlot(for: arguments), stops[slot]?.connectionsEnded == connectionsEnded else { return false }
                stops[slot]?.requests.append((seq, command, arguments))
                if DebugSession.resumeCommands.contains(command) { stops[slot]?.resuming = true }
                lock.broadcast()
                return true
            }
            if !handedOver {
                if DebugSession.resumeCommands.contains(command) {
                    let all = lock.withLock { workers.isEmpty }
                    respond(seq, command, body: command == "continue" ? .object([("allThreadsContinued", .bool(all))]) : nil)
                } else if DebugSession.whileStopped.contains(command) {
                    fail(seq, command, "the script is running: pause it first")
                } else {
                    fail(seq, command, "'\(command)' is not supported")
                }
            }
        }
    }

    /// The requests that let a stopped thread go on.
    private static let resumeCommands: Set<String> = ["continue", "next", "stepIn", "stepOut"]
    private static let whileStopped: Set<String> = ["stackTrace", "scopes", "variables", "evaluate", "setVariable",
                                                    "loadedSources", "source", "exceptionInfo"]

    static let capabilities: JSONValue = .object([
        ("supportsConfigurationDoneRequest", .bool(true)),
        ("supportsFunctionBreakpoints", .bool(true)),
        ("supportsConditionalBreakpoints", .bool(true)),
        ("supportsHitConditionalBreakpoints", .bool(true)),
        ("supportsLogPoints", .bool(true)),
        ("supportsEvaluateForHovers", .bool(true)),
        ("supportsSetVariable", .bool(true)),
        ("supportsTerminateRequest", .bool(true)),
        ("supportTerminateDebuggee", .bool(true)),
        ("supportsLoadedSourcesRequest", .bool(true)),
        ("supportsExceptionInfoRequest", .bool(true)),
        ("exceptionBreakpointFilters", .array([
            .object([("filter", .string("uncaught")), ("label", .string("Uncaught errors")), ("default", .bool(false))]),
            .object([("filter", .string("all")), ("label", .string("All errors (also caught by pcall)")), ("default", .bool(false))]),
        ])),
    ])

    // MARK: Threads

    /// The stop a request is for (under `lock`): by its thread, else by the slot its frame or
    /// variables reference encodes (`DebugSession.idsPerSlot`), else the main state's stop, else
    /// any. Nil when that thread runs.
    private func stopSlot(for arguments: JSONValue) -> Int? {
        if let thread = arguments["threadId"]?.int {
            if let slot = stops.first(where: { $0.value.thread == thread })?.key { return slot }
            if workers.values.contains(where: { $0.thread == thread }) { return nil }
            return stops[0] != nil ? 0 : nil  // the main state's (a client may name any of its threads)
        }
        for key in ["frameId", "variablesReference"] {
            if let id = arguments[key]?.int {
                let slot = id / DebugSession.idsPerSlot
                return stops[slot] != nil ? slot : nil
            }
        }
        if stops[0] != nil { return 0 }
        return stops.keys.min()
    }

    /// Whether `thread` is none of the stopped threads while the main state is stopped (a worker's
    /// thread that runs is not: the request fails as while running).
    private func otherThreadOfAStoppedState(_ thread: Int?) -> Bool {
        guard let thread else { return false }
        return lock.withLock {
            stops[0] != nil && !stops.values.contains { $0.thread == thread }
                && !workers.values.contains { $0.thread == thread }
        }
    }

    /// The first line's and the first column's numbers on this connection (1 unless the client
    /// counts from 0).
    var positionBases: (line: Int, column: Int) { lock.withLock { (lineBase, columnBase) } }

    /// Frame ids and variables references of the agent in slot k lie in [k, k + 1) * idsPerSlot.
    static let idsPerSlot = 1 << 20
    /// Agent slots: their ids stay below 2^31, as DAP's (32-bit) ids must.
    static let slots = (1 << 31) / idsPerSlot

    /// A new DAP thread id (coroutines that stop, worker states).
    func newThreadID() -> Int {
        lock.withLock {
            defer { nextThreadID += 1 }
            return nextThreadID
        }
    }

    /// `pause`: the worker state the thread names, else the main state (any of its threads).
    private func pause(thread: Int?) {
        clientsLock.withLock {
            // A stopped state is not paused again (it would stop once more after `continue`); an
            // evaluation it runs is ended instead.
            let (client, stopped): (OpaquePointer?, Bool) = lock.withLock {
                // A stop whose continue (or step) is queued: the pause is for the run that follows
                // (it was dropped as if for the stop, when sent right behind the continue).
                func stoppedIn(_ slot: Int) -> Bool { stops[slot].map { !$0.resuming } ?? false }
                if let thread, let (slot, worker) = workers.first(where: { $0.value.thread == thread }) {
                    return (worker.client, stoppedIn(slot))
                }
                return (hookClient, stoppedIn(0))
            }
            guard let client else { return }
            if stopped { bk_debugger_interrupt_evaluation(client) } else { bk_debugger_pause(client) }
        }
    }

    /// Every hook client: the main state's and the worker states' (under `clientsLock`).
    private func hookClients() -> [OpaquePointer] {
        [hookClient] + lock.withLock { workers.keys.sorted().compactMap { workers[$0]?.client } }
    }

    /// The client left: every state's breakpoints, filters and steps are cleared; they run on.
    package func releaseScript() {
        clientsLock.withLock {
            for client in hookClients() { bk_debugger_release_script(client) }
        }
    }

    /// Whether a stop in the main state stops every thread (no worker state runs meanwhile).
    var mainStopStopsAll: Bool { lock.withLock { workers.isEmpty } }

    // MARK: The agent's side (the stopped Lua thread)

    /// The next request for the stopped thread; nil when it must go on running (the client left).
    func nextStoppedRequest(slot: Int) -> Request? {
        lock.withLock {
            // Its client is gone (or none is connected): it runs on.
            let stoppedUnder = stops[slot]?.connectionsEnded ?? connectionsEnded
            func clientLeft() -> Bool { connectionsEnded != stoppedUnder || connectionEnded }
            while (stops[slot]?.requests.isEmpty ?? true) && !clientLeft() { lock.wait() }
            guard !clientLeft(), let request = stops[slot]?.requests.first else { return nil }
            stops[slot]?.requests.removeFirst()
            return request
        }
    }

    /// Whether the client the stop in `slot` serves is still connected: an answer to a client that
    /// left must not go to the next one (its `request_seq` numbers another conversation).
    func stopsClientIsConnected(slot: Int) -> Bool {
        lock.withLock { stops[slot].map { $0.connectionsEnded == connectionsEnded && !connectionEnded } ?? false }
    }

    func markStopped(body: String, slot: Int, thread: Int, name: String) {
        lock.withLock { stops[slot] = Stop(thread: thread, name: name, connectionsEnded: connectionsEnded) }
        event("stopped", .raw(body))
    }

    func markResumed(slot: Int) {
        let late = lock.withLock { () -> [Request] in
            guard let stop = stops.removeValue(forKey: slot) else { return [] }
            // Queued by a client that has left since: nobody to answer.
            return stop.connectionsEnded == connectionsEnded && !connectionEnded ? stop.requests : []
        }
        // Requests that arrived as the thread resumed: answered as while running.
        for request in late { fail(request.seq, request.command, "the script is running: pause it first") }
    }

    /// A new DAP thread (a task, a worker state): its id, after a `thread` event; `listed`: shown by
    /// `threads` until `threadExited` (a plain coroutine that stops is shown only while stopped).
    func threadStarted(name: String, listed: Bool) -> Int {
        let id = lock.withLock { () -> Int in
            defer { nextThreadID += 1 }
            if listed { liveThreads[nextThreadID] = name } else { unlistedThreads.insert(nextThreadID) }
            return nextThreadID
        }
        event("thread", .object([("reason", .string("started")), ("threadId", .number(Double(id)))]))
        return id
    }

    /// A pool state's thread between two chunks (`name`), listed by `threads` as a live task is;
    /// nil: it runs a chunk again (listed as a worker).
    func listWhileIdle(_ id: Int, name: String?) {
        lock.withLock { liveThreads[id] = name }
    }

    /// The thread `id` ended: a `thread` event, and `threads` no longer lists it.
    func threadExited(_ id: Int) {
        guard lock.withLock({ liveThreads.removeValue(forKey: id) != nil || unlistedThreads.remove(id) != nil }) else { return }
        event("thread", .object([("reason", .string("exited")), ("threadId", .number(Double(id)))]))
    }

    func lineBreakpoint(path: String, line: Int) -> DebugBreakpoints.Entry? { breakpoints.line(path: path, line: line) }
    func functionBreakpoint(name: String) -> DebugBreakpoints.Entry? { breakpoints.function(name: name) }
}
