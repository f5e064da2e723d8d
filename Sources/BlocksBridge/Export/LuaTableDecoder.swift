/// A `Decoder` reading a Lua value straight off the stack (raw reads: no metamethod runs, so it
/// never raises). Tables are keyed or unkeyed containers; numbers, strings and booleans must have
/// their exact Lua type (a config file's `"80"` is not a port). A mismatch names its path:
/// `field 'ports[2]': number expected, got string`.
struct LuaTableDecoder: Decoder {
    let stack: LuaStack
    let index: Int32                // absolute
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// Deeper tables than this are refused (a table that contains itself never ends).
    static let maximumDepth = 200

    /// Decodes the value at `index` as `T`.
    static func decode<T: Decodable>(_ type: T.Type, from stack: LuaStack, at index: Int32) throws -> T {
        try LuaTableDecoder(stack: stack, index: stack.absolute(index), codingPath: []).decodeValue(T.self, at: stack.absolute(index), path: [])
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        try expectTable()
        return KeyedDecodingContainer(KeyedLuaDecoding<Key>(decoder: self))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try expectTable()
        return UnkeyedLuaDecoding(decoder: self, count: Int(stack.rawLength(index)))
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { SingleLuaDecoding(decoder: self) }

    private func expectTable() throws {
        guard stack.type(at: index) == .table else { throw mismatch("table", at: index, codingPath) }
    }

    func mismatch(_ expected: String, at index: Int32, _ path: [any CodingKey]) -> DecodingError {
        .typeMismatch(Any.self, .init(codingPath: path, debugDescription: "\(expected) expected, got \(stack.typeName(at: index))"))
    }

    /// The value at `index` as `T`: Lua's scalars directly, anything else through `T(from:)`.
    func decodeValue<T: Decodable>(_ type: T.Type, at index: Int32, path: [any CodingKey]) throws -> T {
        if let scalar = try decodeScalar(T.self, at: index, path: path) { return scalar }
        guard path.count < Self.maximumDepth, stack.ensureSpace(3) else {
            throw DecodingError.dataCorrupted(.init(codingPath: path, debugDescription: "tables nested too deeply"))
        }
        return try T(from: LuaTableDecoder(stack: stack, index: index, codingPath: path))
    }

    private func decodeScalar<T>(_ type: T.Type, at index: Int32, path: [any CodingKey]) throws -> T? {
        switch type {
        case is String.Type:
            guard stack.type(at: index) == .string, let string = stack.toString(index) else { throw mismatch("string", at: index, path) }
            return string as? T
        case is Bool.Type:
            guard stack.type(at: index) == .boolean else { throw mismatch("boolean", at: index, path) }
            return stack.toBool(index) as? T
        case is Double.Type:
            return try number(at: index, path) as? T
        case is Float.Type:
            return Float(try number(at: index, path)) as? T
        case is Int.Type: return Int(exactly: try integer(at: index, path)) as? T
        case is Int64.Type: return try integer(at: index, path) as? T
        case is Int32.Type: return try fitting(Int32.self, at: index, path) as? T
        case is Int16.Type: return try fitting(Int16.self, at: index, path) as? T
        case is Int8.Type: return try fitting(Int8.self, at: index, path) as? T
        case is UInt.Type: return try fitting(UInt.self, at: index, path) as? T
        case is UInt64.Type: return try fitting(UInt64.self, at: index, path) as? T
        case is UInt32.Type: return try fitting(UInt32.self, at: index, path) as? T
        case is UInt16.Type: return try fitting(UInt16.self, at: index, path) as? T
        case is UInt8.Type: return try fitting(UInt8.self, at: index, path) as? T
        default: return nil
        }
    }

    private func number(at index: Int32, _ path: [any CodingKey]) throws -> Double {
        guard stack.type(at: index) == .number, let number = stack.toNumber(index) else { throw mismatch("number", at: index, path) }
        return number
    }

    private func integer(at index: Int32, _ path: [any CodingKey]) throws -> Int64 {
        guard stack.type(at: index) == .number else { throw mismatch("number", at: index, path) }
        guard let integer = stack.toInteger(index) else {
            throw DecodingError.dataCorrupted(.init(codingPath: path, debugDescription: "number has no integer representation"))
        }
        return integer
    }

    private func fitting<I: FixedWidthInteger>(_ type: I.Type, at index: Int32, _ path: [any CodingKey]) throws -> I {
        guard let value = I(exactly: try integer(at: index, path)) else {
            throw DecodingError.dataCorrupted(.init(codingPath: path, debugDescription: "number out of range for \(I.self)"))
        }
        return value
    }

    /// Pushes `table[key]` (raw), runs `body` on it at the top, then restores the top (tables
    /// of nested containers made before stay below it).
    func withField<R>(_ key: any CodingKey, _ body: (Int32) throws -> R) throws -> R {
        try stack.withRestoredTop { () throws -> R in try body(try pushField(key)) }
    }

    /// Pushes `table[key]` (raw) and returns its index.
    func pushField(_ key: any CodingKey) throws -> Int32 {
        guard stack.ensureSpace(2) else {
            throw DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "stack overflow"))
        }
        if let position = key.intValue { _ = stack.rawGet(index, Int64(position)) } else { _ = stack.rawGet(index, field: key.stringValue) }
        return stack.top
    }

    /// A decoder for `table[key]`, left on the stack for a nested container (the top-level
    /// caller restores the stack when decoding ends).
    func nested(_ key: any CodingKey) throws -> LuaTableDecoder {
        guard codingPath.count < Self.maximumDepth else {
            throw DecodingError.dataCorrupted(.init(codingPath: codingPath + [key], debugDescription: "tables nested too deeply"))
        }
        return LuaTableDecoder(stack: stack, index: try pushField(key), codingPath: codingPath + [key])
    }
}

