
/// Sets and ordered sets: the elements in the array part of the table (insertion order, so walks
/// are in place and ordered) plus a membership table `member -> true` for uniqueness by raw Lua
/// equality. The membership table belongs to the set table itself: it is the value of the set in
/// a weak-keyed (ephemeron) table of the registry (`bk.setMembers`), so the set holds nothing but
/// its elements (`pairs`, `ipairs` and `#` see only them) and its metatable is the kind's shared
/// one. A table given a set's metatable (`setmetatable({}, getmetatable(s))`) claims the set kind
/// but owns no membership: `add` / `remove` / `contains` refuse it, and it never reaches another
/// set's bookkeeping.
///
/// NaN is never equal to itself, so NaN elements are kept without a membership entry (a table key
/// cannot be NaN anyway). Change sets through `add` / `remove` or the helpers: a direct
/// `s[i] = v` bypasses the membership table.
extension LuaStack {
    static let membersKey = "bk.setMembers"

    /// Pushes the registry's set -> membership table (weak keys), making it when missing.
    func pushMembershipRegistry() {
        if rawGet(LuaStack.registryIndex, field: Self.membersKey) == .table { return }
        pop()
        pushNewTable()
        pushNewTable(recordCount: 1)
        push("k")
        rawSet(-2, field: "__mode")
        setMetatable(of: -2)
        pushCopy(of: -1)
        rawSet(LuaStack.registryIndex, field: Self.membersKey)
    }

    /// Gives the table at `index` the metatable of `kind` (set or ordered set) and a fresh empty
    /// membership table. Existing elements are not indexed: callers mark empty tables.
    func markSet(_ index: Int32, kind: CollectionKind) {
        let index = absolute(index)
        rawGet(LuaStack.registryIndex, field: kind.metatableKey)
        setMetatable(of: index)
        pushNewTable()
        setMembers(of: index)
    }

    /// Makes the table on top (popped) the membership table of the table at `index`.
    func setMembers(of index: Int32) {
        let index = absolute(index)
        pushMembershipRegistry()
        pushCopy(of: index)
        pushCopy(of: -3)
        rawSet(-3)
        pop(2)
    }

    /// Pushes the membership table of the set at `index`; false (nil pushed) when it has none
    /// (a plain table, or one that only claims a set kind through its metatable).
    @discardableResult
    func pushMembers(of index: Int32) -> Bool {
        let index = absolute(index)
        guard rawGet(LuaStack.registryIndex, field: Self.membersKey) == .table else {
            pop()
            pushNil()
            return false
        }
        pushCopy(of: index)
        let found = rawGet(-2) == .table
        remove(at: -2)
        if !found {
            pop()
            pushNil()
        }
        return found
    }

    /// Gives the contents of a frozen set at `index` (a copy made by `bk.freeze`, which has the
    /// set's kind but no membership) a membership table of its elements, and pushes it. The
    /// contents never change, so it is built once, at the first `contains`.
    func indexFrozenSetContents(_ index: Int32) {
        let index = absolute(index)
        let count = listCount(index)
        pushNewTable(recordCount: Int32(clamping: count))
        let members = top
        var position: Int64 = 1
        while position <= count {
            rawGet(index, position)
            if type(at: -1) != .nil && !isNaN(-1) {
                push(true)
                rawSet(members)
            } else {
                pop()
            }
            position += 1
        }
        pushCopy(of: members)
        setMembers(of: index)
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
