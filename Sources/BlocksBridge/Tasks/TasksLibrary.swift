import CLua
import CLuaShim

extension BKLibrary {
    /// Tasks: sequential async code on the loop (`bk.async`, `bk.await`, `bk.sleep`, ...).
    ///
    /// The functions are Lua (`TaskEngine.lua`), so that awaiting can yield the task's coroutine
    /// with no C or Swift frame in between. The module is built before the standard libraries
    /// are open (bklua, sandboxes), so `bk.async` and the others start as small Lua stubs that
    /// load the engine on first use and then call straight through to it.
    public static let tasks = BKLibrary(name: "Tasks", functions: [], luaFunctionNames: TaskEngine.names,
                                        setUp: { stack, module in
        TaskEngine.installStubs(on: stack, module: module)
    })
}

/// Loads `TaskEngine.lua` once per state, on first use.
enum TaskEngine {
    /// Registry keys: the engine's functions, its own table (`kinds`, for other families'
    /// awaitables) and `bk.cancelled`.
    static let functionsKey = "bk.tasks.functions"
    static let registryKey = "bk.tasks"
    static let cancelledKey = "bk.cancelled"
    /// A list of functions called with the engine's table once it is loaded: how other families
    /// add their awaitables (`extend(on:with:)`).
    static let extensionsKey = "bk.tasks.extensions"

    static let names = ["async", "await", "sleep", "awaitAll", "awaitAny", "currentTask", "debounce", "throttle"]


    /// Each stub asks the loader once, then calls the engine's function (a Lua call, so it can yield).
    /// A literal, and no standard library used: it runs at start-up, before they are open.
    static let stubs = """
        local module, load, names = ...
        for i = 1, #names do
          local name, real = names[i], nil
          module[name] = function(...)
            if real == nil then real = load()[name] end
            return real(...)
          end
        end
        """

    static func installStubs(on stack: LuaStack, module: Int32) {
        stack.withRestoredTop {
            pushCancelled(on: stack)
            stack.pushCopy(of: -1)
            stack.rawSet(LuaStack.registryIndex, field: cancelledKey)
            stack.rawSet(module, field: "cancelled")
            let handler = stack.pushMessageHandler()
            do throws(LuaError) {
                try stack.load(stubs, name: "=bk/tasks")
            } catch {
                StandardStreams.writeError("bk: \(error.message)\n")
                return
            }
            stack.pushCopy(of: module)
            stack.push(function: "async") { stack throws(LuaRaise) in
                try pushFunctions(on: stack)
                return 1
            }
            stack.pushNewTable(arrayCount: Int32(names.count))
            for (i, name) in names.enumerated() {
                stack.push(name)
                stack.rawSet(-2, Int64(i + 1))
            }
            if stack.protectedCall(arguments: 3, results: 0, handler: handler) != LUA_OK {
                StandardStreams.writeError("bk: tasks: \(stack.toString(-1) ?? "?")\n")
            }
        }
    }

    /// Pushes the engine's `runBlock(handle|nil, f, ...)` when the engine is loaded; false (nothing
    /// pushed) before. Delayed and timer blocks run through it, as tasks that may suspend.
    static func pushBlockRunner(on stack: LuaStack) -> Bool {
        if stack.rawGet(LuaStack.registryIndex, field: registryKey) != .table {
            stack.pop()
            return false
        }
        let found = stack.rawGet(-1, field: "runBlock") == .function
        stack.remove(at: -2)
        if !found { stack.pop() }
        return found
    }

    /// Reports, through `bk.onError`, every failed task no one has awaited (the engine's
    /// `reportUnawaited`); does nothing when the engine never loaded. Lua code runs: the caller
    /// holds the state's lock.
    static func reportUnawaitedFailures(on stack: LuaStack) {
        stack.withRestoredTop {
            guard stack.ensureSpace(4) else { return }
            let handler = stack.pushMessageHandler()
            guard stack.rawGet(LuaStack.registryIndex, field: registryKey) == .table,
                  stack.rawGet(-1, field: "reportUnawaited") == .function else { return }
            stack.remove(at: -2)
            // Each report is a protected call of its own: only the state's limits (memory, a
            // tripped sandbox budget) stop this, and nothing could be reported then anyway.
            _ = stack.protectedCall(arguments: 0, results: 0, handler: handler)
        }
    }

