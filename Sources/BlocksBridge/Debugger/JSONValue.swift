/// The debug adapter's JSON: a small codec written here, since Foundation's would load Foundation
/// (bklua's start-up) and the protocol needs only this. Objects keep their keys' order.
package enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])
    /// JSON text written as it is (the agent's bodies, made in Lua).
    case raw(String)

    package static func == (a: JSONValue, b: JSONValue) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case let (.bool(x), .bool(y)): return x == y
        case let (.number(x), .number(y)): return x == y
        case let (.string(x), .string(y)): return x == y
        case let (.array(x), .array(y)): return x == y
        case let (.object(x), .object(y)): return x.count == y.count && zip(x, y).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        case let (.raw(x), .raw(y)): return x == y
        default: return false
        }
    }

    package subscript(key: String) -> JSONValue? {
        guard case let .object(members) = self else { return nil }
        return members.last { $0.0 == key }?.1
    }

    package var string: String? { if case let .string(s) = self { return s }; return nil }
    package var bool: Bool? { if case let .bool(b) = self { return b }; return nil }
    package var array: [JSONValue]? { if case let .array(a) = self { return a }; return nil }
    package var int: Int? {
        guard case let .number(n) = self, n.isFinite, n == n.rounded(), abs(n) < 9.0e15 else { return nil }
        return Int(n)
    }

    // MARK: Writing

    package var text: String {
        var out = ""
        write(to: &out)
        return out
    }

    package func write(to out: inout String) {
        switch self {
        case .null: out += "null"
        case let .raw(text): out += text
        case let .bool(b): out += b ? "true" : "false"
        case let .number(n):
            if n.isFinite, n == n.rounded(), abs(n) < 9.0e15 { out += String(Int64(n)) } else if n.isFinite { out += "\(n)" } else { out += "null" }
        case let .string(s): JSONValue.quote(s, to: &out)
        case let .array(items):
            out += "["
            for (i, item) in items.enumerated() {
                if i > 0 { out += "," }
                item.write(to: &out)
            }
            out += "]"
        case let .object(members):
            out += "{"
            for (i, (key, value)) in members.enumerated() {
                if i > 0 { out += "," }
                JSONValue.quote(key, to: &out)
                out += ":"
                value.write(to: &out)
            }
            out += "}"
        }
    }

    package static func quote(_ s: String, to out: inout String) {
        out += "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
    }

    // MARK: Reading

    /// Parses one JSON text (nesting at most 200 deep); nil when it is not valid JSON.
    package static func parse(_ bytes: [UInt8]) -> JSONValue? {
        var parser = Parser(bytes: bytes)
        guard let value = parser.value(depth: 0) else { return nil }
        parser.skipSpace()
        return parser.position == bytes.count ? value : nil
    }

    private struct Parser {
        let bytes: [UInt8]
        var position = 0

        mutating func skipSpace() {
            while position < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[position]) { position += 1 }
        }

        mutating func literal(_ word: String, _ value: JSONValue) -> JSONValue? {
            let w = Array(word.utf8)
            guard position + w.count <= bytes.count, Array(bytes[position ..< position + w.count]) == w else { return nil }
            position += w.count
            return value
        }

        mutating func value(depth: Int) -> JSONValue? {
            guard depth < 200 else { return nil }
            skipSpace()
            guard position < bytes.count else { return nil }
            switch bytes[position] {
            case UInt8(ascii: "n"): return literal("null", .null)
            case UInt8(ascii: "t"): return literal("true", .bool(true))
            case UInt8(ascii: "f"): return literal("false", .bool(false))
            case UInt8(ascii: "\""): return string().map { .string($0) }
            case UInt8(ascii: "["):
                position += 1
                var items: [JSONValue] = []
                skipSpace()
                if position < bytes.count, bytes[position] == UInt8(ascii: "]") { position += 1; return .array(items) }
                while true {
                    guard let item = value(depth: depth + 1) else { return nil }
                    items.append(item)
                    skipSpace()
                    guard position < bytes.count else { return nil }
                    if bytes[position] == UInt8(ascii: ",") { position += 1; continue }
                    if bytes[position] == UInt8(ascii: "]") { position += 1; return .array(items) }
                    return nil
                }
            case UInt8(ascii: "{"):
                position += 1
                var members: [(String, JSONValue)] = []
                skipSpace()
                if position < bytes.count, bytes[position] == UInt8(ascii: "}") { position += 1; return .object(members) }
                while true {
                    skipSpace()
                    guard position < bytes.count, bytes[position] == UInt8(ascii: "\""), let key = string() else { return nil }
                    skipSpace()
                    guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else { return nil }
                    position += 1
                    guard let item = value(depth: depth + 1) else { return nil }
                    members.append((key, item))
                    skipSpace()
                    guard position < bytes.count else { return nil }
                    if bytes[position] == UInt8(ascii: ",") { position += 1; continue }
                    if bytes[position] == UInt8(ascii: "}") { position += 1; return .object(members) }
                    return nil
                }
            default:
                return number()
            }
        }

        mutating func number() -> JSONValue? {
            let start = position
            while position < bytes.count, let c = Optional(bytes[position]),
                  (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")) || c == UInt8(ascii: "-") || c == UInt8(ascii: "+")
                    || c == UInt8(ascii: ".") || c == UInt8(ascii: "e") || c == UInt8(ascii: "E") {
                position += 1
            }
            guard position > start, let n = Double(String(decoding: bytes[start ..< position], as: UTF8.self)) else { return nil }
            return .number(n)
        }

        mutating func hex4() -> UInt32? {
            guard position + 4 <= bytes.count else { return nil }
            let text = String(decoding: bytes[position ..< position + 4], as: UTF8.self)
            guard let v = UInt32(text, radix: 16) else { return nil }
            position += 4
            return v
        }

        mutating func string() -> String? {
            position += 1  // the opening quote
            var scalars = String.UnicodeScalarView()
            var run = position
            func flush(_ end: Int) { scalars.append(contentsOf: String(decoding: bytes[run ..< end], as: UTF8.self).unicodeScalars) }
            while position < bytes.count {
                let c = bytes[position]
                if c == UInt8(ascii: "\"") {
                    flush(position)
                    position += 1
                    return String(scalars)
                }
                if c < 0x20 { return nil }
                if c != UInt8(ascii: "\\") { position += 1; continue }
                flush(position)
                position += 1
                guard position < bytes.count else { return nil }
                let e = bytes[position]
                position += 1
                switch e {
                case UInt8(ascii: "\""): scalars.append("\"")
                case UInt8(ascii: "\\"): scalars.append("\\")
                case UInt8(ascii: "/"): scalars.append("/")
                case UInt8(ascii: "b"): scalars.append("\u{8}")
                case UInt8(ascii: "f"): scalars.append("\u{C}")
                case UInt8(ascii: "n"): scalars.append("\n")
                case UInt8(ascii: "r"): scalars.append("\r")
                case UInt8(ascii: "t"): scalars.append("\t")
                case UInt8(ascii: "u"):
                    guard var code = hex4() else { return nil }
                    if code >= 0xD800, code < 0xDC00, position + 6 <= bytes.count, bytes[position] == UInt8(ascii: "\\"),
                       bytes[position + 1] == UInt8(ascii: "u") {
                        position += 2
                        guard let low = hex4(), low >= 0xDC00, low < 0xE000 else { return nil }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    }
                    scalars.append(Unicode.Scalar(code) ?? "\u{FFFD}")
                default: return nil
                }
                run = position
            }
            return nil
        }
    }
}
