import BlocksBridgeExport

/// The message of the error `code` raises, run as the chunk `t` (so positions read `t:1:`);
/// nil when it runs without error.
func luaError(_ state: LuaState, _ code: String) -> String? {
    do {
        _ = try state.run(code, name: "=t")
        return nil
    } catch {
        return error.message
    }
}
