
/// A Swift type that crosses the Lua boundary by value: typed results of `run` and `call`,
/// typed arguments and results of registered Swift functions, globals.
///
/// Reading never raises and never runs a metamethod (tables are read raw), so it is safe anywhere.
public protocol LuaConvertible: SendableMetatype {
    /// Pushes the value as exactly one Lua value.
    func push(on stack: LuaStack)
    /// The value at `index`, or nil when that Lua value does not convert to `Self`.
    static func read(from stack: LuaStack, at index: Int32) -> Self?
    /// The Lua type named in argument errors: `bad argument #1 to 'f' (number expected, got nil)`.
    static var luaTypeName: String { get }
    /// The argument at `index`, or the standard argument error.
    static func check(_ stack: LuaStack, at index: Int32) throws(LuaRaise) -> Self
    /// True when `push(on:)` can never leave a part out (numbers, booleans, strings): typed calls
    /// then push it without watching for push failures (`LuaStack.checkingPushes`), a cost on every
    /// argument and result of the hot host paths. False unless a type says otherwise.
    static var pushesAsIs: Bool { get }
}

extension LuaConvertible {
    @inlinable public static var pushesAsIs: Bool { false }

    public static func check(_ stack: LuaStack, at index: Int32) throws(LuaRaise) -> Self {
        if let value = read(from: stack, at: index) { return value }
        throw .type(index, expected: luaTypeName)
    }
}

extension LuaConvertible {
    /// Why the value at `index` does not convert, worded as an argument error's reason (`string
    /// expected at [2], got table`, `invalid value 'x' for Mode; expected 'a', 'b'`, `field
    /// 'ports[2]': number expected, got string`): property writes say what arguments say. Call it
    /// once `read` failed (it runs `check` for the reason).
    @usableFromInline static func conversionProblem(_ stack: LuaStack, at index: Int32) -> String {
        let index = stack.absolute(index)
        do {
            _ = try check(stack, at: index)
        } catch {
            return error.reason(about: index, on: stack)
        }
        return "\(luaTypeName) expected, got \(stack.typeName(at: index))"  // read and check disagree
    }
}

extension Int: LuaConvertible {
    @inlinable public static var pushesAsIs: Bool { true }
    @inlinable public func push(on stack: LuaStack) { stack.push(self) }
    /// Integers, floats with an exact integer value and numeric strings, as `luaL_checkinteger`.
    @inlinable public static func read(from stack: LuaStack, at index: Int32) -> Int? {
        stack.toInteger(index).map { Int($0) }
    }
    @inlinable public static var luaTypeName: String { "number" }
    @inlinable public static func check(_ stack: LuaStack, at index: Int32) throws(LuaRaise) -> Int {
        Int(try stack.checkInteger(index))
    }
}

extension Int64: LuaConvertible {
    @inlinable public static var pushesAsIs: Bool { true }
    @inlinable public func push(on stack: LuaStack) { stack.push(self) }
    @inlinable public static func read(from stack: LuaStack, at index: Int32) -> Int64? { stack.toInteger(index) }
    @inlinable public static var luaTypeName: String { "number" }
    @inlinable public static func check(_ stack: LuaStack, at index: Int32) throws(LuaRaise) -> Int64 {
        try stack.checkInteger(index)
    }
}

extension Double: LuaConvertible {
    @inlinable public static var pushesAsIs: Bool { true }
    @inlinable public func push(on stack: LuaStack) { stack.push(self) }
    @inlinable public static func read(from stack: LuaStack, at index: Int32) -> Double? { stack.toNumber(index) }
    @inlinable public static var luaTypeName: String { "number" }
}

extension Bool: LuaConvertible {
    @inlinable public static var pushesAsIs: Bool { true }
    @inlinable public func push(on stack: LuaStack) { stack.push(self) }
    /// Booleans only: a Swift `Bool` parameter is a contract, not Lua truthiness.
    @inlinable public static func read(from stack: LuaStack, at index: Int32) -> Bool? {
        stack.type(at: index) == .boolean ? stack.toBool(index) : nil
    }
    @inlinable public static var luaTypeName: String { "boolean" }
}

extension String: LuaConvertible {
    @inlinable public static var pushesAsIs: Bool { true }
    public func push(on stack: LuaStack) { stack.push(self) }
    /// Strings and numbers (as `luaL_checkstring`). A number is converted on a copy, so a key met
    /// in a table walk is never changed in place (which would break `next`). Bytes that are not
    /// valid UTF-8 become U+FFFD (the replacement character), so such a string does not come back
    /// the same: read `LuaValue` (`.bytes`) to keep every byte.
    public static func read(from stack: LuaStack, at index: Int32) -> String? {
        switch stack.type(at: index) {
        case .string:
            return stack.toString(index)
        case .number:
            guard stack.ensureSpace(1) else { return nil }
            stack.pushCopy(of: index)
            defer { stack.pop() }
            return stack.toString(-1)
        default:
            return nil
        }
    }
    public static var luaTypeName: String { "string" }
}

extension LuaValue: LuaConvertible {
    public func push(on stack: LuaStack) { stack.push(self) }
    /// Any value; a missing one reads as nil.
    public static func read(from stack: LuaStack, at index: Int32) -> LuaValue? { stack.value(at: index) }
    public static var luaTypeName: String { "value" }
}

extension LuaRef: LuaConvertible {
    // push(on:) is LuaRef's own.
    /// Any value, held in the registry (tables and functions stay in Lua).
    public static func read(from stack: LuaStack, at index: Int32) -> LuaRef? {
        guard stack.ensureSpace(1) else { return nil }
        return LuaRef(copying: index, in: stack)
    }
    public static var luaTypeName: String { "value" }
}

/// Bridged Swift objects cross as their userdata: add `extension MyClass: LuaConvertible {}`.
extension LuaConvertible where Self: LuaBridged {
    public func push(on stack: LuaStack) { stack.push(object: self) }
    public static func read(from stack: LuaStack, at index: Int32) -> Self? { stack.toObject(Self.self, at: index) }
    public static var luaTypeName: String { luaClass.name }
    /// The object, or the standard argument error naming the class as this state's messages do
    /// (module-qualified when two exported classes share its name).
    public static func check(_ stack: LuaStack, at index: Int32) throws(LuaRaise) -> Self {
        if let object = stack.toObject(Self.self, at: index) { return object }
        throw .type(index, expected: stack.className(of: luaClass))
    }
}

extension LuaStack {
    /// Pushes any convertible value (`stack.push(value: [1, 2, 3])`).
    public func push(value: some LuaConvertible) { value.push(on: self) }
}
