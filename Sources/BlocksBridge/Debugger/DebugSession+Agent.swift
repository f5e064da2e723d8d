import CLuaShim

/// The agent's Swift natives (`host` in DebugAgent.lua): they run on the stopped Lua thread, inside
/// the hook, and never raise.
extension DebugSession {
    /// Loads the agent into the state and attaches the hook client (on the state's thread).
    /// Its workers and pool states join the session (`debugLink`).
    package func attach(to stack: LuaStack, stopOnEntry: Bool) throws(LuaError) {
        try stack.attachDebugger(hookClient, agent: PackageResources.DebugAgent_lua, stopOnEntry: stopOnEntry) { stack in
            pushHostNatives(on: stack, slot: 0, worker: nil)
        }
        stack.state.debugLink.session = self
    }

    /// The agent's `host` table. `slot`: which stop is the agent's (its frame and variables ids
    /// start at slot * idsPerSlot); `worker`: a worker state's thread, which every stop there is.
    func pushHostNatives(on stack: LuaStack, slot: Int, worker: (thread: Int, name: String)?) {
        stack.pushNewTable(recordCount: 15)
        stack.push(slot * DebugSession.idsPerSlot)
        stack.rawSet(-2, field: "idBase")
        stack.push(DebugSession.idsPerSlot)
        stack.rawSet(-2, field: "idRange")
        if let worker {
            stack.push(worker.thread)
            stack.rawSet(-2, field: "workerThread")
            stack.push(worker.name)
            stack.rawSet(-2, field: "workerName")
        }
        stack.push(function: "newThread") { [self] stack in
            stack.push(newThreadID())
            return 1
        }
        stack.rawSet(-2, field: "newThread")
        stack.push(function: "stopsAll") { [self] stack in
            stack.push(worker == nil && mainStopStopsAll)
            return 1
        }
        stack.rawSet(-2, field: "stopsAll")
        stack.push(function: "positionBases") { [self] stack in
            let bases = positionBases
            stack.push(bases.line)
            stack.push(bases.column)
            return 2
        }
        stack.rawSet(-2, field: "positionBases")
        stack.push(function: "next") { [self] stack in
            guard let request = nextStoppedRequest(slot: slot) else { return 0 }
            stack.push(request.seq)
            stack.push(request.command)
            DebugSession.push(request.arguments, on: stack, depth: 0)
            return 3
        }
        stack.rawSet(-2, field: "next")
        stack.push(function: "respond") { [self] stack in
            guard stopsClientIsConnected(slot: slot) else { return 0 }
            let seq = Int(stack.toInteger(1) ?? 0)
            let command = stack.toString(2) ?? ""
            let text = stack.toString(4) ?? ""
            if stack.toBool(3) { respond(seq, command, body: .raw(text)) } else { fail(seq, command, text) }
            return 0
        }
        stack.rawSet(-2, field: "respond")
        stack.push(function: "stopped") { [self] stack in
            markStopped(body: stack.toString(1) ?? "{}", slot: slot, thread: Int(stack.toInteger(2) ?? 1), name: stack.toString(3) ?? "main")
            return 0
        }
        stack.rawSet(-2, field: "stopped")
        stack.push(function: "resumed") { [self] _ in
            markResumed(slot: slot)
            return 0
        }
        stack.rawSet(-2, field: "resumed")
        stack.push(function: "output") { [self] stack in
            output(stack.toString(1) ?? "", category: stack.toString(2) ?? "console")
            return 0
        }
        stack.rawSet(-2, field: "output")
        stack.push(function: "event") { [self] stack in
            event(stack.toString(1) ?? "output", .raw(stack.toString(2) ?? "{}"))
            return 0
        }
        stack.rawSet(-2, field: "event")
        stack.push(function: "breakpoint") { [self] stack in
            guard let path = stack.toString(1), let line = stack.toInteger(2),
                  let entry = lineBreakpoint(path: path, line: Int(line)) else { return 0 }
            return DebugSession.push(entry, on: stack)
        }
        stack.rawSet(-2, field: "breakpoint")
        stack.push(function: "functionBreakpoint") { [self] stack in
            guard let name = stack.toString(1), let entry = functionBreakpoint(name: name) else { return 0 }
            return DebugSession.push(entry, on: stack)
        }
        stack.rawSet(-2, field: "functionBreakpoint")
        // threadStarted(name, listed) -> id; threadExited(id): tasks (and worker states) as threads.
        stack.push(function: "threadStarted") { [self] stack in
            stack.push(threadStarted(name: stack.toString(1) ?? "task", listed: stack.toBool(2)))
            return 1
        }
        stack.rawSet(-2, field: "threadStarted")
        stack.push(function: "threadExited") { [self] stack in
            if let id = stack.toInteger(1) { threadExited(Int(id)) }
            return 0
        }
        stack.rawSet(-2, field: "threadExited")
    }

    private static func push(_ entry: DebugBreakpoints.Entry, on stack: LuaStack) -> Int32 {
        stack.push(entry.id)
        for text in [entry.condition, entry.hitCondition, entry.logMessage] {
            if let text { stack.push(text) } else { stack.pushNil() }
        }
        return 4
    }

    /// A request's arguments as Lua values (objects and arrays as tables; null as nil).
    static func push(_ value: JSONValue, on stack: LuaStack, depth: Int) {
        guard depth < 220, stack.ensureSpace(4) else { stack.pushNil(); return }
        switch value {
        case .null, .raw: stack.pushNil()
        case let .bool(b): stack.push(b)
        case let .number(n):
            if let i = value.int { stack.push(i) } else { stack.push(n) }
        case let .string(s): stack.push(s)
        case let .array(items):
            stack.pushNewTable(arrayCount: Int32(min(items.count, Int(LuaStack.maximumSizeHint))))
            for (i, item) in items.enumerated() {
                push(item, on: stack, depth: depth + 1)
                stack.rawSet(-2, Int64(i + 1))
            }
        case let .object(members):
            stack.pushNewTable(recordCount: Int32(min(members.count, Int(LuaStack.maximumSizeHint))))
            for (key, item) in members {
                push(item, on: stack, depth: depth + 1)
                stack.rawSet(-2, field: key)
            }
        }
    }
}
