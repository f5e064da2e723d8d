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

extension LuaRaise {
    /// What this error says about the value at `index`: the part a bad argument puts in
    /// parentheses (`number expected, got string`), for messages about other places (an element,
    /// a property). `valueOnTop` (a raised value, not a conversion's) is described, not popped.
    public func reason(about index: Int32, on stack: LuaStack) -> String {
        switch self {
        case .argument(_, let reason): return reason
        case .type(_, let expected): return "\(expected) expected, got \(stack.typeName(at: index))"
        case .message(let message): return message
        case .valueOnTop: return stack.toString(-1) ?? "a \(stack.typeName(at: -1)) value was raised"
        }
    }
}
