/// The collection toolbox on Swift sequences, for Swift hosts: the helpers whose Lua counterparts
/// (`bk.groupBy`, `bk.countBy`, ...) the standard library lacks. Where it has one (`sorted(by:)`,
/// `flatMap`, `compactMap`, `prefix(while:)`, `drop(while:)`, `count(where:)`, `reversed()`,
/// `firstIndex(of:)`, `Set.union`, ...), use it. Closures may throw; the error type is kept and a
/// throwing closure stops the helper, like a raising Lua block.
extension Sequence {
    /// A dictionary `key(element)` -> the elements with that key, in order (`bk.groupBy`).
    @inlinable public func bk_groupBy<K: Hashable, E: Error>(_ key: (Element) throws(E) -> K) throws(E) -> [K: [Element]] {
        var groups: [K: [Element]] = [:]
        for element in self {
            groups[try key(element), default: []].append(element)
        }
        return groups
    }

    /// A dictionary `key(element)` -> how many elements have that key (`bk.countBy`).
    @inlinable public func bk_countBy<K: Hashable, E: Error>(_ key: (Element) throws(E) -> K) throws(E) -> [K: Int] {
        var counts: [K: Int] = [:]
        for element in self {
            counts[try key(element), default: 0] += 1
        }
        return counts
    }

    /// The elements for which `test` is true, then the rest, each in order (`bk.partition`; the
    /// standard library's `partition(by:)` reorders in place and is not stable).
    @inlinable public func bk_partition<E: Error>(
        _ test: (Element) throws(E) -> Bool
    ) throws(E) -> (matching: [Element], rest: [Element]) {
        var matching: [Element] = []
        var rest: [Element] = []
        for element in self {
            if try test(element) { matching.append(element) } else { rest.append(element) }
        }
        return (matching, rest)
    }

    /// Arrays of `size` elements in order, the last possibly shorter (`bk.chunked`). `size` >= 1.
    @inlinable public func bk_chunked(_ size: Int) -> [[Element]] {
        precondition(size >= 1, "bk_chunked: size must be at least 1")
        var chunks: [[Element]] = []
        var chunk: [Element] = []
        chunk.reserveCapacity(size)
        for element in self {
            chunk.append(element)
            if chunk.count == size {
                chunks.append(chunk)
                chunk.removeAll(keepingCapacity: true)
            }
        }
        if !chunk.isEmpty { chunks.append(chunk) }
        return chunks
    }

    /// The elements sorted by `key(element)`, computed once per element, stably (equal keys keep
    /// their order, also when `descending`) (`bk.sortedBy`).
    @inlinable public func bk_sortedBy<K: Comparable, E: Error>(
        descending: Bool = false, _ key: (Element) throws(E) -> K
    ) throws(E) -> [Element] {
        var keyed: [(key: K, position: Int, element: Element)] = []
        keyed.reserveCapacity(underestimatedCount)
        var position = 0
        for element in self {
            keyed.append((try key(element), position, element))
            position += 1
        }
        // The position breaks ties, so the order does not depend on the sort being stable.
        keyed.sort { a, b in
            if a.key != b.key { return descending ? b.key < a.key : a.key < b.key }
            return a.position < b.position
        }
        return keyed.map(\.element)
    }

    /// The first element for each distinct `key(element)`, in order (`bk.uniq`).
    @inlinable public func bk_uniq<K: Hashable, E: Error>(by key: (Element) throws(E) -> K) throws(E) -> [Element] {
        var seen: Set<K> = []
        var result: [Element] = []
        for element in self where seen.insert(try key(element)).inserted {
            result.append(element)
        }
        return result
    }

    /// The element with the least `key(element)`, computed once per element; the first on ties;
    /// nil when empty (`bk.min`).
    @inlinable public func bk_min<K: Comparable, E: Error>(by key: (Element) throws(E) -> K) throws(E) -> Element? {
        try extreme(key, greatest: false)
    }

    /// The element with the greatest `key(element)`; the first on ties; nil when empty (`bk.max`).
    @inlinable public func bk_max<K: Comparable, E: Error>(by key: (Element) throws(E) -> K) throws(E) -> Element? {
        try extreme(key, greatest: true)
    }

    @inlinable func extreme<K: Comparable, E: Error>(
        _ key: (Element) throws(E) -> K, greatest: Bool
    ) throws(E) -> Element? {
        var best: (key: K, element: Element)?
        for element in self {
            let k = try key(element)
            if let current = best {
                if greatest ? current.key < k : k < current.key { best = (k, element) }
            } else {
                best = (k, element)
            }
        }
        return best?.element
    }

    /// The sum of `value(element)` (`bk.sum(c, f)`); zero when empty.
    @inlinable public func bk_sum<T: AdditiveArithmetic, E: Error>(_ value: (Element) throws(E) -> T) throws(E) -> T {
        var total = T.zero
        for element in self { total += try value(element) }
        return total
    }
}

extension Sequence where Element: Hashable {
    /// A dictionary element -> how many times it occurs (`bk.countBy(c)`).
    @inlinable public func bk_countBy() -> [Element: Int] {
        var counts: [Element: Int] = [:]
        for element in self { counts[element, default: 0] += 1 }
        return counts
    }

    /// The elements without repeats, first occurrence kept, in order (`bk.uniq(c)`).
    @inlinable public func bk_uniq() -> [Element] {
        var seen: Set<Element> = []
        return filter { seen.insert($0).inserted }
    }
}

extension Sequence where Element: AdditiveArithmetic {
    /// The sum of the elements (`bk.sum(c)`); zero when empty.
    @inlinable public func bk_sum() -> Element {
        reduce(.zero, +)
    }
}
