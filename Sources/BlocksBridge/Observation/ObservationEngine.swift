import CLuaShim

/// The part of observation that runs on every access of an observed table.
///
/// It is Lua, not Swift: an observed table's `__index`/`__newindex` are called by the VM on every
/// read and write of an observed key, and Lua closures keep that on the VM's fast path (no trip
/// through the C trampoline, no per-call registry lookups). The `bk.*` functions (Swift) check
/// their arguments and call into it; Swift objects' observable properties call `changed`.
///
/// How a table is observed (the metatable version of KVO's isa-swizzling): the first observation
/// gives the table its own proxy metatable, a copy of its metatable (methods, `__call`, other
/// metamethods) whose `__index`/`__newindex` see observed keys first. Only observed keys move out
/// of the table into a per-table store, so that writing them reaches `__newindex`; every other
/// field stays where it was. `__pairs`, `__len` and the global `next` account for the moved keys.
/// When the last observed key goes, the keys move back and the original metatable is restored.
enum ObservationEngine {
    /// The proxy metatable's field holding the moved (observed) fields.
    static let storeField = "__bkobserved"

    static let registryKey = "bk.observation"

    /// Pushes the engine table of the state, creating it on first use (the base library must be
    /// open by then: the engine keeps its own references to `next`, `rawget`, `xpcall`, ...).
    static func push(on stack: LuaStack) throws(LuaRaise) {
        if stack.rawGet(LuaStack.registryIndex, field: registryKey) == .table { return }
        stack.pop()
        let handler = stack.pushMessageHandler()
        do throws(EmbeddedChunkFailure) {
            try stack.runEmbeddedChunk(source, name: "=bk/ObservationEngine.lua", results: 1, handler: handler) {
                stack.pushGlobalTable()
                pushNatives(on: stack)
                return 2
            }
        } catch {
            guard case .load(let error) = error else { throw .valueOnTop }
            stack.pop()
            throw .message("observation engine: \(error)")
        }
        stack.remove(at: handler)
        stack.pushCopy(of: -1)
        stack.rawSet(LuaStack.registryIndex, field: registryKey)
    }

    /// The engine's natives, by name (annotated as `bk.ObservationNatives` in the engine).
    private static func pushNatives(on stack: LuaStack) {
        stack.pushNewTable(recordCount: 7)
        let table = stack.top
        stack.push(cFunction: bk_recordtraceback)  // the value stays; report finds its traceback
        stack.rawSet(table, field: "traceback")
        stack.push(function: "report") { stack throws(LuaRaise) in
            stack.top = 1
            // A cancelled task's cancellation ends the task, not the callback alone (not reported).
            if TaskEngine.endsCancelledTask(stack) { throw .valueOnTop }
            stack.reportError()
            return 0
        }
        stack.rawSet(table, field: "report")
        stack.push(function: "setmetatable") { stack in
            // Raw: ignores `__metatable`, so protected metatables can be proxied and restored.
            stack.top = 2
            stack.setMetatable(of: 1)
            return 0
        }
        stack.rawSet(table, field: "setmetatable")
        stack.push(function: "getmetatable") { stack in
            if !stack.pushMetatable(of: 1) { stack.pushNil() }
            return 1
        }
        stack.rawSet(table, field: "getmetatable")
        stack.push(function: "observableUserdata") { stack in
            stack.push(LuaObservers.register(userdataAt: 1, in: stack))
            return 1
        }
        stack.rawSet(table, field: "observableUserdata")
        stack.push(cFunction: bk_push_observed_write)
        stack.rawSet(table, field: "makeWrite")
        // The options observe accepts: the engine's one list of them (bk.observers' order, and the
        // fast path's decisions are checked against it).
        stack.pushNewTable(arrayCount: Int32(Observation.optionNames.count))
        for (i, name) in Observation.optionNames.enumerated() {
            stack.push(name)
            stack.rawSet(-2, Int64(i + 1))
        }
        stack.rawSet(table, field: "options")
    }

    /// Calls `engine[function]` with the arguments `pushArguments` pushes; leaves `results` values.
    /// An error (a bug, or a user `__index` raising while a key path is followed) reaches the caller.
    static func call(_ stack: LuaStack, _ function: String, results: Int32,
                     _ pushArguments: () throws(LuaRaise) -> Void) throws(LuaRaise) {
        let handler = stack.pushMessageHandler()
        try push(on: stack)
        stack.rawGet(-1, field: function)
        stack.remove(at: -2)
        let base = stack.top
        try pushArguments()
        try stack.callBlock(arguments: stack.top - base, results: results, handler: handler)
        stack.remove(at: handler)
    }

    /// The engine's Lua (`ObservationEngine.lua` beside this file, embedded by SwiftPM).
    static var source: [UInt8] { PackageResources.ObservationEngine_lua }
}
