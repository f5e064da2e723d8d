/// An enum that crosses as its raw value (`@LuaExport enum Mode: String { ... }`). A value that is
/// no case's raw value is an argument error listing the valid ones when the enum is `CaseIterable`:
/// `bad argument #1 to 'setMode' (invalid value 'fast' for Mode; expected 'eco', 'comfort')`.
public protocol LuaEnum: RawRepresentable, LuaConvertible where RawValue: LuaConvertible {}

extension LuaEnum {
    public func push(on stack: LuaStack) { rawValue.push(on: stack) }
    public static func read(from stack: LuaStack, at index: Int32) -> Self? {
        RawValue.read(from: stack, at: index).flatMap(Self.init(rawValue:))
    }
    public static var luaTypeName: String { RawValue.luaTypeName }
    public static func check(_ stack: LuaStack, at index: Int32) throws(LuaRaise) -> Self {
        let raw = try RawValue.check(stack, at: index)
        if let value = Self(rawValue: raw) { return value }
        throw .argument(index, "invalid value \(Self.quoted(raw)) for \(Self.self)" + Self.validValues)
    }

    /// `; expected 'a', 'b'` for a CaseIterable enum, else nothing.
    static var validValues: String {
        guard let iterable = Self.self as? any CaseIterable.Type else { return "" }
        return "; expected " + rawValues(of: iterable).joined(separator: ", ")
    }

    private static func rawValues<C: CaseIterable>(of type: C.Type) -> [String] {
        type.allCases.compactMap { ($0 as? Self).map { quoted($0.rawValue) } }
    }

    private static func quoted(_ raw: RawValue) -> String {
        raw is String ? "'\(raw)'" : "\(raw)"
    }
}
