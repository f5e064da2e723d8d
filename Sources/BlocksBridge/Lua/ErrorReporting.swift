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
        // The value raised stays as it is (the handler gets it); its traceback goes on the side.
        bk_pushcfunction(L, bk_recordtraceback)
        insert(at: functionIndex)
        // The caller's slots are checked after the call (see callBlock): a rewritten one is reported.
        let status = bk_pcall_guarded(L, arguments, results, functionIndex)
        remove(at: functionIndex)
        if status == LUA_OK { return true }
        reportError()
        return false
    }

    /// Pops the error value on top and reports it to the error handler, as `f(message, value)`
    /// (or to stderr).
    public func reportError() {
        let value = top
        bk_pusherrorreport(L, value)
        deliverReport(value: value)
    }

    /// Reports the error value at `value` with the message on top (both popped; nothing may be
    /// above them): what `reportError` does once the message is made.
    func deliverReport(value: Int32) {
        let message = top
        if rawGet(LuaStack.registryIndex, field: LuaStack.errorHandlerKey) == .function {
            pushCopy(of: message)
            pushCopy(of: value)
            bk_pushcfunction(L, bk_traceback)
            insert(at: -4)
            let status = bk_pcall(L, 2, 0, top - 3)
            if status == LUA_OK {
                top = value - 1
                return
            }
            // The handler itself failed: report both, so neither is lost.
            bk_pusherrormessage(L, -1)  // a non-string error is described, not lost as "?"
            let handlerError = toString(-1) ?? "?"
            StandardStreams.writeError("bklua: error in error handler: \(handlerError)\n")
        }
        StandardStreams.writeError("bklua: \(toString(message) ?? "?")\n")
        runtime.pointee.default_reports += 1
        top = value - 1
    }
}

extension LuaState {
    /// How many errors the default reporter wrote to stderr (no `bk.onError` handler was set, or
    /// the handler itself failed): bklua exits with status 1 when any was.
    public var errorsReportedToStandardError: Int { Int(runtime.pointee.default_reports) }
}
