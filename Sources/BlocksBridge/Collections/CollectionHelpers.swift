import CLuaShim

/// The non-mutating collection helpers exported to Lua: `bk.each(c, f)` and friends.
///
/// Each checks its arguments, pushes one message handler, then runs the shared algorithm from
/// `CollectionAlgorithms` over a `LuaCollection` walk, calling the block per element with
/// `callBlock` (a block error stops the helper and reaches the caller unchanged).
/// The hot simple helpers (each, map, reduce / reduceInteger / reduceFloat, select / reject without
/// set membership, and the searches match / any / all / none) take the C fast path (`LuaBlock.drive`, run by the trampoline after the Swift frame returned; its blocks may
/// yield): measured, a protected call per element from Swift, or a Swift step per element called
/// from the C driver, both cost ~1.5-2x a hand-written Lua loop. Over lists, select, reject and
/// reduce continue into a Lua walk instead (`ListWalks`): a Lua->Lua call per element costs less
/// than the C walk's C->Lua one, and they were the ones slower than Penlight (each and map, already
/// faster, keep the C walk and its frame checks, which Tests/lua/hardening/walk_frames.lua asserts).
enum CollectionHelpers {
    static func each(_ stack: LuaStack) throws(LuaRaise) -> Int32 {
        let kind = try stack.checkCollectionContents(1)
        let block = try LuaBlock(stack, argument: 2)
        return block.drive(LuaCollection(stack, 1, kind: kind), BK_WALK_DISCARD)
    }

    static func match(_ stack: LuaStack) throws(LuaRaise) -> Int32 {
        let kind = try stack.checkCollectionContents(1)
        let block = try LuaBlock(stack, argument: 2)
        stack.pushNil()
        let result = stack.top
        return block.drive(LuaCollection(stack, 1, kind: kind), BK_WALK_FIND, result: result, returning: result)
    }

    static func filter(_ stack: LuaStack, keeping: Bool) throws(LuaRaise) -> Int32 {
        let kind = try stack.checkCollectionContents(1)
        let block = try LuaBlock(stack, argument: 2)
        var result = CollectionBuilder(stack, kind: kind)
        if kind == .array || kind == .dictionary {  // no membership to keep: a Lua or C walk
            let collection = LuaCollection(stack, 1, kind: kind)
            if let status = block.continueWithListWalk(keeping ? "select" : "reject", over: collection,
                                                       slots: result.table) { return status }
            return block.drive(collection, keeping ? BK_WALK_KEEP : BK_WALK_DROP,
                               result: result.table, returning: result.table)
        }
        try CollectionAlgorithms.filter(LuaCollection(stack, 1, kind: kind), keeping: keeping, block.test) {
            result.keep($0)
        }
        result.finish()
        return 1
    }

    static func map(_ stack: LuaStack) throws(LuaRaise) -> Int32 {
        let kind = try stack.checkCollectionContents(1)
        let block = try LuaBlock(stack, argument: 2)
        let count = kind.isList ? stack.rawLength(1) : 0
        let result = CollectionBuilder(stack, kind: kind.isList ? .array : .dictionary,
                                       arrayCount: Int32(clamping: count))
        stack.pushNull()
        return block.drive(LuaCollection(stack, 1, kind: kind), BK_WALK_MAP, result: result.table, null: stack.top,
                           returning: result.table)
    }

    static func reduce(_ stack: LuaStack) throws(LuaRaise) -> Int32 {
        let kind = try stack.checkCollectionContents(1)
        try stack.checkAny(2)
        let block = try LuaBlock(stack, argument: 3)
        stack.pushCopy(of: 2)
        let accumulator = stack.top
        let collection = LuaCollection(stack, 1, kind: kind)
        if let status = block.continueWithListWalk("reduce", over: collection, slots: accumulator) { return status }
        return block.drive(collection, BK_WALK_FOLD, prefix: accumulator, returning: accumulator)
    }

    /// reduceInteger / reduceFloat: the accumulator is a number; each step's result must be a
    /// number (numeric strings convert, as in Lua arithmetic) and, for integers, integral.
    static func reduceNumber(_ stack: LuaStack, integer: Bool) throws(LuaRaise) -> Int32 {
        let kind = try stack.checkCollectionContents(1)
        let initialInteger = integer ? try stack.checkInteger(2) : 0
        let initialFloat = integer ? 0 : try stack.checkNumber(2)
        let block = try LuaBlock(stack, argument: 3)
        if integer { stack.push(initialInteger) } else { stack.push(initialFloat) }
        let accumulator = stack.top
        return block.drive(LuaCollection(stack, 1, kind: kind), integer ? BK_WALK_FOLD_INTEGER : BK_WALK_FOLD_FLOAT,
                           prefix: accumulator, returning: accumulator)
    }

    /// any / all / none: a search that stops at the first answer that decides it (the C walk).
    static func any(_ stack: LuaStack) throws(LuaRaise) -> Int32 {
        try search(stack, BK_WALK_STOP_IF_TRUE, startingWith: false)
    }

    static func all(_ stack: LuaStack) throws(LuaRaise) -> Int32 {
        try search(stack, BK_WALK_STOP_IF_FALSE, startingWith: true)
    }

    static func none(_ stack: LuaStack) throws(LuaRaise) -> Int32 {
        try search(stack, BK_WALK_STOP_IF_TRUE, startingWith: true)
    }

    /// Returns `answer`, or its negation once a block's answer stops the walk (`action`).
    private static func search(_ stack: LuaStack, _ action: Int32, startingWith answer: Bool) throws(LuaRaise) -> Int32 {
        let kind = try stack.checkCollectionContents(1)
        let block = try LuaBlock(stack, argument: 2)
        stack.push(answer)
        let result = stack.top
        return block.drive(LuaCollection(stack, 1, kind: kind), action, result: result, returning: result)
    }

    /// corresponds(c, other, f): same count, and `f(c[i], other[i])` for every element. List kinds
    /// pair by position; a dictionary pairs each of its keys with `other[key]` (raw).
    static func corresponds(_ stack: LuaStack) throws(LuaRaise) -> Int32 {
        let kind = try stack.checkCollectionContents(1)
        let otherKind = try stack.checkCollectionContents(2)
        let block = try LuaBlock(stack, argument: 3)
        if stack.collectionCount(1, kind: kind) != stack.collectionCount(2, kind: otherKind) {
            stack.push(false)
            return 1
        }
        let answer = try CollectionAlgorithms.corresponds(LuaCollection(stack, 1, kind: kind)) {
            (entry, position) throws(LuaRaise) -> Bool in
            if entry.key != 0 {
                stack.pushCopy(of: entry.key)
                stack.rawGet(2)
            } else {
                stack.rawGet(2, Int64(position))
            }
            return try block.test(entry.value, stack.top)
        }
        stack.push(answer)
        return 1
    }
}

extension LuaStack {
    /// Replaces a nil on top with `bk.null` (map results keep positions and counts).
    @inline(__always)
    func replaceNilWithNull() {
        if type(at: -1) == .nil {
            pop()
            pushNull()
        }
    }
}
