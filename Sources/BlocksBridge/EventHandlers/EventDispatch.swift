import CLua
import CLuaShim

/// The Lua function that calls the handlers of one `sendActionsForControlEvents`
/// (`EventDispatch.lua` beside this file), made once per state.
enum EventDispatch {
    static let registryKey = "bk.events.dispatch"

    /// Pushes the dispatcher, loading it on first use; false (nothing pushed) when it cannot be
    /// made: a state without the base library (no `xpcall`) calls its handlers from Swift instead.
    static func push(on stack: LuaStack) -> Bool {
        if stack.rawGet(LuaStack.registryIndex, field: registryKey) == .function { return true }
        stack.pop()
        let base = stack.top
        stack.pushGlobalTable()
        let found = stack.type(at: -1) == .table && stack.rawGet(-1, field: "xpcall") == .function
        guard found else {
            stack.top = base
            return false
        }
        stack.remove(at: -2)  // the global table
        let xpcall = stack.top
        let handler = stack.pushMessageHandler()
        do throws(EmbeddedChunkFailure) {
            try stack.runEmbeddedChunk(PackageResources.EventDispatch_lua, name: "=bk/EventDispatch.lua", results: 1,
                                       handler: handler) {
                stack.pushCopy(of: xpcall)
                stack.push(cFunction: bk_recordtraceback)  // the value stays; report finds its traceback
                stack.push(function: "report") { stack throws(LuaRaise) in
                    stack.top = 1
                    // A cancelled task's cancellation ends the task, not the callback alone (not reported).
                    if TaskEngine.endsCancelledTask(stack) { throw .valueOnTop }
                    stack.reportError()
                    return 0
                }
                return 3
            }
        } catch {
            stack.top = base
            return false
        }
        guard stack.type(at: -1) == .function else {
            stack.top = base
            return false
        }
        stack.pushCopy(of: -1)
        stack.rawSet(LuaStack.registryIndex, field: registryKey)
        stack.replace(at: base + 1)
        stack.top = base + 1
        return true
    }
}
