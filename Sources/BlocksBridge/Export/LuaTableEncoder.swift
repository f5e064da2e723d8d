/// An `Encoder` pushing a value straight onto the Lua stack: keyed containers become tables with
/// string keys, unkeyed ones sequences (1-based), scalars Lua scalars; `nil` fields are left out.
///
/// Each encoder owns at most one stack slot (`slot`); a nested value is encoded above it, copied
/// into its container with a raw set, and the stack is cut back, so the stack never holds more
/// than one slot per level of nesting.
final class LuaTableEncoder: Encoder {
    let stack: LuaStack
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    /// Where this encoder's value is, once something was encoded.
    private(set) var slot: Int32?

    init(stack: LuaStack, codingPath: [any CodingKey]) {
        self.stack = stack
        self.codingPath = codingPath
    }

    /// Pushes `value` as exactly one Lua value.
    static func push<T: Encodable>(_ value: T, on stack: LuaStack) throws {
        let base = stack.top
        do {
            try pushValue(value, on: stack, path: [])
        } catch {
            stack.top = base
            throw error
        }
    }

    /// Pushes `value` as exactly one Lua value at `top + 1`.
    static func pushValue<T: Encodable>(_ value: T, on stack: LuaStack, path: [any CodingKey]) throws {
        guard path.count < LuaTableDecoder.maximumDepth, stack.ensureSpace(4) else {
            throw EncodingError.invalidValue(value, .init(codingPath: path, debugDescription: "values nested too deeply"))
        }
        if pushScalar(value, on: stack) { return }
        let base = stack.top
        let encoder = LuaTableEncoder(stack: stack, codingPath: path)
        try value.encode(to: encoder)
        guard let slot = encoder.slot else {
            stack.top = base
            stack.pushNewTable()  // encoded nothing: an empty table
            return
        }
        if slot != base + 1 {
            stack.pushCopy(of: slot)
            stack.replace(at: base + 1)
        }
        stack.top = base + 1
    }

    private static func pushScalar<T>(_ value: T, on stack: LuaStack) -> Bool {
        switch value {
        case let v as String: stack.push(v)
        case let v as Bool: stack.push(v)
        case let v as Double: stack.push(v)
        case let v as Float: stack.push(Double(v))
        case let v as Int: stack.push(v)
        case let v as Int64: stack.push(v)
        case let v as Int32: stack.push(Int64(v))
        case let v as Int16: stack.push(Int64(v))
        case let v as Int8: stack.push(Int64(v))
        case let v as UInt8: stack.push(Int64(v))
        case let v as UInt16: stack.push(Int64(v))
        case let v as UInt32: stack.push(Int64(v))
        // Beyond Int64.max a Lua integer would wrap: a float keeps the magnitude.
        case let v as UInt: if let i = Int64(exactly: v) { stack.push(i) } else { stack.push(Double(v)) }
        case let v as UInt64: if let i = Int64(exactly: v) { stack.push(i) } else { stack.push(Double(v)) }
        default: return false
        }
        return true
    }

    /// The table this encoder fills, pushed on first use.
    func table() -> Int32 {
        if let slot, stack.type(at: slot) == .table { return slot }
        stack.pushNewTable()
        slot = stack.top
        return stack.top
    }

    /// Marks the value just pushed on top as this encoder's.
    func tookTop() { slot = stack.top }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(KeyedLuaEncoding<Key>(encoder: self, table: table()))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer { UnkeyedLuaEncoding(encoder: self, table: table()) }

    func singleValueContainer() -> any SingleValueEncodingContainer { SingleLuaEncoding(encoder: self) }

    /// Encodes `value` above the top and stores it as `table[key]`, cutting the stack back.
    func store<T: Encodable>(_ value: T, in table: Int32, key: any CodingKey, path: [any CodingKey]) throws {
        try stack.withRestoredTop { () throws in
            try Self.pushValue(value, on: stack, path: path)
            if let position = key.intValue { stack.rawSet(table, Int64(position)) } else { stack.rawSet(table, field: key.stringValue) }
        }
    }

    /// A new table stored as `table[key]` and left on the stack for a nested container.
    func nestedTable(in table: Int32, key: any CodingKey) -> Int32 {
        _ = stack.ensureSpace(2)
        stack.pushNewTable()
        stack.pushCopy(of: -1)
        if let position = key.intValue { stack.rawSet(table, Int64(position)) } else { stack.rawSet(table, field: key.stringValue) }
        return stack.top
    }
}

private struct KeyedLuaEncoding<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: LuaTableEncoder
    let table: Int32
    var codingPath: [any CodingKey] { encoder.codingPath }

    mutating func encodeNil(forKey key: Key) throws {}  // a nil field is an absent one

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try encoder.store(value, in: table, key: key, path: codingPath + [key])
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        let nested = LuaTableEncoder(stack: encoder.stack, codingPath: codingPath + [key])
        return KeyedEncodingContainer(KeyedLuaEncoding<NestedKey>(
            encoder: nested, table: encoder.nestedTable(in: table, key: key)))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let nested = LuaTableEncoder(stack: encoder.stack, codingPath: codingPath + [key])
        return UnkeyedLuaEncoding(encoder: nested, table: encoder.nestedTable(in: table, key: key))
    }

    mutating func superEncoder() -> any Encoder { encoder }
    mutating func superEncoder(forKey key: Key) -> any Encoder { encoder }
}

private struct UnkeyedLuaEncoding: UnkeyedEncodingContainer {
    let encoder: LuaTableEncoder
    let table: Int32
    var count = 0
    var codingPath: [any CodingKey] { encoder.codingPath }

    init(encoder: LuaTableEncoder, table: Int32) {
        self.encoder = encoder
        self.table = table
    }

    mutating func encodeNil() throws { count += 1 }  // a hole: Lua sequences cannot hold nil

    mutating func encode<T: Encodable>(_ value: T) throws {
        count += 1
        try encoder.store(value, in: table, key: LuaPositionKey(count), path: codingPath + [LuaPositionKey(count)])
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        count += 1
        let nested = LuaTableEncoder(stack: encoder.stack, codingPath: codingPath + [LuaPositionKey(count)])
        return KeyedEncodingContainer(KeyedLuaEncoding<NestedKey>(
            encoder: nested, table: encoder.nestedTable(in: table, key: LuaPositionKey(count))))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        count += 1
        let nested = LuaTableEncoder(stack: encoder.stack, codingPath: codingPath + [LuaPositionKey(count)])
        return UnkeyedLuaEncoding(encoder: nested, table: encoder.nestedTable(in: table, key: LuaPositionKey(count)))
    }

    mutating func superEncoder() -> any Encoder { encoder }
}

private struct SingleLuaEncoding: SingleValueEncodingContainer {
    let encoder: LuaTableEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }

    mutating func encodeNil() throws {
        _ = encoder.stack.ensureSpace(1)
        encoder.stack.pushNil()
        encoder.tookTop()
    }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try LuaTableEncoder.pushValue(value, on: encoder.stack, path: codingPath)
        encoder.tookTop()
    }
}
