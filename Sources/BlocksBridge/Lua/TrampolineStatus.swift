import CLuaShim

/// What the Swift body of an exported function tells `bk_trampoline`, which acts on it once the
/// Swift frame has returned (a raise or a call may longjmp, so neither can happen in Swift).
///
/// A body returns its result count (`LuaFunction`'s `Int32`); the other statuses come only from
/// the boundary's own functions (`prepareRaise`, `continueWithCall`, `continueWithWalk`). The codes
/// are CLuaShim.h's `bk_status`, named there once; this enum is built on them.
@usableFromInline
enum TrampolineStatus: Equatable, Sendable {
    /// Return the top `count` values (`count >= 0`).
    case results(Int32)
    /// `LuaRaise.valueOnTop`: raise the value on top unchanged.
    case raiseValue
    /// `LuaRaise.message`: raise the string on top with the caller's position prefixed.
    case raiseMessage
    /// `LuaRaise.argument`: `luaL_argerror`'s wording, from the index and message on top.
    case raiseArgument
    /// `LuaRaise.type`: `luaL_typeerror`'s wording, from the top before, index and type on top.
    case raiseType
    /// Run the walk laid out by `continueWithWalk` (`Walk.c`): its blocks may raise and yield.
    case continueWalk
    /// Call the function below the arguments with `lua_callk` and return its results.
    case continueCall

    /// The code `bk_trampoline` reads.
    @inlinable var code: Int32 {
        switch self {
        case .results(let count): count
        case .raiseValue: BK_RAISE_VALUE.rawValue
        case .raiseMessage: BK_RAISE_MESSAGE.rawValue
        case .raiseArgument: BK_RAISE_ARGUMENT.rawValue
        case .raiseType: BK_RAISE_TYPE.rawValue
        case .continueWalk: BK_CONTINUE_WALK.rawValue
        case .continueCall: BK_CONTINUE_CALL.rawValue
        }
    }

    /// The status a code stands for; nil for a negative code that is none of `bk_status`.
    init?(code: Int32) {
        if code >= 0 {
            self = .results(code)
            return
        }
        switch bk_status(rawValue: code) {
        case BK_RAISE_VALUE: self = .raiseValue
        case BK_RAISE_MESSAGE: self = .raiseMessage
        case BK_RAISE_ARGUMENT: self = .raiseArgument
        case BK_RAISE_TYPE: self = .raiseType
        case BK_CONTINUE_WALK: self = .continueWalk
        case BK_CONTINUE_CALL: self = .continueCall
        default: return nil
        }
    }
}
