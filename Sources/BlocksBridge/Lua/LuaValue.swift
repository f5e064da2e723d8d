import CLua
import CLuaShim

/// A Lua value copied into Swift. Tables, functions, userdata and threads stay in Lua and are
/// held through a `LuaRef`.
public enum LuaValue: CustomStringConvertible {
    case `nil`
    case boolean(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case table(LuaRef)
    case function(LuaRef)
    case userdata(LuaRef)
    case thread(LuaRef)
    case lightUserdata(UnsafeMutableRawPointer?)

    public var description: String {
        switch self {
        case .nil: "nil"
        case .boolean(let b): String(b)
        case .integer(let i): String(i)
        case .number(let d): String(d)
        case .string(let s): s
        case .table: "table"
        case .function: "function"
        case .userdata: "userdata"
        case .thread: "thread"
        case .lightUserdata: "userdata"
        }
    }

    public var isNil: Bool { if case .nil = self { true } else { false } }
}

extension LuaStack {
    /// Reads the value at `index` (references for tables, functions, userdata and threads).
    public func value(at index: Int32) -> LuaValue {
        switch type(at: index) {
        case .none, .nil: .nil
        case .boolean: .boolean(toBool(index))
        case .number:
            if let i = toInteger(index), isInteger(index) { .integer(i) } else { .number(toNumber(index) ?? 0) }
        case .string: .string(toString(index) ?? "")
        case .table: .table(LuaRef(copying: index, in: self))
        case .function: .function(LuaRef(copying: index, in: self))
        case .userdata: .userdata(LuaRef(copying: index, in: self))
        case .thread: .thread(LuaRef(copying: index, in: self))
        case .lightUserdata: .lightUserdata(toUserdata(index))
        }
    }

    public func push(_ value: LuaValue) {
        switch value {
        case .nil: pushNil()
        case .boolean(let b): push(b)
        case .integer(let i): push(i)
        case .number(let d): push(d)
        case .string(let s): push(s)
        case .table(let r), .function(let r), .userdata(let r), .thread(let r): r.push(on: self)
        case .lightUserdata(let p): push(lightUserdata: p)
        }
    }
}