/// A key of an unkeyed container: the Lua position (1-based).
struct LuaPositionKey: CodingKey {
    let intValue: Int?
    var stringValue: String { "\(intValue ?? 0)" }
    init(_ position: Int) { intValue = position }
    init?(stringValue: String) { return nil }
    init?(intValue: Int) { self.intValue = intValue }
}

private struct KeyedLuaDecoding<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: LuaTableDecoder
    var codingPath: [any CodingKey] { decoder.codingPath }

    var allKeys: [Key] {
        let stack = decoder.stack
        guard stack.ensureSpace(3) else { return [] }
        var keys: [Key] = []
        stack.pushNil()
        while stack.next(decoder.index) {
            switch stack.type(at: -2) {
            case .string: if let name = stack.toString(-2), let key = Key(stringValue: name) { keys.append(key) }
            case .number: if let i = stack.toInteger(-2), let key = Key(intValue: Int(i)) { keys.append(key) }
            default: break
            }
            stack.pop()
        }
        return keys
    }

    func contains(_ key: Key) -> Bool { (try? decoder.withField(key) { decoder.stack.type(at: $0) != .nil }) ?? false }

    func decodeNil(forKey key: Key) throws -> Bool { try decoder.withField(key) { decoder.stack.isNoneOrNil($0) } }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try decoder.withField(key) { try decoder.decodeValue(T.self, at: $0, path: codingPath + [key]) }
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try decoder.nested(key).container(keyedBy: NestedKey.self)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try decoder.nested(key).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder { decoder }
    func superDecoder(forKey key: Key) throws -> any Decoder { decoder }
}

private struct UnkeyedLuaDecoding: UnkeyedDecodingContainer {
    let decoder: LuaTableDecoder
    let count: Int?
    var currentIndex = 0
    var codingPath: [any CodingKey] { decoder.codingPath }
    var isAtEnd: Bool { currentIndex >= (count ?? 0) }

    init(decoder: LuaTableDecoder, count: Int) {
        self.decoder = decoder
        self.count = count
    }

    private var key: LuaPositionKey { LuaPositionKey(currentIndex + 1) }

    mutating func decodeNil() throws -> Bool {
        let isNil = try decoder.withField(key) { decoder.stack.isNoneOrNil($0) }
        if isNil { currentIndex += 1 }
        return isNil
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(T.self, .init(codingPath: codingPath + [key], debugDescription: "no more elements"))
        }
        let key = self.key
        let value = try decoder.withField(key) { try decoder.decodeValue(T.self, at: $0, path: codingPath + [key]) }
        currentIndex += 1
        return value
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let nested = try decoder.nested(key)
        currentIndex += 1
        return try nested.container(keyedBy: NestedKey.self)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let nested = try decoder.nested(key)
        currentIndex += 1
        return try nested.unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder { decoder }
}

private struct SingleLuaDecoding: SingleValueDecodingContainer {
    let decoder: LuaTableDecoder
    var codingPath: [any CodingKey] { decoder.codingPath }
    func decodeNil() -> Bool { decoder.stack.isNoneOrNil(decoder.index) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        // A single value of a scalar type is read here; anything else decodes itself one level down.
        try decoder.decodeValue(T.self, at: decoder.index, path: codingPath)
    }
}
