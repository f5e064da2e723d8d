/// What a Swift function exported to Lua throws to raise a Lua error.
///
/// The Swift frame returns this as a status to the C trampoline, which raises the Lua error after
/// the Swift frame is gone (a Lua error is a longjmp and must never cross a Swift frame).
public enum LuaRaise: Error, Sendable {
    /// Raise the value on top of the stack unchanged (e.g. rethrow a callback's error).
    case valueOnTop
    /// Like `luaL_error`: the message with the caller's position prefixed.
    case message(String)
    /// Like `luaL_argerror`: `bad argument #N to 'name' (message)`.
    case argument(Int32, String)
    /// Like `luaL_typeerror`: `bad argument #N to 'name' (EXPECTED expected, got ACTUAL)`.
    case type(Int32, expected: String)
}