    /// Registers `loader` (pushed by `push`) to be called with the engine's table when the engine
    /// loads: another family's awaitables (workers, channels) plug into `kinds` and `waitFor` there.
    static func extend(on stack: LuaStack, with push: (LuaStack) -> Void) {
        stack.withRestoredTop {
            if stack.rawGet(LuaStack.registryIndex, field: extensionsKey) != .table {
                stack.pop()
                stack.pushNewTable()
                stack.pushCopy(of: -1)
                stack.rawSet(LuaStack.registryIndex, field: extensionsKey)
            }
            let list = stack.top
            push(stack)
            stack.rawSet(list, stack.rawLength(list) + 1)
        }
    }

    private static func runExtensions(on stack: LuaStack, engine: Int32, handler: Int32) throws(LuaRaise) {
        try stack.withRestoredTop { () throws(LuaRaise) in
            guard stack.rawGet(LuaStack.registryIndex, field: extensionsKey) == .table else { return }
            let list = stack.top
            var i: Int64 = 1
            while stack.rawGet(list, i) == .function {
                stack.pushCopy(of: engine)
                guard stack.protectedCall(arguments: 1, results: 0, handler: handler) == LUA_OK else {
                    throw .message("tasks: \(stack.toString(-1) ?? "?")")
                }
                i += 1
            }
        }
    }

    /// Loads the engine (and its extensions) if need be, then pushes the function `name` of the
    /// table at registry `key` (`functionsKey`, `registryKey`, an extension's); false (nothing
    /// pushed) when the engine cannot load (a state without the coroutine library) or there is none.
    static func pushFunction(_ name: String, ofTableAt key: String, on stack: LuaStack) -> Bool {
        let base = stack.top
        do throws(LuaRaise) {
            try pushFunctions(on: stack)
        } catch {
            stack.top = base
            return false
        }
        stack.top = base
        guard stack.rawGet(LuaStack.registryIndex, field: key) == .table, stack.rawGet(-1, field: name) == .function else {
            stack.top = base
            return false
        }
        stack.remove(at: -2)
        return true
    }

    /// Whether the error value on top is `bk.cancelled` raised in the coroutine of a task that was
    /// cancelled: a dispatcher that reports its callbacks' errors (observers, event handlers) raises
    /// it on instead, so the task ends there, silently, as a cancellation anywhere else ends it.
    /// Raw reads only (the engine keeps the cancelled tasks' coroutines in `cancelledThreads`).
    static func endsCancelledTask(_ stack: LuaStack) -> Bool {
        guard stack.ensureSpace(3) else { return false }
        let value = stack.top
        defer { stack.top = value }
        stack.rawGet(LuaStack.registryIndex, field: cancelledKey)
        guard stack.rawEqual(value, -1) else { return false }
        guard stack.rawGet(LuaStack.registryIndex, field: registryKey) == .table,
              stack.rawGet(-1, field: "cancelledThreads") == .table else { return false }
        stack.pushThread()
        return stack.rawGet(-2) == .boolean
    }

    /// `bk.cancelled`: a unique value whose tostring is "cancelled", that scripts cannot change.
    private static func pushCancelled(on stack: LuaStack) {
        stack.pushNewTable()
        stack.pushNewTable(recordCount: 4)
        stack.push("bk.cancelled")
        stack.rawSet(-2, field: "__name")
        stack.push("bk.cancelled")
        stack.rawSet(-2, field: "__metatable")
        stack.push(function: "__tostring", runsAtClose: true) { stack in
            stack.push("cancelled")
            return 1
        }
        stack.rawSet(-2, field: "__tostring")
        stack.push(function: "__newindex") { _ throws(LuaRaise) in
            throw .message("bk.cancelled cannot be changed")
        }
        stack.rawSet(-2, field: "__newindex")
        stack.setMetatable(of: -2)
    }

