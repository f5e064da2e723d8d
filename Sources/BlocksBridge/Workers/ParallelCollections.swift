import CLua
import CLuaShim

/// `bk.apply(c, f)` and `bk.parallelMap(c, f)`: the collection split into one contiguous slice per
/// pool state, each slice walked there by the collections' C driver, results copied back in order.
/// Runs in the caller (as `each` / `map`) when the block would lose state in a copy, when `c` is
/// not an array or dictionary, or below `cutOver` elements.
enum ParallelCollections {
    /// Fewer elements than this run in the caller: copying in and out costs about what a trivial
    /// block does, so small inputs would only pay the hand-over (measured in bkbench: Workers).
    static let cutOver: Int64 = 64

    static func run(_ stack: LuaStack, mapping: Bool) throws(LuaRaise) -> Int32 {
        let kind = try stack.checkCollectionContents(1)
        try stack.checkFunction(2)
        guard kind == .array || kind == .dictionary, stack.state.workerPool.count > 0,
              stack.transferProblem(at: 2, what: "the block", strict: true) == nil else {
            return mapping ? try CollectionHelpers.map(stack) : try CollectionHelpers.each(stack)
        }
        stack.top = 2
        let keys: Int32 = kind == .dictionary ? LuaCollection(stack, 1, kind: kind).pushKeys() : 0
        let count = keys != 0 ? stack.rawLength(keys) : stack.listCount(1)
        if count < cutOver {
            stack.top = 2
            return mapping ? try CollectionHelpers.map(stack) : try CollectionHelpers.each(stack)
        }
        let pool = stack.state.workerPool
        let parts = Int(min(Int64(pool.count), count))
        let states: [LuaState]
        do throws(LuaError) {
            states = try pool.take(parts, settings: WorkerSettings(stack))
        } catch {
            throw .message(error.message)
        }
        defer { pool.giveBack(states) }
        // Hand each state its block and slice.
        var bounds: [(first: Int64, count: Int64)] = []
        for part in 0 ..< Int64(parts) {
            let first = count * part / Int64(parts) + 1
            let next = count * (part + 1) / Int64(parts) + 1
            bounds.append((first, next - first))
        }
        for (part, state) in states.enumerated() {
            let base = stack.top
            try pushSlice(stack, keys: keys, first: bounds[part].first, count: bounds[part].count)
            let copied: Bool = state.lock.withLock {
                let target = state.stack
                return stack.copy(2, count: 1, to: target, what: "the block")
                    && stack.copy(base + 1, count: stack.top - base, to: target, what: "the elements")
            }
            stack.top = base
            if !copied {
                let message = state.lock.withLock { state.stack.toString(-1) } ?? "cannot be copied"
                throw .message(message)
            }
        }
        let dictionary = keys != 0
        WorkerPool.runEach(states) { worker, _ in
            walk(worker, dictionary: dictionary, mapping: mapping)
        }
        // The first failed slice holds the first error in element order.
        for state in states {
            let failed: Bool = state.lock.withLock {
                let worker = state.stack
                if worker.rawGet(LuaStack.registryIndex, field: failedKey) == .boolean {
                    worker.pop()
                    _ = worker.copy(-1, count: 1, to: stack, what: "the block's error")
                    return true
                }
                worker.pop()
                return false
            }
            if failed {
                for state in states { state.lock.withLock { state.stack.pushNil(); state.stack.rawSet(LuaStack.registryIndex, field: failedKey) } }
                throw .valueOnTop
            }
        }
        guard mapping else { return 0 }
        let result = CollectionBuilder(stack, kind: kind, arrayCount: Int32(clamping: count))
        for (part, state) in states.enumerated() {
            let copied: Bool = state.lock.withLock { state.stack.copy(-1, count: 1, to: stack, what: "a result") }
            if !copied { throw .valueOnTop }
            let slice = stack.top
            if dictionary {
                stack.pushNil()
                while stack.next(slice) {
                    stack.pushCopy(of: -2)
                    stack.insert(at: -2)
                    stack.rawSet(result.table)
                }
            } else {
                let first = bounds[part].first
                var i: Int64 = 0
                while i < bounds[part].count {
                    stack.rawGet(slice, i + 1)
                    stack.rawSet(result.table, first + i)
                    i += 1
                    if i & 4095 == 0 { try stack.checkMemoryBudget() }
                }
            }
            stack.pop()
        }
        result.finish()
        return 1
    }

    /// Pushes the slice: arrays a list of elements; dictionaries a list of keys and a dictionary.
    private static func pushSlice(_ stack: LuaStack, keys: Int32, first: Int64, count: Int64) throws(LuaRaise) {
        if keys == 0 {
            stack.pushNewTable(arrayCount: Int32(clamping: count))
            let slice = stack.top
            var i: Int64 = 0
            while i < count {
                stack.rawGet(1, first + i)
                stack.rawSet(slice, i + 1)
                i += 1
                if i & 4095 == 0 { try stack.checkMemoryBudget() }
            }
            return
        }
        stack.pushNewTable(arrayCount: Int32(clamping: count))
        let sliceKeys = stack.top
        stack.pushNewTable(recordCount: Int32(clamping: count))
        let values = stack.top
        var i: Int64 = 0
        while i < count {
            stack.rawGet(keys, first + i)
            stack.pushCopy(of: -1)
            stack.rawSet(sliceKeys, i + 1)
            stack.pushCopy(of: -1)
            stack.rawGet(1)
            stack.rawSet(values)
            i += 1
            if i & 4095 == 0 { try stack.checkMemoryBudget() }
        }
    }

    static let failedKey = "bk.parallel.failed"

    /// In a pool state: the stack is block, slice (arrays) or block, keys, values (dictionaries).
    /// Leaves the result (or the error, with the failed mark in the registry) on top.
    private static func walk(_ worker: LuaStack, dictionary: Bool, mapping: Bool) {
        let table: Int32 = dictionary ? 3 : 2
        let count = worker.rawLength(dictionary ? 2 : 2)
        worker.pushNewTable(arrayCount: Int32(clamping: count))
        let result = worker.top
        worker.pushNull()
        let null = worker.top
        let handler = worker.pushMessageHandler()
        var walk = bk_walk(table: table, keys: dictionary ? 2 : 0, block: 1, prefix: 0,
                           action: mapping ? BK_WALK_MAP : BK_WALK_DISCARD, result: result, null: null,
                           count: count, appended: 0)
        let status = bk_walk_run(worker.L, &walk, handler)
        if status == LUA_OK {
            worker.pushCopy(of: result)
            return
        }
        if status == BK_WALK_NO_STACK { worker.push("stack overflow") }
        worker.push(true)
        worker.rawSet(LuaStack.registryIndex, field: failedKey)
    }
}
