
/// One element of a Lua collection during a walk: stack slots valid until the visit returns.
public struct LuaEntry {
    /// The element's position (list kinds) or its place in the key walk (dictionaries), from 1.
    public let position: Int64
    /// Stack index of the key (dictionaries only; 0 for list kinds).
    public let key: Int32
    /// Stack index of the value.
    public let value: Int32
    /// Stack index of a copy of the block just below the value, ready for a call that consumes
    /// both (list walks given a `callee`); 0 otherwise. After such a call `value` is gone.
    public let callee: Int32
    /// Stack index of the walk's `prefix` slot when a copy of it sits between the block and the
    /// value (reduce's accumulator), else 0.
    public let prefix: Int32

    @inlinable public init(position: Int64, key: Int32, value: Int32, callee: Int32 = 0, prefix: Int32 = 0) {
        self.position = position
        self.key = key
        self.value = value
        self.callee = callee
        self.prefix = prefix
    }
}

/// Walks a Lua collection in place, by kind.
///
/// List kinds (array, set, ordered set, index set) visit positions `1 ... n` where `n` is `#c` when
/// the walk starts, reading each position when its turn comes (raw), and stop at a position that
/// has become nil. Elements added by a block are not visited.
///
/// Dictionaries first record their keys (in a Lua table on the stack, not in Swift), then visit
/// each key whose value is still non-nil when its turn comes. `next` is never called while a block
/// may have changed the table, so a block can add or remove keys freely (`next` itself would raise
/// "invalid key to 'next'" after such a change).
///
/// Each visit finds the stack as the walk left it and may push freely: the walk restores the top.
/// A visit that throws leaves its error value on top (the helper raises it).
public struct LuaCollection: BlockWalkable {
    public let stack: LuaStack
    public let table: Int32
    public let kind: CollectionKind
    /// When non-zero (list kinds), each visit finds a copy of this slot (the block) pushed just
    /// before the element, so the block can be called on it without copying (see `LuaEntry.callee`).
    public let callee: Int32
    /// With a `callee`: a slot whose value is also pushed, between the block and the element.
    public let prefix: Int32

    public init(_ stack: LuaStack, _ table: Int32, kind: CollectionKind, callee: Int32 = 0, prefix: Int32 = 0) {
        self.stack = stack
        self.table = stack.absolute(table)
        self.kind = kind
        self.callee = kind.isList ? callee : 0
        self.prefix = kind.isList && callee != 0 ? prefix : 0
    }

    @inlinable @discardableResult
    public func walk<Failure: Error>(_ visit: (LuaEntry) throws(Failure) -> Bool) throws(Failure) -> Bool {
        kind.isList ? try walkList(visit) : try walkDictionary(visit)
    }

    @inlinable
    func walkList<Failure: Error>(_ visit: (LuaEntry) throws(Failure) -> Bool) throws(Failure) -> Bool {
        let count = stack.rawLength(table)
        return try stack.withRestoredTop { (base: Int32) throws(Failure) -> Bool in
            var position: Int64 = 1
            let slot = base + 1 + (callee != 0 ? 1 : 0) + (prefix != 0 ? 1 : 0)
            while position <= count {
                if callee != 0 { stack.pushCopy(of: callee) }
                if prefix != 0 { stack.pushCopy(of: prefix) }
                if stack.rawGet(table, position) == .nil { return true }
                let goOn = try visit(LuaEntry(position: position, key: 0, value: slot, callee: callee, prefix: prefix))
                stack.top = base  // this entry's slots
                if !goOn { return false }
                position += 1
            }
            return true
        }
    }

    @usableFromInline
    func walkDictionary<Failure: Error>(_ visit: (LuaEntry) throws(Failure) -> Bool) throws(Failure) -> Bool {
        try stack.withRestoredTop { () throws(Failure) -> Bool in
            let keys = pushKeys()
            let count = stack.rawLength(keys)
            let base = stack.top
            var position: Int64 = 1
            while position <= count {
                stack.rawGet(keys, position)
                stack.pushCopy(of: base + 1)
                if stack.rawGet(table) != .nil {
                    let goOn = try visit(LuaEntry(position: position, key: base + 1, value: base + 2))
                    if !goOn { return false }
                }
                stack.top = base  // this entry's slots
                position += 1
            }
            return true
        }
    }

    /// Pushes a list of the dictionary's keys (raw `next` order); returns its stack index.
    func pushKeys() -> Int32 {
        stack.pushNewTable()
        let keys = stack.top
        var count: Int64 = 0
        stack.pushNil()
        while stack.next(table) {
            stack.pop()
            count += 1
            stack.pushCopy(of: -1)
            stack.rawSet(keys, count)
        }
        return keys
    }
}
