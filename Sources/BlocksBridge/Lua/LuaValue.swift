import CLua
import CLuaShim

/// A Lua value copied into Swift. Tables, functions, userdata and threads stay in Lua and are
/// held through a `LuaRef`. Strings keep their bytes: Lua -> `LuaValue` -> Lua gives the same string.
public enum LuaValue: CustomStringConvertible {
    case `nil`
    case boolean(Bool)
    case integer(Int64)
    case number(Double)
    /// A Lua string that is valid UTF-8 (embedded zeros included), unchanged.
    case string(String)
    /// A Lua string that is not valid UTF-8 (binary data, Latin-1 text), byte for byte: a Swift
    /// `String` would replace the invalid bytes.
    case bytes([UInt8])
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
        case .bytes(let b): String(decoding: b, as: UTF8.self)  // invalid bytes shown as U+FFFD
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
        case .string: stringOrBytes(at: index)
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
        case .bytes(let b): b.withUnsafeBytes { push(bytes: $0) }
        case .table(let r), .function(let r), .userdata(let r), .thread(let r): r.push(on: self)
        case .lightUserdata(let p): push(lightUserdata: p)
        }
    }

    /// The string at `index` as `.string` when it is valid UTF-8, else as `.bytes`.
    private func stringOrBytes(at index: Int32) -> LuaValue {
        var length = 0
        guard let chars = lua_tolstring(L, index, &length) else { return .nil }
        let bytes = UnsafeRawBufferPointer(start: chars, count: length)
        if let string = String(validating: bytes, as: UTF8.self) { return .string(string) }
        return .bytes(Array(bytes))
    }
}
