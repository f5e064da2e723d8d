import CLua

/// Why `runEmbeddedChunk` failed.
enum EmbeddedChunkFailure: Error {
    /// The chunk did not compile (nothing pushed): never for a chunk `scripts/test` checked with
    /// `luac5.4 -p`, but the message is kept for the caller's report.
    case load(LuaError)
    /// The chunk raised while it ran: its error value is on top.
    case raised
}

extension LuaStack {
    /// Runs one of the bridge's own Lua chunks (a `.embedInCode` resource, named `=bk/File.lua`
    /// so that messages and tracebacks name the file): loads it, pushes its arguments with
    /// `pushArguments` (which returns how many it pushed) and calls it in protected mode with the
    /// message handler at `handler` (0: none). Its `results` values are then on top.
    ///
    /// Loading allocates, so a finalizer may run here and call anything, the caller included:
    /// callers that cache what the chunk returns read the cache again afterwards or tolerate a
    /// second load (see `CollectionToolbox.pushFunctions`).
    func runEmbeddedChunk(_ bytes: [UInt8], name: String, results: Int32, handler: Int32,
                          pushArguments: () -> Int32) throws(EmbeddedChunkFailure) {
        do throws(LuaError) {
            try load(bytes: bytes, name: name)
        } catch {
            throw .load(error)
        }
        let arguments = pushArguments()
        guard protectedCall(arguments: arguments, results: results, handler: handler) == LUA_OK else {
            throw .raised
        }
    }
}
