import CLua
import CLuaShim

/// Protected calls: the only way Swift enters Lua.
extension LuaStack {
    /// Pushes the message handler for blocks and returns its index: the error value stays as the
    /// block raised it (a helper passes it on unchanged, as `pcall` or `table.sort` would) and its
    /// traceback is recorded for whoever reports it later. Push it once and reuse it for many calls
    /// (a helper calling a block per element).
    public func pushMessageHandler() -> Int32 {
        bk_pushcfunction(L, bk_recordtraceback)
        return lua_gettop(L)
    }

    /// Pushes the message handler for a function at the top of a state of its own (a worker's
    /// function, a pool state's block): nothing in Lua catches its error there, so a debugger's
    /// `uncaught` filter stops where it was raised. Otherwise as `pushMessageHandler`.
    public func pushUncaughtMessageHandler() -> Int32 {
        bk_pushcfunction(L, bk_hostcalltraceback)
        return lua_gettop(L)
    }

    /// Calls the function below its `arguments` in protected mode. On failure the error value
    /// (with traceback when `handler` is the bridge's) is on top and the Lua status is returned.
    /// The caller's slots are checked after the call, as `callBlock` does.
    @inlinable public func protectedCall(arguments: Int32, results: Int32, handler: Int32) -> Int32 {
        bk_pcall_guarded(L, arguments, results, handler)
    }

    /// Calls a block from inside an exported function: a failure leaves the error on top and
    /// throws `.valueOnTop`, so the error reaches the helper's caller unchanged.
    ///
    /// The caller's slots are checked after the call (`bk_pcall_guarded`): a block can rewrite
    /// them (`debug.setlocal`), and the caller goes on using them raw. When one was rewritten, the
    /// error is "bk: NAME's frame was changed while its block ran (debug.setlocal)".
    @inlinable public func callBlock(arguments: Int32, results: Int32, handler: Int32) throws(LuaRaise) {
        if bk_pcall_guarded(L, arguments, results, handler) != LUA_OK { throw .valueOnTop }
    }

    /// Calls the function below its `arguments` with a traceback handler; a failure becomes a
    /// Swift `LuaError` (the stack is left as before the function was pushed).
    public func call(arguments: Int32, results: Int32) throws(LuaError) {
        let lock = state.lock
        lock.lock()
        defer { lock.unlock() }
        let functionIndex = top - arguments
        // The value raised stays as it is (the LuaError holds it, so a Swift function that called
        // this can raise it again unchanged); its traceback goes on the side.
        bk_pushcfunction(L, bk_hostcalltraceback)
        insert(at: functionIndex)
        let status = bk_pcall_guarded(L, arguments, results, functionIndex)  // see callBlock
        remove(at: functionIndex)
        if status != LUA_OK { throw popError(status: status) }
    }

    /// Pops the error value on top into a `LuaError`: its message with the traceback recorded where
    /// it was raised (kept for a report further out), and the value itself (`LuaError.value`).
    public func popError(status: Int32) -> LuaError {
        bk_pusherrordescription(L, -1)
        let reported = toString(-1) ?? "(error object is not a string)"
        pop()
        return LuaError(status: status, reported: reported, value: LuaRef(popping: self))
    }

    /// Loads a chunk (text or binary per `mode`) and pushes it as a function.
    public func load(_ code: String, name: String, mode: String = "bt") throws(LuaError) {
        var code = code
        let status = code.withUTF8 { bytes in
            bytes.withMemoryRebound(to: CChar.self) {
                bk_loadbuffer(L, $0.baseAddress, $0.count, name, mode)
            }
        }
        if status != LUA_OK { throw popError(status: status) }
    }

    /// Loads a chunk from bytes (an embedded resource) and pushes it as a function.
    public func load(bytes: [UInt8], name: String, mode: String = "bt") throws(LuaError) {
        let status = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) {
                bk_loadbuffer(L, $0.baseAddress, $0.count, name, mode)
            }
        }
        if status != LUA_OK { throw popError(status: status) }
    }

    /// Loads a file (`nil`: standard input) and pushes it as a function.
    public func loadFile(_ path: String?) throws(LuaError) {
        let status = bk_loadfile(L, path)
        if status != LUA_OK { throw popError(status: status) }
    }
}
