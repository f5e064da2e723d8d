
/// The five collection kinds of BlocksKit Core, as Lua sees them.
///
/// Every kind is a plain Lua table with a metatable: arrays, sets, ordered sets and index sets keep
/// their elements in the array part (`c[1] .. c[#c]`, so `ipairs` and `#` work); dictionaries are
/// ordinary key/value tables. The metatable's `__bkkind` holds the kind's raw value and its
/// `__index` the helpers (`c:map(f)`, `c:bk_map(f)`).
public enum CollectionKind: Int, Sendable, CaseIterable {
    case array, dictionary, set, orderedSet, indexSet

    /// The name `bk.kind` returns.
    public var name: String {
        switch self {
        case .array: "array"
        case .dictionary: "dictionary"
        case .set: "set"
        case .orderedSet: "orderedSet"
        case .indexSet: "indexSet"
        }
    }

    /// Elements live at `1 ... #c`; blocks get `(value)`. Only dictionaries get `(key, value)`.
    @inlinable public var isList: Bool { self != .dictionary }

    /// Sets and ordered sets keep a membership table (see `SetMembership`).
    @inlinable public var hasMembership: Bool { self == .set || self == .orderedSet }

    /// The registry key of the shared metatable (sets get one metatable each, see `SetMembership`).
    var metatableKey: String { "bk." + name }
}

extension LuaStack {
    static let kindField = "__bkkind"

    /// The kind of the table at `index`: its bk metatable's, else an array when `t[1] ~= nil` or the
    /// table is empty, else a dictionary. Raw reads only; a foreign metatable is ignored.
    public func collectionKind(at index: Int32) -> CollectionKind {
        let index = absolute(index)
        if pushMetatable(of: index) {
            let found = rawGet(-1, field: Self.kindField) == .number ? toInteger(-1) : nil
            pop(2)
            if let found, let kind = CollectionKind(rawValue: Int(found)) { return kind }
        }
        let hasFirst = rawGet(index, 1) != .nil
        pop()
        if hasFirst { return .array }
        pushNil()
        if next(index) {
            pop(2)
            return .dictionary
        }
        return .array
    }

    /// True when the table at `index` has a metatable that is not one of the bridge's kinds.
    func hasForeignMetatable(_ index: Int32) -> Bool {
        guard pushMetatable(of: index) else { return false }
        let isKind = rawGet(-1, field: Self.kindField) == .number
        pop(2)
        return !isKind
    }

    /// Checks that argument `index` is a table and returns its kind.
    @inlinable public func checkCollection(_ index: Int32) throws(LuaRaise) -> CollectionKind {
        try checkTable(index)
        return collectionKind(at: index)
    }

    /// Sets the shared metatable of `kind` on the table at `index` (sets: a fresh membership, see
    /// `markSet`).
    func mark(_ index: Int32, as kind: CollectionKind) {
        let index = absolute(index)
        if kind.hasMembership {
            markSet(index, kind: kind)
            return
        }
        rawGet(LuaStack.registryIndex, field: kind.metatableKey)
        setMetatable(of: index)
    }

    /// Pushes a new empty collection of `kind`.
    func pushNewCollection(_ kind: CollectionKind, arrayCount: Int32 = 0, recordCount: Int32 = 0) {
        pushNewTable(arrayCount: arrayCount, recordCount: recordCount)
        mark(-1, as: kind)
    }

    /// The number of elements: `#c` for list kinds, the number of keys for dictionaries.
    func collectionCount(_ index: Int32, kind: CollectionKind) -> Int64 {
        if kind.isList { return listCount(index) }
        let index = absolute(index)
        var count: Int64 = 0
        pushNil()
        while next(index) {
            pop()
            count += 1
        }
        return count
    }

    /// True when the value at `index` is a float NaN (it cannot be a table key).
    @inlinable func isNaN(_ index: Int32) -> Bool {
        guard type(at: index) == .number, !isInteger(index), let x = toNumber(index) else { return false }
        return x != x
    }
}
