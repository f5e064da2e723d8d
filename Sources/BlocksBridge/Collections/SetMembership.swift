import CLua
import CLuaShim

/// Sets and ordered sets: the elements in the array part of the table (insertion order, so walks
/// are in place and ordered) plus a membership table `member -> true` for uniqueness by raw Lua
/// equality. The membership table lives in the set's own metatable (`__bkmembers`), so the set
/// itself holds nothing but its elements and `pairs`, `ipairs` and `#` see only them.
///
/// NaN is never equal to itself, so NaN elements are kept without a membership entry (a table key
/// cannot be NaN anyway). Change sets through `add` / `remove` or the helpers: a direct
/// `s[i] = v` bypasses the membership table.
extension LuaStack {
    static let membersField = "__bkmembers"

    /// Gives the table at `index` a fresh metatable of `kind` (set or ordered set) with an empty
    /// membership table. Existing elements are not indexed: callers mark empty tables.
    func markSet(_ index: Int32, kind: CollectionKind) {
        let index = absolute(index)
        pushNewTable(recordCount: 4)
        let meta = top
        rawGet(LuaStack.registryIndex, field: kind.metatableKey)  // the kind's template
        let template = top
        for field in ["__index", "__name", "__tostring"] {
            rawGet(template, field: field)
            rawSet(meta, field: field)
        }
        pop()
        push(Int64(kind.rawValue))
        rawSet(meta, field: Self.kindField)
        pushNewTable()
        rawSet(meta, field: Self.membersField)
        setMetatable(of: index)
    }

    /// Pushes the membership table of the set at `index`; false (nil pushed) when it has none.
    @discardableResult
    func pushMembers(of index: Int32) -> Bool {
        guard pushMetatable(of: index) else {
            pushNil()
            return false
        }
        let found = rawGet(-1, field: Self.membersField) == .table
        remove(at: -2)
        return found
    }

    /// Appends the value at `value` to the set at `set` unless it is already a member.
    /// `members` is the set's membership table. Returns true when added.
    @discardableResult
    func setAdd(_ set: Int32, members: Int32, value: Int32) -> Bool {
        let value = absolute(value)
        if type(at: value) == .nil { return false }
        if !isNaN(value) {
            pushCopy(of: value)
            let present = rawGet(members) != .nil
            pop()
            if present { return false }
            pushCopy(of: value)
            push(true)
            rawSet(members)
        }
        pushCopy(of: value)
        rawSet(set, rawLength(set) + 1)
        return true
    }

    /// True when the value at `value` is a member of the set whose membership table is at `members`.
    func setContains(members: Int32, value: Int32) -> Bool {
        if type(at: value) == .nil || isNaN(value) { return false }
        pushCopy(of: value)
        let present = rawGet(members) != .nil
        pop()
        return present
    }

    /// Removes the value at `value` from the set (shifting later elements down). True when removed.
    @discardableResult
    func setRemove(_ set: Int32, members: Int32, value: Int32) -> Bool {
        let value = absolute(value)
        guard setContains(members: members, value: value) else { return false }
        pushCopy(of: value)
        pushNil()
        rawSet(members)
        let count = listCount(set)
        var position: Int64 = 1
        while position <= count {
            rawGet(set, position)
            let found = rawEqual(-1, value)
            pop()
            if found { break }
            position += 1
        }
        removePosition(set, position, count: count)
        return true
    }

    /// Removes `t[position]` from the list at `list` of `count` elements, shifting the rest down.
    func removePosition(_ list: Int32, _ position: Int64, count: Int64) {
        guard position <= count else { return }
        var i = position
        while i < count {
            rawGet(list, i + 1)
            rawSet(list, i)
            i += 1
        }
        pushNil()
        rawSet(list, count)
    }
}
