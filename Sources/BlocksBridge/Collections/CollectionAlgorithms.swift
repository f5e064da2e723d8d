/// Something the collection helpers can walk: its elements in order, stopping early on request.
///
/// The helpers are written once, generically, in `CollectionAlgorithms`, and used both by the Lua
/// exports (`LuaCollection` walks a Lua table in place; its elements are stack slots) and by the
/// Swift API on Swift sequences (`SequenceWalk`).
public protocol BlockWalkable {
    associatedtype Element
    /// Calls `visit` on each element in order until it returns false. Returns false when stopped.
    @discardableResult
    func walk<Failure: Error>(_ visit: (Element) throws(Failure) -> Bool) throws(Failure) -> Bool
}

/// The helpers' logic, independent of where the elements and the blocks live. `test` and the other
/// closures are the block calls; `keep` / `store` receive what the helper collects.
public enum CollectionAlgorithms {
    /// bk_each / bk_apply: every element, in order.
    @inlinable
    public static func each<C: BlockWalkable, F: Error>(
        _ c: C, _ body: (C.Element) throws(F) -> Void
    ) throws(F) {
        try c.walk { (e) throws(F) -> Bool in try body(e); return true }
    }

    /// bk_match: the first element passing `test` goes to `found`; stops there. True when found.
    @inlinable @discardableResult
    public static func match<C: BlockWalkable, F: Error>(
        _ c: C, _ test: (C.Element) throws(F) -> Bool, found: (C.Element) -> Void
    ) throws(F) -> Bool {
        let completed = try c.walk { (e) throws(F) -> Bool in
            if try test(e) { found(e); return false }
            return true
        }
        return !completed
    }

    /// bk_select (`keeping` true) / bk_reject (false): each element whose test is `keeping` goes to `keep`.
    @inlinable
    public static func filter<C: BlockWalkable, F: Error>(
        _ c: C, keeping: Bool, _ test: (C.Element) throws(F) -> Bool, keep: (C.Element) -> Void
    ) throws(F) {
        try c.walk { (e) throws(F) -> Bool in
            if try test(e) == keeping { keep(e) }
            return true
        }
    }

    /// bk_map: `transform` on each element, its result to `store` with the element it came from.
    @inlinable
    public static func map<C: BlockWalkable, T, F: Error>(
        _ c: C, _ transform: (C.Element) throws(F) -> T, store: (C.Element, T) -> Void
    ) throws(F) {
        try c.walk { (e) throws(F) -> Bool in
            store(e, try transform(e))
            return true
        }
    }

    /// bk_reduce: `combine(accumulator, element)` folded from `initial`.
    @inlinable
    public static func reduce<C: BlockWalkable, A, F: Error>(
        _ c: C, _ initial: A, _ combine: (A, C.Element) throws(F) -> A
    ) throws(F) -> A {
        var accumulator = initial
        try c.walk { (e) throws(F) -> Bool in
            accumulator = try combine(accumulator, e)
            return true
        }
        return accumulator
    }

    /// bk_any: stops at the first element passing `test`.
    @inlinable
    public static func any<C: BlockWalkable, F: Error>(
        _ c: C, _ test: (C.Element) throws(F) -> Bool
    ) throws(F) -> Bool {
        !(try c.walk { (e) throws(F) -> Bool in !(try test(e)) })
    }

    /// bk_all: stops at the first element failing `test`.
    @inlinable
    public static func all<C: BlockWalkable, F: Error>(
        _ c: C, _ test: (C.Element) throws(F) -> Bool
    ) throws(F) -> Bool {
        try c.walk(test)
    }

    /// bk_none: stops at the first element passing `test`.
    @inlinable
    public static func none<C: BlockWalkable, F: Error>(
        _ c: C, _ test: (C.Element) throws(F) -> Bool
    ) throws(F) -> Bool {
        !(try any(c, test))
    }

    /// bk_corresponds: walks `c`; `test(element, position)` compares it with the other collection's
    /// element at that position (the caller has already checked the counts). Stops at the first false.
    @inlinable
    public static func corresponds<C: BlockWalkable, F: Error>(
        _ c: C, _ test: (C.Element, Int) throws(F) -> Bool
    ) throws(F) -> Bool {
        var position = 0
        return try c.walk { (e) throws(F) -> Bool in
            position += 1
            return try test(e, position)
        }
    }
}