    /// Loads `RateLimiting.lua` (bk.debounce, bk.throttle) with the engine's natives and table, and
    /// puts its functions into the engine's functions, just below `engine`.
    private static func loadRateLimiting(on stack: LuaStack, natives: Int32, engine: Int32,
                                         handler: Int32) throws(LuaRaise) {
        do throws(EmbeddedChunkFailure) {
            try stack.runEmbeddedChunk(PackageResources.RateLimiting_lua, name: "=bk/RateLimiting.lua", results: 1,
                                       handler: handler) {
                stack.pushGlobalTable()
                BKModule.pushModule(on: stack)
                stack.pushCopy(of: natives)
                stack.pushCopy(of: engine)
                return 4
            }
        } catch {
            if case .load(let error) = error { throw .message("tasks: \(error.message)") }
            throw .message("tasks: \(stack.toString(-1) ?? "?")")
        }
        guard stack.type(at: -1) == .table else {
            throw .message("tasks: \(stack.toString(-1) ?? "?")")
        }
        let limiters = stack.top
        for name in ["debounce", "throttle"] {
            stack.rawGet(limiters, field: name)
            stack.rawSet(engine - 1, field: name)
        }
        stack.pop()
    }

    /// Pushes the engine's table of functions, loading it on first use (the base, coroutine and
    /// table libraries must be open by then) and putting its functions into the module table.
    static func pushFunctions(on stack: LuaStack) throws(LuaRaise) {
        if stack.rawGet(LuaStack.registryIndex, field: functionsKey) == .table { return }
        stack.pop()
        let handler = stack.pushMessageHandler()
        TaskPrimitives.push(on: stack)
        let natives = stack.top  // given to the engine and to RateLimiting.lua
        do throws(EmbeddedChunkFailure) {
            try stack.runEmbeddedChunk(PackageResources.TaskEngine_lua, name: "=bk/TaskEngine.lua", results: 2,
                                       handler: handler) {
                stack.pushGlobalTable()
                BKModule.pushModule(on: stack)
                stack.pushCopy(of: natives)
                return 3
            }
        } catch {
            if case .load(let error) = error { throw .message("tasks: \(error.message)") }
            let message = stack.toString(-1) ?? "?"
            throw .message("tasks need the base, coroutine and table libraries (\(message))")
        }
        let engine = stack.top  // below it: the functions
        stack.pushCopy(of: engine)
        stack.rawSet(LuaStack.registryIndex, field: registryKey)
        try loadRateLimiting(on: stack, natives: natives, engine: engine, handler: handler)
        try runExtensions(on: stack, engine: engine, handler: handler)
        stack.pop()
        stack.remove(at: natives)
        let functions = stack.top
        stack.pushCopy(of: functions)
        stack.rawSet(LuaStack.registryIndex, field: functionsKey)
        BKModule.pushModule(on: stack)
        if stack.type(at: -1) == .table {
            let module = stack.top
            stack.pushGlobalTable()
            let globals = stack.top
            let hasGlobals = stack.type(at: globals) == .table  // debug.getregistry() can change it
            for name in names {
                // The global bk_NAME follows when it is still the stub (bk.NAME and bk_NAME stay
                // the same function); one the script changed is left alone.
                var globalIsStub = false
                if hasGlobals {
                    stack.rawGet(module, field: name)
                    stack.rawGet(globals, field: "bk_" + name)
                    globalIsStub = stack.rawEqual(-1, -2)
                    stack.pop(2)
                }
                stack.rawGet(functions, field: name)
                if globalIsStub {
                    stack.pushCopy(of: -1)
                    stack.rawSet(globals, field: "bk_" + name)
                }
                stack.rawSet(module, field: name)
            }
            stack.pop()
            // Copies between states name bk's functions: these are new values of those names.
            stack.runtime.pointee.known_values_changed = 1
        }
        stack.pop()
        stack.remove(at: handler)
    }
}
