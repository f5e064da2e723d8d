/// The collection helpers on Swift sequences, for Swift hosts: the same `CollectionAlgorithms` the
/// Lua exports run, over a `SequenceWalk`. Closures may throw; the error type is kept (typed throws),
/// and a throwing closure stops the helper like a raising Lua block.
public struct SequenceWalk<Base: Sequence>: BlockWalkable {
    public let base: Base

    @inlinable public init(_ base: Base) { self.base = base }

    @inlinable @discardableResult
    public func walk<Failure: Error>(_ visit: (Base.Element) throws(Failure) -> Bool) throws(Failure) -> Bool {
        for element in base where !(try visit(element)) { return false }
        return true
    }
}

extension Sequence {
    /// Calls `body` on every element in order (BlocksKit `bk_each:`).
    @inlinable public func bk_each<E: Error>(_ body: (Element) throws(E) -> Void) throws(E) {
        try CollectionAlgorithms.each(SequenceWalk(self), body)
    }

    /// Calls `body` on every element; order not promised (BlocksKit `bk_apply:`; here sequential).
    @inlinable public func bk_apply<E: Error>(_ body: (Element) throws(E) -> Void) throws(E) {
        try CollectionAlgorithms.each(SequenceWalk(self), body)
    }

    /// The first element passing `test`, else nil; stops there.
    @inlinable public func bk_match<E: Error>(_ test: (Element) throws(E) -> Bool) throws(E) -> Element? {
        var found: Element?
        try CollectionAlgorithms.match(SequenceWalk(self), test) { found = $0 }
        return found
    }

    /// The elements passing `test`, in order.
    @inlinable public func bk_select<E: Error>(_ test: (Element) throws(E) -> Bool) throws(E) -> [Element] {
        var kept: [Element] = []
        try CollectionAlgorithms.filter(SequenceWalk(self), keeping: true, test) { kept.append($0) }
        return kept
    }

    /// The elements failing `test`, in order.
    @inlinable public func bk_reject<E: Error>(_ test: (Element) throws(E) -> Bool) throws(E) -> [Element] {
        var kept: [Element] = []
        try CollectionAlgorithms.filter(SequenceWalk(self), keeping: false, test) { kept.append($0) }
        return kept
    }

    /// `transform` of every element, in order (an optional result keeps its position, like `bk.null`).
    @inlinable public func bk_map<T, E: Error>(_ transform: (Element) throws(E) -> T) throws(E) -> [T] {
        var results: [T] = []
        results.reserveCapacity(underestimatedCount)
        try CollectionAlgorithms.map(SequenceWalk(self), transform) { _, result in results.append(result) }
        return results
    }

    /// `combine(accumulator, element)` folded from `initial` (also BlocksKit's reduceInteger /
    /// reduceFloat, with `A` an integer or floating-point type).
    @inlinable public func bk_reduce<A, E: Error>(_ initial: A, _ combine: (A, Element) throws(E) -> A) throws(E) -> A {
        try CollectionAlgorithms.reduce(SequenceWalk(self), initial, combine)
    }

    /// True when some element passes `test`; stops at the first.
    @inlinable public func bk_any<E: Error>(_ test: (Element) throws(E) -> Bool) throws(E) -> Bool {
        try CollectionAlgorithms.any(SequenceWalk(self), test)
    }

    /// True when no element passes `test`; stops at the first that does.
    @inlinable public func bk_none<E: Error>(_ test: (Element) throws(E) -> Bool) throws(E) -> Bool {
        try CollectionAlgorithms.none(SequenceWalk(self), test)
    }

    /// True when every element passes `test`; stops at the first that fails.
    @inlinable public func bk_all<E: Error>(_ test: (Element) throws(E) -> Bool) throws(E) -> Bool {
        try CollectionAlgorithms.all(SequenceWalk(self), test)
    }
}

extension Collection {
    /// True when both have the same count and `test(self[i], other[i])` holds for every position.
    @inlinable public func bk_corresponds<Other: Collection, E: Error>(
        _ other: Other, _ test: (Element, Other.Element) throws(E) -> Bool
    ) throws(E) -> Bool {
        guard count == other.count else { return false }
        var index = other.startIndex
        return try CollectionAlgorithms.corresponds(SequenceWalk(self)) { (element, _) throws(E) -> Bool in
            defer { index = other.index(after: index) }
            return try test(element, other[index])
        }
    }
}

extension Dictionary {
    /// The entries passing `test(key, value)`, as a dictionary.
    @inlinable public func bk_select<E: Error>(_ test: (Key, Value) throws(E) -> Bool) throws(E) -> [Key: Value] {
        var kept: [Key: Value] = [:]
        try CollectionAlgorithms.filter(SequenceWalk(self), keeping: true, { (entry) throws(E) -> Bool in
            try test(entry.key, entry.value)
        }, keep: { kept[$0.key] = $0.value })
        return kept
    }

    /// The entries failing `test(key, value)`, as a dictionary.
    @inlinable public func bk_reject<E: Error>(_ test: (Key, Value) throws(E) -> Bool) throws(E) -> [Key: Value] {
        var kept: [Key: Value] = [:]
        try CollectionAlgorithms.filter(SequenceWalk(self), keeping: false, { (entry) throws(E) -> Bool in
            try test(entry.key, entry.value)
        }, keep: { kept[$0.key] = $0.value })
        return kept
    }

    /// `key -> transform(key, value)` for every entry.
    @inlinable public func bk_map<T, E: Error>(_ transform: (Key, Value) throws(E) -> T) throws(E) -> [Key: T] {
        var results: [Key: T] = [:]
        results.reserveCapacity(count)
        try CollectionAlgorithms.map(SequenceWalk(self), { (entry) throws(E) -> T in
            try transform(entry.key, entry.value)
        }, store: { entry, result in results[entry.key] = result })
        return results
    }
}

extension RangeReplaceableCollection {
    /// Keeps only the elements passing `test`, in place (BlocksKit `bk_performSelect:`).
    @inlinable public mutating func bk_performSelect<E: Error>(_ test: (Element) throws(E) -> Bool) throws(E) {
        var kept = Self()
        try CollectionAlgorithms.filter(SequenceWalk(self), keeping: true, test) { kept.append($0) }
        self = kept
    }

    /// Removes the elements passing `test`, in place (BlocksKit `bk_performReject:`).
    @inlinable public mutating func bk_performReject<E: Error>(_ test: (Element) throws(E) -> Bool) throws(E) {
        var kept = Self()
        try CollectionAlgorithms.filter(SequenceWalk(self), keeping: false, test) { kept.append($0) }
        self = kept
    }
}

extension MutableCollection {
    /// Replaces every element with `transform(element)`, in place (BlocksKit `bk_performMap:`).
    @inlinable public mutating func bk_performMap<E: Error>(_ transform: (Element) throws(E) -> Element) throws(E) {
        var index = startIndex
        var copy = self
        try CollectionAlgorithms.map(SequenceWalk(self), transform) { _, result in
            copy[index] = result
            index = copy.index(after: index)
        }
        self = copy
    }
}
