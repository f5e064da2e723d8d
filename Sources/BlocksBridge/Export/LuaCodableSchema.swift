/// The fields of a Decodable type, for annotations: the type is decoded from nothing by a decoder
/// that records every field it asks for, with its type, and answers with placeholders (empty
/// collections, `nil` for optionals, an enum's first case). A type whose `init(from:)` rejects the
/// placeholders (custom validation, enums with payloads) has no schema and is annotated `table`.
enum LuaCodableSchema {
    enum Shape {
        /// A keyed container: the fields in the order `init(from:)` reads them.
        case fields([(name: String, type: any Decodable.Type, optional: Bool)])
        /// A single value (an enum with raw values, a wrapper): its type.
        case single(any Decodable.Type)
    }

    static func shape(of type: any Decodable.Type) -> Shape? {
        let decoder = SchemaDecoder()
        do { _ = try type.init(from: decoder) } catch { return nil }
        if let single = decoder.single { return .single(single) }
        return decoder.isKeyed ? .fields(decoder.fields) : nil
    }

    /// A value of `type` built from nothing, for a field's placeholder.
    static func placeholder<T: Decodable>(_ type: T.Type) throws -> T {
        switch type {
        case is String.Type: return try cast("")
        case is Bool.Type: return try cast(false)
        case is Double.Type: return try cast(0.0)
        case is Float.Type: return try cast(Float(0))
        case is Int.Type: return try cast(0)
        case is Int64.Type: return try cast(Int64(0))
        case is Int32.Type: return try cast(Int32(0))
        default: break
        }
        if let iterable = type as? any CaseIterable.Type, let first = firstCase(of: iterable) as? T { return first }
        return try T(from: SchemaDecoder())  // a nested value: its own fields are not recorded here
    }

    private static func firstCase<C: CaseIterable>(of type: C.Type) -> Any? { type.allCases.first }

    private static func cast<T, V>(_ value: V) throws -> T {
        guard let typed = value as? T else { throw SchemaError() }
        return typed
    }

    struct SchemaError: Error {}
}

private final class SchemaDecoder: Decoder {
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] = [:]
    var fields: [(name: String, type: any Decodable.Type, optional: Bool)] = []
    var single: (any Decodable.Type)?
    var isKeyed = false

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        isKeyed = true
        return KeyedDecodingContainer(Keyed(decoder: self))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { Empty() }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { Single(decoder: self) }

    struct Keyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let decoder: SchemaDecoder
        var codingPath: [any CodingKey] { [] }
        var allKeys: [Key] { [] }
        func contains(_ key: Key) -> Bool { true }
        func decodeNil(forKey key: Key) throws -> Bool { false }
        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            decoder.fields.append((key.stringValue, type, false))
            return try LuaCodableSchema.placeholder(type)
        }
        func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
            decoder.fields.append((key.stringValue, type, true))
            return nil
        }
        func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try decode(Box<Bool>.self, key).value }
        func decode(_ type: String.Type, forKey key: Key) throws -> String { try decode(Box<String>.self, key).value }
        func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try decode(Box<Double>.self, key).value }
        func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try decode(Box<Float>.self, key).value }
        func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try decode(Box<Int>.self, key).value }
        func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try decode(Box<Int8>.self, key).value }
        func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try decode(Box<Int16>.self, key).value }
        func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try decode(Box<Int32>.self, key).value }
        func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try decode(Box<Int64>.self, key).value }
        func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try decode(Box<UInt>.self, key).value }
        func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try decode(Box<UInt8>.self, key).value }
        func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try decode(Box<UInt16>.self, key).value }
        func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try decode(Box<UInt32>.self, key).value }
        func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try decode(Box<UInt64>.self, key).value }
        /// The primitive overloads record their own type, not the box.
        private func decode<V: Decodable & BinaryOrString>(_ box: Box<V>.Type, _ key: Key) throws -> Box<V> {
            decoder.fields.append((key.stringValue, V.self, false))
            return Box(value: V.zero)
        }
        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
            -> KeyedDecodingContainer<NestedKey> { throw LuaCodableSchema.SchemaError() }
        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            throw LuaCodableSchema.SchemaError()
        }
        func superDecoder() throws -> any Decoder { throw LuaCodableSchema.SchemaError() }
        func superDecoder(forKey key: Key) throws -> any Decoder { throw LuaCodableSchema.SchemaError() }
    }

    /// An empty list: `[T]` decodes to `[]` without asking for an element.
    struct Empty: UnkeyedDecodingContainer {
        var codingPath: [any CodingKey] { [] }
        var count: Int? { 0 }
        var isAtEnd: Bool { true }
        var currentIndex: Int { 0 }
        mutating func decodeNil() throws -> Bool { true }
        mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { throw LuaCodableSchema.SchemaError() }
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
            -> KeyedDecodingContainer<NestedKey> { throw LuaCodableSchema.SchemaError() }
        mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { throw LuaCodableSchema.SchemaError() }
        mutating func superDecoder() throws -> any Decoder { throw LuaCodableSchema.SchemaError() }
    }

    /// A single value: records its type, answers a placeholder.
    struct Single: SingleValueDecodingContainer {
        let decoder: SchemaDecoder
        var codingPath: [any CodingKey] { [] }
        func decodeNil() -> Bool { false }
        func decode<T: Decodable>(_ type: T.Type) throws -> T {
            decoder.single = decoder.single ?? type
            return try LuaCodableSchema.placeholder(type)
        }
    }
}

/// The primitives' placeholders.
private protocol BinaryOrString { static var zero: Self { get } }
extension Bool: BinaryOrString { static var zero: Bool { false } }
extension String: BinaryOrString { static var zero: String { "" } }
extension Double: BinaryOrString {}
extension Float: BinaryOrString {}
extension Int: BinaryOrString {}
extension Int8: BinaryOrString {}
extension Int16: BinaryOrString {}
extension Int32: BinaryOrString {}
extension Int64: BinaryOrString {}
extension UInt: BinaryOrString {}
extension UInt8: BinaryOrString {}
extension UInt16: BinaryOrString {}
extension UInt32: BinaryOrString {}
extension UInt64: BinaryOrString {}

private struct Box<V> { let value: V }
