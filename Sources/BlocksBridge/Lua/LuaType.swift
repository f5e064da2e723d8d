import CLua

/// The basic types of Lua values, as `lua_type` reports them.
public enum LuaType: Int32, Sendable, CustomStringConvertible {
    case none = -1
    case `nil` = 0
    case boolean = 1
    case lightUserdata = 2
    case number = 3
    case string = 4
    case table = 5
    case function = 6
    case userdata = 7
    case thread = 8

    /// The name Lua's own messages use (`luaL_typename`): "no value", "nil", "table", ...
    public var description: String {
        switch self {
        case .none: "no value"
        case .nil: "nil"
        case .boolean: "boolean"
        case .lightUserdata: "userdata"
        case .number: "number"
        case .string: "string"
        case .table: "table"
        case .function: "function"
        case .userdata: "userdata"
        case .thread: "thread"
        }
    }
}
