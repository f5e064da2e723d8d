import CLua
import CLuaShim

extension LuaStack {
    /// Loads the debugger's agent (`source`, called with the C natives and the table
    /// `pushHostNatives` pushes) and attaches the hook client `client` to this state, with the
    /// agent as what a stop calls. On the thread running the state.
    package func attachDebugger(_ client: OpaquePointer, agent source: [UInt8], stopOnEntry: Bool,
                                pushHostNatives: (LuaStack) -> Void) throws(LuaError) {
        try withRestoredTop { () throws(LuaError) in
            try load(bytes: source, name: "=bk/DebugAgent.lua", mode: "t")
            let status = bk_debugger_pushnatives(L, client)
            if status != LUA_OK { throw popError(status: status) }
            pushHostNatives(self)
            try call(arguments: 2, results: 1)
            guard type(at: -1) == .function else {
                throw LuaError(kind: .runtime, message: "bk: the debugger's agent did not load")
            }
            bk_debugger_attach(L, client, stopOnEntry ? 1 : 0)
        }
    }

    /// Pushes the attached debugger's watcher of tasks (the tasks engine's `taskObserver`), or nil.
    package func pushDebuggerTaskObserver() { bk_debugger_push_task_observer(L) }

    /// Detaches the hook client: no hook remains for it.
    package func detachDebugger(_ client: OpaquePointer) { bk_debugger_detach(L, client) }
}
