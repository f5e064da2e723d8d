/// A Codable value that crosses as a Lua table, both ways (`@LuaExport struct Config: Codable`),
/// through an encoder and a decoder working on the Lua stack (no JSON in between).
///
/// A table that does not decode is an argument error naming the field:
/// `bad argument #1 to 'configure' (field 'ports[2]': number expected, got string)`.
public protocol LuaCodable: Codable, LuaConvertible {}

extension LuaCodable {
    /// Pushes the value as a table (or the scalar a single-value type encodes to); nil if
    /// encoding throws.
    public func push(on stack: LuaStack) {
        do { try LuaTableEncoder.push(self, on: stack) } catch { stack.pushNil() }
    }

    public static func read(from stack: LuaStack, at index: Int32) -> Self? {
        stack.withRestoredTop { try? LuaTableDecoder.decode(Self.self, from: stack, at: index) }
    }

    public static var luaTypeName: String { "table" }

    public static func check(_ stack: LuaStack, at index: Int32) throws(LuaRaise) -> Self {
        return try stack.withRestoredTop { () throws(LuaRaise) -> Self in
            do {
                return try LuaTableDecoder.decode(Self.self, from: stack, at: index)
            } catch let error as DecodingError {
                throw LuaCodableError.raise(error, argument: index)
            } catch {
                throw .argument(index, String(describing: error))
            }
        }
    }
}

/// Decoding errors in Lua's words, with the path of the field.
enum LuaCodableError {
    static func raise(_ error: DecodingError, argument index: Int32) -> LuaRaise {
        let (path, message) = describe(error)
        if path.isEmpty { return .argument(index, message) }
        return .argument(index, "field '\(render(path))': \(message)")
    }

    static func describe(_ error: DecodingError) -> ([any CodingKey], String) {
        switch error {
        case .typeMismatch(_, let context), .dataCorrupted(let context):
            return (context.codingPath, context.debugDescription)
        case .valueNotFound(_, let context):
            return (context.codingPath, context.debugDescription)
        case .keyNotFound(let key, let context):
            return (context.codingPath + [key], "missing")
        @unknown default:
            return ([], String(describing: error))
        }
    }

    /// `server.ports[2]`: names joined with dots, positions in brackets.
    static func render(_ path: [any CodingKey]) -> String {
        var text = ""
        for key in path {
            if key is LuaPositionKey, let position = key.intValue {
                text += "[\(position)]"
            } else {
                text += (text.isEmpty ? "" : ".") + key.stringValue
            }
        }
        return text
    }
}
