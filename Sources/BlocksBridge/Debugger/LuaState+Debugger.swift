import CLuaShim

/// A state's debug server (`startDebugServer`): the listening socket and the one session; kept as
/// the state's extension object.
final class DebugServer: @unchecked Sendable, LuaStateExtension {
    let lock = PlainLock()
    var listener: DebugListener?
    var session: DebugSession?

    /// The session outlives the state (its transport's thread holds it): it must not poke the
    /// state's runtime (breakpoints set, a pause asked) once the state is gone.
    func stateWillClose() {
        if let session = lock.withLock({ session }) { bk_debugger_forget_state(session.hookClient) }
    }
}

extension LuaState {
    /// Starts a Debug Adapter Protocol server for this state: a debugger (VS Code, nvim-dap, any DAP
    /// client) attaches over TCP to `host:port` (loopback by default; port 0 picks a free one) and
    /// can then debug every script the host runs in this state. With `wait`, returns only once a
    /// client has attached and configured its breakpoints. Returns the port.
    @discardableResult
    public func startDebugServer(host: String = "127.0.0.1", port: Int = 0, wait: Bool = false) throws -> Int {
        let server = extensionObject(DebugServer.self) { DebugServer() }
        guard server.lock.withLock({ server.listener == nil }) else { throw DebugServerError.alreadyRunning }
        let listener = try DebugListener(host: host, port: port)
        let session = DebugSession(mode: .attach)
        let interrupt = interruptHandle
        session.onTerminate = { interrupt.interrupt() }
        try withHostCall(startingBudget: false) { (stack: LuaStack) throws(LuaError) in
            try session.attach(to: stack, stopOnEntry: false)
        }
        server.lock.withLock {
            server.listener = listener
            server.session = session
        }
        if !session.acceptClients(from: listener) {
            listener.close()
            throw DebugServerError.cannotListen("no thread for the server")
        }
        if wait { session.waitForConfiguration() }
        return listener.port
    }

    /// The session of the running debug server (benchmarks set breakpoints through it).
    package var debugSession: DebugSession? {
        guard let server = existingExtensionObject(DebugServer.self) else { return nil }
        return server.lock.withLock { server.session }
    }

    /// Stops the debug server: the client is disconnected, the script runs on without breakpoints.
    public func stopDebugServer() {
        guard let server = existingExtensionObject(DebugServer.self) else { return }
        let (listener, session) = server.lock.withLock { () -> (DebugListener?, DebugSession?) in
            defer { server.listener = nil; server.session = nil }
            return (server.listener, server.session)
        }
        listener?.close()
        guard let session else { return }
        session.closeToWorkers()
        session.closeConnection()
        session.releaseScript()
        try? withHostCall(startingBudget: false) { (stack: LuaStack) throws(LuaError) in
            stack.detachDebugger(session.hookClient)
            stack.state.debugLink.session = nil
        }
    }
}
