
/// `bk.array`, `bk.dictionary` (mark a table in place), `bk.set`, `bk.orderedSet`, `bk.indexSet`
/// (build a new one), `bk.kind`, and the kinds' own methods (`add`, `remove`, `contains`).
enum CollectionConstructors {
    /// array(t) / dictionary(t): sets the kind's metatable on `t` (a new table when nil); returns it.
    /// A table with a metatable of its own is refused rather than silently losing it.
    static func mark(_ stack: LuaStack, as kind: CollectionKind) throws(LuaRaise) -> Int32 {
        if stack.isNoneOrNil(1) {
            stack.top = 0
            stack.pushNewTable()
        } else {
            try stack.checkTable(1)
            stack.top = 1
            try stack.argCheck(!stack.hasForeignMetatable(1), 1, "table already has a metatable")
        }
        stack.mark(1, as: kind)
        return 1
    }

    /// set(list) / orderedSet(list): a new set of the elements of any collection (a dictionary's
    /// values), first occurrence kept, in order.
    static func makeSet(_ stack: LuaStack, kind: CollectionKind) throws(LuaRaise) -> Int32 {
        let source: CollectionKind? = stack.isNoneOrNil(1) ? nil : try stack.checkCollectionContents(1)
        let set = CollectionBuilder(stack, kind: kind)
        if let source {
            CollectionAlgorithms.each(LuaCollection(stack, 1, kind: source)) { entry in
                stack.setAdd(set.table, members: set.members, value: entry.value)
            }
        }
        set.finish()
        return 1
    }

    /// The largest range `indexSet(first, count)` builds (a bound, so a typo cannot exhaust memory).
    static let maximumRange: Int64 = 1 << 24

    /// indexSet(list) or indexSet(first [, count = 1]).
    static func makeIndexSet(_ stack: LuaStack) throws(LuaRaise) -> Int32 {
        var indexes: [Int64] = []
        if stack.type(at: 1) == .number {
            let first = try stack.checkInteger(1)
            let count = try stack.optInteger(2, default: 1)
            try stack.argCheck(first >= 0, 1, "index must be non-negative")
            try stack.argCheck(count >= 0, 2, "count must be non-negative")
            try stack.argCheck(count <= maximumRange && first <= Int64.max - count, 2, "count too large")
            stack.top = 0
            stack.pushNewCollection(.indexSet, arrayCount: Int32(count))
            for i in 0 ..< count {
                stack.push(first + i)
                stack.rawSet(1, i + 1)
                if i & 0xFFF == 0 { try stack.checkMemoryBudget() }
            }
            return 1
        } else if !stack.isNoneOrNil(1) {
            // (first, count) or a collection: a string is not read as a number.
            if stack.type(at: 1) != .table { throw .type(1, expected: "table or integer") }
            let kind = try stack.checkCollectionContents(1)
            var bad: String?
            CollectionAlgorithms.match(LuaCollection(stack, 1, kind: kind), { entry in
                guard let value = stack.indexValue(entry.value) else { return true }
                indexes.append(value)
                return false
            }, found: { entry in
                // The bad value itself, and where it is: a list's position or a dictionary's key.
                let place = entry.key != 0 ? "key \(stack.describeKey(entry.key))" : "position \(entry.position)"
                bad = "\(stack.describeIndex(entry.value)) at \(place)"
            })
            if let bad { throw .argument(1, "non-negative integers expected, got \(bad)") }
        }
        stack.top = 0
        stack.pushNewCollection(.indexSet, arrayCount: Int32(clamping: indexes.count))
        try stack.writeIndexSet(1, indexes)
        return 1
    }

    static func kind(_ stack: LuaStack) throws(LuaRaise) -> Int32 {
        stack.push(try stack.checkCollectionContents(1).name)
        return 1
    }

    // MARK: Methods of the kinds (not in the bk table)

    /// add / remove / contains on sets, ordered sets and index sets.
    enum Membership { case add, remove, contains }

    static func membership(_ stack: LuaStack, _ operation: Membership) throws(LuaRaise) -> Int32 {
        // contains reads: a frozen set answers for what it shows (its contents, a copy of the set).
        let frozen = operation == .contains && stack.isFrozenView(1)
        let kind = operation == .contains ? try stack.checkCollectionContents(1) : try stack.checkCollection(1)
        if operation != .contains { try stack.checkNotFrozen(1) }
        try stack.checkAny(2)
        stack.top = 2
        switch kind {
        case .set, .orderedSet:
            // The membership is the set table's own: a table that only carries a set's metatable has
            // none, and is refused rather than sharing another set's.
            if !stack.pushMembers(of: 1) {
                guard frozen else { throw .argument(1, "set expected, got table") }
                stack.pop()
                stack.indexFrozenSetContents(1)
            }
            switch operation {
            case .add:
                try stack.argCheck(!stack.isNoneOrNil(2), 2, "element must not be nil")
                stack.push(stack.setAdd(1, members: 3, value: 2))
            case .remove: stack.push(stack.setRemove(1, members: 3, value: 2))
            case .contains: stack.push(stack.setContains(members: 3, value: 2))
            }
        case .indexSet:
            let value = stack.indexValue(2)
            switch operation {
            case .add:
                guard let value else {
                    throw .argument(2, "non-negative integer expected, got \(stack.describeIndex(2))")
                }
                stack.push(stack.indexSetAdd(1, value))
            case .remove: stack.push(value.map { stack.indexSetRemove(1, $0) } ?? false)
            case .contains: stack.push(value.map { stack.indexSetSearch(1, $0).found } ?? false)
            }
        case .array, .dictionary:
            throw .type(1, expected: "set")
        }
        return 1
    }
}
