import BlocksBridge

// What several suites need, in one place: states made the way hosts make them, and typed reads of
// results (a test compares `2`, not its `.description`, so a `"2"` or a `2.0` fails it).

/// A state with the bk globals installed, as bklua gives scripts, after `setUp` (globals, exported
/// test functions) has run on it.
func scriptingState(_ setUp: (LuaState) throws -> Void = { _ in }) throws -> LuaState {
    let state = try LuaState()
    state.installGlobals()
    try setUp(state)
    return state
}

/// A bare state (no bk globals) after `setUp`, for the boundary's own tests.
func bareState(_ setUp: (LuaState) throws -> Void = { _ in }) throws -> LuaState {
    let state = try LuaState()
    try setUp(state)
    return state
}

extension LuaValue {
    /// The integer this value is, nil for anything else (a float `2.0` included).
    var integer: Int64? { if case .integer(let i) = self { i } else { nil } }
    /// The number this value is, integers included.
    var number: Double? {
        switch self {
        case .integer(let i): Double(i)
        case .number(let d): d
        default: nil
        }
    }
    /// The boolean this value is, nil for anything else (a truthy value included).
    var boolean: Bool? { if case .boolean(let b) = self { b } else { nil } }
    /// The text of a UTF-8 string value, nil for anything else (a number included).
    var string: String? { if case .string(let s) = self { s } else { nil } }
}

/// Values collected by closures running on any thread (behind `Locked`, which ThreadSanitizer sees).
final class Trail<T: Sendable>: Sendable {
    private let items = Locked<[T]>([])
    func append(_ item: T) { items.withLock { $0.append(item) } }
    var values: [T] { items.withLock { $0 } }
}

/// A result as a test compares it: scalars typed, references by their kind only. Lists of results
/// compare as `[.integer(1), .boolean(true)]`.
enum Scalar: Equatable {
    case `nil`, boolean(Bool), integer(Int64), number(Double), string(String), bytes([UInt8]), reference(LuaType)
}

extension LuaValue {
    var scalar: Scalar {
        switch self {
        case .nil: .nil
        case .boolean(let b): .boolean(b)
        case .integer(let i): .integer(i)
        case .number(let d): .number(d)
        case .string(let s): .string(s)
        case .bytes(let b): .bytes(b)
        case .table: .reference(.table)
        case .function: .reference(.function)
        case .userdata: .reference(.userdata)
        case .lightUserdata: .reference(.lightUserdata)
        case .thread: .reference(.thread)
        }
    }
}
