import CLuaShim

/// What the toolbox's Lua (`ToolboxCommon.lua`) cannot do safely or quickly itself: see what a
/// table really holds (raw, whatever its metatable or `#t` says) and make tables of an exact size.
/// Each is called once per helper call (or per nested list in `flatten`), never per element.
enum ToolboxNatives {
    /// Pushes the natives' table: `contents`, `spliceable`, `splicePlain`, `newtable`, `uniform`, the kinds' metatables
    /// (`array`, ..., `indexSet`), the sets' membership registry (`members`) and `kinds` (the
    /// numbers `contents` answers).
    static func push(on stack: LuaStack) {
        stack.pushNewTable(recordCount: 12)
        let natives = stack.top
        stack.push(function: "contents") { stack throws(LuaRaise) in try contents(stack) }
        stack.rawSet(natives, field: "contents")
        stack.push(function: "spliceable") { stack throws(LuaRaise) in try spliceable(stack) }
        stack.rawSet(natives, field: "spliceable")
        stack.push(cFunction: bk_toolbox_splice)  // C: flatten's plain lists (ToolboxSplice.c)
        stack.rawSet(natives, field: "splicePlain")
        stack.push(function: "newtable") { stack throws(LuaRaise) in
            stack.pushNewTable(existingArrayCount: stack.toInteger(1) ?? 0, recordCount: stack.toInteger(2) ?? 0)
            return 1
        }
        stack.rawSet(natives, field: "newtable")
        stack.push(function: "uniform") { stack throws(LuaRaise) in
            stack.push(stack.type(at: 1) == .table && isUniform(stack, count: stack.toInteger(2) ?? 0))
            return 1
        }
        stack.rawSet(natives, field: "uniform")
        stack.pushNewTable(recordCount: Int32(CollectionKind.allCases.count))
        for kind in CollectionKind.allCases {
            stack.rawGet(LuaStack.registryIndex, field: kind.metatableKey)
            stack.rawSet(natives, field: kind.name)
            stack.push(Int64(kind.rawValue))
            stack.rawSet(-2, field: kind.name)
        }
        stack.rawSet(natives, field: "kinds")
        stack.pushMembershipRegistry()
        stack.rawSet(natives, field: "members")
    }

    /// contents(t [, boundOnly]) -> t', kind [, count]: the table a helper reads, its kind and, for
    /// list kinds, the number of elements (positions up to the first nil, counted raw), or with
    /// `boundOnly` a raw border, which the caller's loop must stop at the first nil before. `t'` is `t`, or a
    /// frozen view's contents, or a snapshot for an observed table (see `ObservedCollections`), or a raw copy for a table with
    /// a metatable that is not a bk kind's (so no `__index` of its runs when a helper reads it).
    static func contents(_ stack: LuaStack) throws(LuaRaise) -> Int32 {
        try stack.checkTable(1)
        let boundOnly = stack.toBool(2)
        stack.top = 1
        stack.replaceFrozenViewByContents(at: 1)  // a frozen view's helpers read what it shows
        if stack.pushSnapshotIfObserved(1) {
            stack.replace(at: 1)
        } else if stack.hasForeignMetatable(1) {
            stack.pushRawCopy(of: 1)
            stack.replace(at: 1)
        }
        let kind = stack.collectionKind(at: 1)
        stack.push(Int64(kind.rawValue))
        guard kind.isList else { return 2 }
        // A raw border is at least the first nil's position - 1 (the first border is the least),
        // so a loop to it that stops at the first nil reads exactly the elements, without the
        // counting pass. Only for loops that allocate nothing by it: a crafted border is 2^40.
        stack.push(boundOnly ? Int64(stack.rawLength(1)) : stack.listCount(1))
        return 3
    }

    /// uniform(t, n): whether `t[1 ... n]` are all integers or all strings, so that equal elements
    /// are the same value and an unstable sort by `<` cannot be told from a stable one. Raw reads.
    static func isUniform(_ stack: LuaStack, count: Int64) -> Bool {
        guard count > 0 else { return true }
        let strings = stack.rawGet(1, 1) == .string
        stack.pop()
        var i: Int64 = 1
        while i <= count {
            let type = stack.rawGet(1, i)
            let same = strings ? type == .string : type == .number && stack.isInteger(-1)
            stack.pop()
            if !same { return false }
            i += 1
        }
        return true
    }

    /// spliceable(v) -> t', count, or nothing: whether `flatten` splices `v` (a list kind of bk's,
    /// or a table with no metatable and `v[1] ~= nil`), with the table to read and its count.
    static func spliceable(_ stack: LuaStack) throws(LuaRaise) -> Int32 {
        guard stack.type(at: 1) == .table else { return 0 }
        stack.top = 1
        stack.replaceFrozenViewByContents(at: 1)
        if stack.pushSnapshotIfObserved(1) { stack.replace(at: 1) }
        if stack.pushMetatable(of: 1) {
            let isKind = stack.rawGet(-1, field: LuaStack.kindField) == .number
            stack.pop(2)
            guard isKind, stack.collectionKind(at: 1).isList else { return 0 }
        } else {
            let hasFirst = stack.rawGet(1, 1) != .nil
            stack.pop()
            guard hasFirst else { return 0 }
        }
        stack.push(stack.listCount(1))
        return 2
    }
}

extension LuaStack {
    /// Pushes a new table with the raw fields of the table at `index` (no metatable).
    func pushRawCopy(of index: Int32) {
        let index = absolute(index)
        pushNewTable()
        let copy = top
        pushNil()
        while next(index) {
            pushCopy(of: -2)
            insert(at: -2)
            rawSet(copy)
        }
    }
}
