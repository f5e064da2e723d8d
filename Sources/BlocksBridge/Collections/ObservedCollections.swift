
/// Observed tables as collections.
///
/// Observing a key of a table moves its value out of the table into a store in the table's proxy
/// metatable (see `ObservationEngine`), so that writes reach `__newindex`. The helpers read tables
/// raw, so they would miss those values. At their entry they therefore swap an observed collection
/// argument for a snapshot: a fresh table with the raw fields plus the stored ones, of the same
/// kind. An unobserved table costs one metatable field read; the walks themselves are unchanged.
///
/// The in-place helpers compute on a snapshot and then write the changes back into the real table
/// with ordinary assignments (`t[k] = v`), so observers are notified and the table stays observed.
extension LuaStack {
    /// `checkCollection` for helpers that read the collection: when argument `index` is an observed
    /// table, replaces it in its slot with a snapshot of its contents.
    func checkCollectionContents(_ index: Int32) throws(LuaRaise) -> CollectionKind {
        try checkTable(index)
        replaceFrozenViewByContents(at: index)  // a frozen view's helpers read what it shows
        if pushSnapshotIfObserved(index) { replace(at: index) }
        return collectionKind(at: index)
    }

    /// True when the value at `index` is an observed table.
    func isObservedTable(_ index: Int32) -> Bool {
        guard pushObservedFields(of: index) else { return false }
        pop()
        return true
    }

    /// Pushes a snapshot of the observed table at `index` and returns true; returns false and pushes
    /// nothing when it is not observed. The snapshot has the raw fields and the stored ones (a raw
    /// field wins, as it does for `t[k]`). Its kind is the original's: the proxy metatable is a copy
    /// of the original metatable, so its `__bkkind` is the original's (a set's snapshot shares the
    /// set's membership table); a plain or foreign-metatable table gets a plain snapshot, which
    /// the plain-table rule then sees whole (`t[1]` included).
    func pushSnapshotIfObserved(_ index: Int32) -> Bool {
        let index = absolute(index)
        guard pushObservedFields(of: index) else { return false }
        let store = top
        pushNewTable()
        let snapshot = top
        copyFields(from: store, to: snapshot)
        copyFields(from: index, to: snapshot)
        _ = pushMetatable(of: index)  // the proxy metatable (the table is observed)
        if rawGet(-1, field: Self.kindField) == .number {
            pushNewTable(recordCount: 1)
            insert(at: -2)
            rawSet(-2, field: Self.kindField)
            setMetatable(of: snapshot)
            if pushMembers(of: index) {
                setMembers(of: snapshot)  // the same membership table
            } else {
                pop()
            }
        } else {
            pop()
        }
        pop()
        remove(at: store)
        return true
    }

    /// `to[k] = v` (raw) for every field of the table `from`.
    private func copyFields(from: Int32, to: Int32) {
        pushNil()
        while next(from) {
            pushCopy(of: -2)
            insert(at: -2)
            rawSet(to)
        }
    }
}

extension CollectionMutators {
    /// Runs the in-place helper `body` (which works on argument 1 and leaves the stack above it as it
    /// likes) on the observed table at argument 1, leaving that table at 1: on a snapshot, then assigns what changed back into the table,
    /// also when a block raised (the table then gets the state the helper documents for failures).
    static func performOnObserved(_ stack: LuaStack,
                                  _ body: (LuaStack) throws(LuaRaise) -> Void) throws(LuaRaise) {
        try stack.checkFunction(2)
        stack.top = 2
        _ = stack.pushSnapshotIfObserved(1)  // the one the helper changes
        _ = stack.pushSnapshotIfObserved(1)  // the contents before
        // [snapshot, f, table, before]: the helper finds its collection at 1.
        stack.pushCopy(of: 1)
        stack.pushCopy(of: 3)
        stack.replace(at: 1)
        stack.replace(at: 3)
        let table: Int32 = 3, before: Int32 = 4
        do throws(LuaRaise) {
            try body(stack)
        } catch {
            let errorTop = stack.top  // a block's error value is on top: keep it there
            // Unless a block rewrote this frame's slots (the error then says so): nothing to write.
            if stack.type(at: 1) == .table, stack.type(at: table) == .table, stack.type(at: before) == .table {
                try writeBack(stack, table: table, before: before, after: 1)
            }
            stack.top = errorTop
            throw error
        }
        try writeBack(stack, table: table, before: before, after: 1)
        stack.pushCopy(of: table)
        stack.replace(at: 1)  // the helper returns the table itself
    }

    /// Assigns the differences between `before` and `after` (snapshots) to the observed `table`,
    /// through the observation engine (a Lua function, called protected); syncs a set's membership.
    private static func writeBack(_ stack: LuaStack, table: Int32, before: Int32, after: Int32) throws(LuaRaise) {
        try stack.withRestoredTop { () throws(LuaRaise) in
            let kind = stack.collectionKind(at: after)
            try ObservationEngine.call(stack, "assignChanges", results: 0) { () throws(LuaRaise) in
                stack.pushCopy(of: table)
                stack.pushCopy(of: before)
                stack.pushCopy(of: after)
                stack.push(kind.isList)
            }
            if kind.hasMembership {
                // performMap rebuilt the snapshot with a membership of its own: the set's gets its contents.
                let hasNew = stack.pushMembers(of: after)
                let hasOld = stack.pushMembers(of: table)
                if hasNew, hasOld, !stack.rawEqual(-1, -2) {
                    let old = stack.top, new = old - 1
                    stack.pushNil()
                    while stack.next(old) {
                        stack.pop()
                        stack.pushCopy(of: -1)
                        stack.pushNil()
                        stack.rawSet(old)
                    }
                    stack.pushNil()
                    while stack.next(new) {
                        stack.pushCopy(of: -2)
                        stack.insert(at: -2)
                        stack.rawSet(old)
                    }
                }
            }
        }
    }
}
