/// Metamethods an exported class gets from the Swift protocols it conforms to (looked up at run
/// time, so conformances declared in extensions count): `Equatable` → `__eq`, `Comparable` →
/// `__lt`/`__le`, `CustomStringConvertible` → `__tostring`, `Sequence` → `__pairs`, `Collection` →
/// `__len` and `obj[i]` (1-based, as Lua sequences).
///
/// The metamethods work on existentials (opened in small generic helpers), so no closure captures
/// a generic type.
struct ProtocolMetamethods {
    var functions: [BKFunction] = []
    var element: (@Sendable (AnyObject, LuaStack, Int64) throws(LuaRaise) -> Bool)?

    init(for type: Any.Type) {
        if type is any Equatable.Type { functions.append(Self.equal) }
        if type is any Comparable.Type { functions += [Self.lessThan, Self.lessOrEqual] }
        if type is any CustomStringConvertible.Type { functions.append(Self.description) }
        if type is any Sequence.Type { functions.append(Self.pairs) }
        if type is any Collection.Type {
            functions.append(Self.length)
            element = Self.elementAt
        }
    }

    // Lua calls __eq and __lt/__le with both operands. For __eq, an operand of another type is
    // false (as two unrelated tables compare in Lua); for __lt/__le it is Lua's compare error.
    private static let equal = BKFunction("__eq") { stack in
        guard let a = stack.bridgedObject(at: 1) as? any Equatable, let b = stack.bridgedObject(at: 2) else {
            stack.push(false)
            return 1
        }
        stack.push(isEqual(a, b))
        return 1
    }

    private static let lessThan = BKFunction("__lt") { stack throws(LuaRaise) in
        try compare(stack) { a, b in isLess(a, b, orEqual: false) }
    }

    private static let lessOrEqual = BKFunction("__le") { stack throws(LuaRaise) in
        try compare(stack) { a, b in isLess(a, b, orEqual: true) }
    }

    private static func compare(_ stack: LuaStack, _ body: (any Comparable, AnyObject) -> Bool?) throws(LuaRaise) -> Int32 {
        guard let a = stack.bridgedObject(at: 1) as? any Comparable, let b = stack.bridgedObject(at: 2),
              let result = body(a, b) else {
            throw .message("attempt to compare \(stack.typeName(at: 1)) with \(stack.typeName(at: 2))")
        }
        stack.push(result)
        return 1
    }

    private static func isEqual<E: Equatable>(_ a: E, _ b: AnyObject) -> Bool {
        guard let b = b as? E else { return false }
        return a == b
    }

    private static func isLess<C: Comparable>(_ a: C, _ b: AnyObject, orEqual: Bool) -> Bool? {
        guard let b = b as? C else { return nil }
        return orEqual ? a <= b : a < b
    }

    private static let description = BKFunction("__tostring") { stack in
        guard let object = stack.bridgedObject(at: 1) as? any CustomStringConvertible else { return 0 }
        stack.push(object.description)
        return 1
    }

    /// `for i, v in pairs(obj)`: 1-based positions and elements (elements that are not
    /// `LuaConvertible` cross as nil).
    private static let pairs = BKFunction("__pairs") { stack in
        guard let sequence = stack.bridgedObject(at: 1) as? any Sequence else { return 0 }
        let cursor = SequenceCursor(sequence)
        stack.push(function: "next") { stack in
            guard let element = cursor.next() else { return 0 }
            stack.push(Int64(cursor.position))
            if let convertible = element as? any LuaConvertible { convertible.push(on: stack) } else { stack.pushNil() }
            return 2
        }
        stack.pushCopy(of: 1)
        stack.pushNil()
        return 3
    }

    private static let length = BKFunction("__len") { stack in
        guard let collection = stack.bridgedObject(at: 1) as? any Collection else { return 0 }
        stack.push(Int64(collection.count))
        return 1
    }

    private static let elementAt: @Sendable (AnyObject, LuaStack, Int64) throws(LuaRaise) -> Bool = { object, stack, position in
        guard let collection = object as? any Collection,
              let element = Self.element(of: collection, at: position) as? any LuaConvertible else { return false }
        element.push(on: stack)
        return true
    }

    private static func element<C: Collection>(of collection: C, at position: Int64) -> Any? {
        guard position >= 1, position <= Int64(collection.count) else { return nil }
        return collection[collection.index(collection.startIndex, offsetBy: Int(position - 1))]
    }
}

/// The iteration state of one `pairs` loop (type-erased: the sequence's iterator, opened once).
private final class SequenceCursor {
    private let nextElement: () -> Any?
    private(set) var position = 0

    init(_ sequence: any Sequence) {
        nextElement = Self.iterate(sequence)
    }

    private static func iterate<S: Sequence>(_ sequence: S) -> () -> Any? {
        var iterator = sequence.makeIterator()
        return { iterator.next() }
    }

    func next() -> Any? {
        guard let element = nextElement() else { return nil }
        position += 1
        return element
    }
}
