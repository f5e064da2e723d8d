/// Metamethods an exported class gets from the Swift protocols it conforms to (looked up at run
/// time, so conformances declared in extensions count): `Equatable` → `__eq`, `Comparable` →
/// `__lt`/`__le`, `CustomStringConvertible` → `__tostring`, `Sequence` → `__pairs`, `Collection` →
/// `__len` and `obj[i]` (1-based, as Lua sequences).
struct ProtocolMetamethods {
    var functions: [BKFunction] = []
    var element: (@Sendable (AnyObject, LuaStack, Int64) throws(LuaRaise) -> Bool)?

    init<T>(for type: T.Type) {
        if let equatable = type as? any Equatable.Type { functions.append(Self.equal(equatable)) }
        if let comparable = type as? any Comparable.Type { functions += Self.compare(comparable) }
        if type is any CustomStringConvertible.Type { functions.append(Self.description()) }
        if let sequence = type as? any Sequence.Type { functions.append(Self.pairs(sequence)) }
        if let collection = type as? any Collection.Type {
            functions.append(Self.length(collection))
            element = Self.element(collection)
        }
    }

    // Lua calls __eq and __lt/__le with both operands; an operand of another type is false, not an
    // error (as two unrelated tables compare in Lua).
    private static func equal<T: Equatable>(_: T.Type) -> BKFunction {
        BKFunction("__eq") { stack in
            guard let a = stack.bridgedObject(at: 1) as? T, let b = stack.bridgedObject(at: 2) as? T else {
                stack.push(false)
                return 1
            }
            stack.push(a == b)
            return 1
        }
    }

    private static func compare<T: Comparable>(_: T.Type) -> [BKFunction] {
        @Sendable func operands(_ stack: LuaStack, _ name: String) throws(LuaRaise) -> (T, T) {
            guard let a = stack.bridgedObject(at: 1) as? T, let b = stack.bridgedObject(at: 2) as? T else {
                throw .message("attempt to compare \(stack.typeName(at: 1)) with \(stack.typeName(at: 2))")
            }
            return (a, b)
        }
        return [
            BKFunction("__lt") { stack throws(LuaRaise) in
                let (a, b) = try operands(stack, "__lt")
                stack.push(a < b)
                return 1
            },
            BKFunction("__le") { stack throws(LuaRaise) in
                let (a, b) = try operands(stack, "__le")
                stack.push(a <= b)
                return 1
            },
        ]
    }

    private static func description() -> BKFunction {
        BKFunction("__tostring") { stack in
            guard let object = stack.bridgedObject(at: 1) as? any CustomStringConvertible else { return 0 }
            stack.push(object.description)
            return 1
        }
    }

    /// `for i, v in pairs(obj)`: 1-based positions and elements (elements that are not
    /// `LuaConvertible` cross as nil).
    private static func pairs<S: Sequence>(_: S.Type) -> BKFunction {
        BKFunction("__pairs") { stack in
            guard let sequence = stack.bridgedObject(at: 1) as? S else { return 0 }
            let cursor = SequenceCursor(sequence.makeIterator())
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
    }

    private static func length<C: Collection>(_: C.Type) -> BKFunction {
        BKFunction("__len") { stack in
            guard let collection = stack.bridgedObject(at: 1) as? C else { return 0 }
            stack.push(Int64(collection.count))
            return 1
        }
    }

    private static func element<C: Collection>(_: C.Type) -> @Sendable (AnyObject, LuaStack, Int64) throws(LuaRaise) -> Bool {
        { object, stack, position throws(LuaRaise) in
            guard let collection = object as? C, position >= 1, position <= Int64(collection.count) else { return false }
            let index = collection.index(collection.startIndex, offsetBy: Int(position - 1))
            guard let element = collection[index] as? any LuaConvertible else { return false }
            element.push(on: stack)
            return true
        }
    }
}

/// An iterator shared by the Lua `next` function `__pairs` returns.
private final class SequenceCursor<Iterator: IteratorProtocol>: @unchecked Sendable {
    // Only called with the state's lock held (from Lua), so never concurrently.
    private var iterator: Iterator
    private(set) var position = 0
    init(_ iterator: Iterator) { self.iterator = iterator }
    func next() -> Iterator.Element? {
        guard let element = iterator.next() else { return nil }
        position += 1
        return element
    }
}
