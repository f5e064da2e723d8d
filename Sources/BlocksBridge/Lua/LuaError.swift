/// A Lua error seen from Swift: a failed protected call, load or run.
public struct LuaError: Error, Sendable, CustomStringConvertible {
    public enum Kind: Sendable {
        case runtime, syntax, memory, errorHandler, file
    }

    public let kind: Kind
    /// The error message (for non-string error values: their `__tostring`, else a description).
    public let message: String
    /// The traceback captured where the error was raised; empty when there is none.
    public let traceback: String
    /// The error value itself, as it was raised (any Lua value), when the error came from a state:
    /// a Swift function called from Lua that lets this error through raises this value unchanged
    /// (rule 4), not the message. Holds the value alive while the error lives.
    public let value: LuaRef?

    public init(kind: Kind, message: String, traceback: String = "", value: LuaRef? = nil) {
        self.kind = kind
        self.message = message
        self.traceback = traceback
        self.value = value
    }

    /// Splits a message produced by the bridge's message handler into message and traceback.
    init(kind: Kind, reported: String, value: LuaRef? = nil) {
        let marker = Array("\nstack traceback:".utf8)
        let bytes = Array(reported.utf8)
        if let start = bytes.indices.first(where: { bytes[$0...].starts(with: marker) }) {
            self.init(kind: kind, message: String(decoding: bytes[..<start], as: UTF8.self),
                      traceback: String(decoding: bytes[(start + 1)...], as: UTF8.self), value: value)
        } else {
            self.init(kind: kind, message: reported, value: value)
        }
    }

    init(status: Int32, reported: String, value: LuaRef? = nil) {
        let kind: Kind = switch status {
        case 3: .syntax        // LUA_ERRSYNTAX
        case 4: .memory        // LUA_ERRMEM
        case 5: .errorHandler  // LUA_ERRERR
        case 6: .file          // LUA_ERRFILE
        default: .runtime
        }
        self.init(kind: kind, reported: reported, value: value)
    }

    /// The message followed by its traceback, the way lua.c prints it.
    public var description: String {
        traceback.isEmpty ? message : message + "\n" + traceback
    }
}
