
/// The in-place helpers (BlocksKit's NSMutable* `bk_perform*`): they change `c` and return it.
///
/// Lists are compacted in place as they are walked. If a block raises, the helper stops and the
/// collection is left consistent: already-rejected elements are gone, the failing element and the
/// ones after it are kept (performSelect / performReject); already-mapped elements keep their new
/// values (performMap on arrays and dictionaries); sets and index sets are rebuilt only once every
/// block has returned, so a failing performMap leaves them unchanged.
enum CollectionMutators {
    static func performFilter(_ stack: LuaStack, keeping: Bool) throws(LuaRaise) -> Int32 {
        if stack.isObservedTable(1) {
            try performOnObserved(stack) { (stack) throws(LuaRaise) in try filterInPlace(stack, keeping: keeping) }
        } else {
            try filterInPlace(stack, keeping: keeping)
        }
        stack.top = 1
        return 1
    }

    static func performMap(_ stack: LuaStack) throws(LuaRaise) -> Int32 {
        if stack.isObservedTable(1) {
            try performOnObserved(stack) { (stack) throws(LuaRaise) in try mapInPlace(stack) }
        } else {
            try mapInPlace(stack)
        }
        stack.top = 1
        return 1
    }

    /// performSelect / performReject on the collection at argument 1 (raw).
    private static func filterInPlace(_ stack: LuaStack, keeping: Bool) throws(LuaRaise) {
        let kind = try stack.checkCollection(1)
        try stack.checkNotFrozen(1)
        let block = try LuaBlock(stack, argument: 2)
        let walk = LuaCollection(stack, 1, kind: kind)
        if !kind.isList {
            try CollectionAlgorithms.filter(walk, keeping: !keeping, block.test) { entry in
                stack.pushCopy(of: entry.key)
                stack.pushNil()
                stack.rawSet(1)
            }
            return
        }
        // A hand-made table claiming to be a set may lack a membership table: then there is none to update.
        let hasMembers = kind.hasMembership ? stack.pushMembers(of: 1) : { stack.pushNil(); return false }()
        let members = stack.top
        let count = stack.listCount(1)
        var written: Int64 = 0
        var visited: Int64 = 0
        do throws(LuaRaise) {
            try CollectionAlgorithms.each(walk) { (entry) throws(LuaRaise) in
                visited = entry.position
                if try block.test(entry) == keeping {
                    written += 1
                    if written != entry.position {
                        stack.pushCopy(of: entry.value)
                        stack.rawSet(1, written)
                    }
                } else if hasMembers, !stack.isNaN(entry.value) {
                    stack.pushCopy(of: entry.value)
                    stack.pushNil()
                    stack.rawSet(members)
                }
            }
            visited = count
        } catch {
            // Keep the failing element and the unvisited rest after the kept ones (unless the
            // block rewrote this frame's slot 1: then the error says so and nothing is touched).
            if stack.type(at: 1) == .table { stack.closeGap(1, written: written, from: visited, count: count) }
            throw error
        }
        stack.closeGap(1, written: written, from: count + 1, count: count)
    }

    /// performMap on the collection at argument 1 (raw).
    private static func mapInPlace(_ stack: LuaStack) throws(LuaRaise) {
        let kind = try stack.checkCollection(1)
        try stack.checkNotFrozen(1)
        let block = try LuaBlock(stack, argument: 2)
        let walk = LuaCollection(stack, 1, kind: kind)
        switch kind {
        case .array, .dictionary:
            try CollectionAlgorithms.map(walk, { (entry) throws(LuaRaise) in
                try block.transform(entry)
                stack.replaceNilWithNull()
            }, store: { entry, _ in
                if entry.key != 0 {
                    stack.pushCopy(of: entry.key)
                    stack.insert(at: -2)
                    stack.rawSet(1)
                } else {
                    stack.rawSet(1, entry.position)
                }
            })
        case .set, .orderedSet, .indexSet:
            // Results first (a Lua list on the stack), then the rebuild.
            let count = stack.listCount(1)
            stack.pushNewTable(arrayCount: Int32(clamping: count))
            let results = stack.top
            var mapped: Int64 = 0
            try CollectionAlgorithms.map(walk, { (entry) throws(LuaRaise) in
                try block.transform(entry)
                stack.replaceNilWithNull()
                if kind == .indexSet, stack.indexValue(-1) == nil {
                    throw .argument(2, "block returned \(stack.describeIndex(-1)), non-negative integer expected")
                }
            }, store: { _, _ in
                mapped += 1
                stack.rawSet(results, mapped)
            })
            if kind == .indexSet {
                var indexes: [Int64] = []
                indexes.reserveCapacity(LuaStack.sizeHint(mapped))
                for i in 0 ..< mapped {
                    stack.rawGet(results, i + 1)
                    indexes.append(stack.indexValue(-1) ?? 0)
                    stack.pop()
                }
                try stack.writeIndexSet(1, indexes)
            } else {
                stack.closeGap(1, written: 0, from: count + 1, count: count)
                stack.markSet(1, kind: kind)
                stack.pushMembers(of: 1)
                let members = stack.top
                for i in 0 ..< mapped {
                    stack.rawGet(results, i + 1)
                    stack.setAdd(1, members: members, value: stack.top)
                    stack.pop()
                }
            }
        }
    }
}

extension LuaStack {
    /// Finishes an in-place compaction of the list at `list`: elements `from ... count` move down
    /// to follow the `written` kept ones, and the positions after them are cleared.
    func closeGap(_ list: Int32, written: Int64, from: Int64, count: Int64) {
        var target = written
        var source = from
        while source <= count {
            target += 1
            if target != source {
                rawGet(list, source)
                rawSet(list, target)
            }
            source += 1
        }
        var clear = target + 1
        while clear <= count {
            pushNil()
            rawSet(list, clear)
            clear += 1
        }
    }
}
