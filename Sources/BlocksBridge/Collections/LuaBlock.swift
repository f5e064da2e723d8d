import CLua
import CLuaShim

/// A block argument of a collection helper: the function's stack slot and the one message handler
/// pushed for the whole helper call. Each call is protected (`callBlock`): an error stops the helper
/// and reaches its caller unchanged (its traceback is recorded for error reports).
///
/// each / map / reduce / match / any / all / none, and select / reject on arrays and dictionaries,
/// take the fast path instead:
/// `drive` has the trampoline run the whole walk in C after the helper's Swift frame returned.
struct LuaBlock {
    let stack: LuaStack
    let function: Int32
    let handler: Int32

    /// Checks argument `index` is a function and pushes the message handler (once per helper call).
    init(_ stack: LuaStack, argument index: Int32) throws(LuaRaise) {
        try stack.checkFunction(index)
        self.stack = stack
        self.function = index
        self.handler = stack.pushMessageHandler()
    }

    /// Pushes the block and the entry's arguments: `(value)`, or `(key, value)` for dictionaries,
    /// after `prefix` (a stack slot, e.g. reduce's accumulator) when given. Returns the argument count.
    ///
    /// An entry walked with the block as `callee` is already laid out as block, value: it is used
    /// in place (the call consumes it), with `prefix` rotated in between.
    @inline(__always)
    func pushCall(_ entry: LuaEntry, prefix: Int32 = 0) -> Int32 {
        if entry.callee != 0 {
            if prefix == 0 { return 1 }
            if entry.prefix == prefix { return 2 }
            stack.pushCopy(of: prefix)
            stack.insert(at: entry.value)
            return 2
        }
        stack.pushCopy(of: function)
        var count: Int32 = 1
        if prefix != 0 { stack.pushCopy(of: prefix); count += 1 }
        if entry.key != 0 { stack.pushCopy(of: entry.key); count += 1 }
        stack.pushCopy(of: entry.value)
        return count
    }

    /// Calls the block on the entry and returns whether its answer is truthy. The answer stays on
    /// the stack: the walk restores the top after each visit.
    @inline(__always)
    func test(_ entry: LuaEntry) throws(LuaRaise) -> Bool {
        let count = pushCall(entry)
        try stack.callBlock(arguments: count, results: 1, handler: handler)
        return stack.toBool(-1)
    }

    /// Calls the block on the entry and leaves its one result on top.
    @inline(__always)
    func transform(_ entry: LuaEntry, prefix: Int32 = 0) throws(LuaRaise) {
        let count = pushCall(entry, prefix: prefix)
        try stack.callBlock(arguments: count, results: 1, handler: handler)
    }

    /// Lays out a walk calling the block on every element of `collection` and returns the status
    /// that has the trampoline run it in C once this Swift frame is gone (`BK_CONTINUE_WALK`):
    /// blocks may then raise (the error reaches the helper's caller unchanged) and yield (a block
    /// that suspends its task). `action` (`BK_WALK_*`) says what each answer does: `prefix` is the
    /// accumulator (FOLD), `result` the result table (MAP, KEEP, DROP) or the answer's slot (FIND,
    /// STOP_IF_*), `null` a slot holding `bk.null` (MAP),
    /// `appended` the count of a list result (MAP, KEEP, DROP). The helper then returns the value
    /// at `returning` (0: nothing).
    func drive(_ collection: LuaCollection, _ action: Int32, prefix: Int32 = 0, result: Int32 = 0,
               null: Int32 = 0, appended: Int64 = 0, returning: Int32 = 0) -> Int32 {
        let keys = collection.kind.isList ? 0 : collection.pushKeys()
        let walk = bk_walk(table: collection.table, keys: keys, block: function, prefix: prefix, action: action,
                           result: result, null: null,
                           count: stack.rawLength(keys != 0 ? keys : collection.table), appended: appended,
                           first: 1, returns: returning, base: 0, position: 0)
        return stack.continueWithWalk(walk)
    }

    /// Calls the block with the values at two stack slots and returns whether it is truthy.
    func test(_ a: Int32, _ b: Int32) throws(LuaRaise) -> Bool {
        stack.pushCopy(of: function)
        stack.pushCopy(of: a)
        stack.pushCopy(of: b)
        try stack.callBlock(arguments: 2, results: 1, handler: handler)
        let answer = stack.toBool(-1)
        stack.pop()
        return answer
    }
}
