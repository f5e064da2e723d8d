import CLua
import CLuaShim

/// Errors in callbacks that have no caller to return to (delayed blocks, timers, observers,
/// delegates, event handlers) are reported, never raised: the loop goes on.
///
/// The handler is the function at `registry["bk.onError"]` (set by `bk.onError`); without one the
/// message goes to stderr as `bklua: message` with its traceback.
extension LuaStack {
    static let errorHandlerKey = "bk.onError"

    /// Calls the function below its `arguments` in protected mode; on failure reports the error
    /// (with traceback) and returns false. The stack is left as before the function was pushed,
    /// plus `results` values on success.
    @discardableResult
    public func callReportingErrors(arguments: Int32, results: Int32) -> Bool {
        let lock = state.lock
        lock.lock()
        defer { lock.unlock() }
        let functionIndex = top - arguments
        bk_pushcfunction(L, bk_traceback)
        insert(at: functionIndex)
        let status = bk_pcall(L, arguments, results, functionIndex)
        remove(at: functionIndex)
        if status == LUA_OK { return true }
        reportError()
        return false
    }

    /// Pops the error value on top and reports it to the error handler (or stderr).
    public func reportError() {
        bk_pusherrormessage(L, -1)
        remove(at: -2)
        let message = top
        if rawGet(LuaStack.registryIndex, field: LuaStack.errorHandlerKey) == .function {
            pushCopy(of: message)
            bk_pushcfunction(L, bk_traceback)
            insert(at: -3)
            let status = bk_pcall(L, 1, 0, top - 2)
            if status == LUA_OK {
                top = message - 1
                return
            }
            // The handler itself failed: report both, so neither is lost.
            bk_pusherrormessage(L, -1)  // a non-string error is described, not lost as "?"
            let handlerError = toString(-1) ?? "?"
            StandardStreams.writeError("bklua: error in error handler: \(handlerError)\n")
        }
        StandardStreams.writeError("bklua: \(toString(message) ?? "?")\n")
        top = message - 1
    }
}
