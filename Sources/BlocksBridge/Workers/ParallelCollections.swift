import CLua
import CLuaShim

/// `bk.apply(c, f)` and `bk.parallelMap(c, f)` on arrays and dictionaries.
///
/// The first elements run in the caller, timed (element 1, then up to 32 unless the first was
/// heavy): when the block is cheap (copying an element in and its result out would cost about as
/// much as the call) or the remaining work is small, the rest runs in the caller too, by the
/// collections' C walk, so small or trivial inputs cost what `map` costs. Otherwise the remaining elements are split into one contiguous slice per pool
/// state, each walked there by the same C walk, and the results are copied back in order.
/// The block runs in the caller throughout when it would lose state in a copy (it captures a
/// table of its own, or anything not transferable) and for sets and index sets.
enum ParallelCollections {
    /// Blocks cheaper than this per element stay in the caller (copies cost about this much).
    static let minimumElementNanoseconds: UInt64 = 2_000
    /// Below this much estimated work the pool's hand-over (tens of microseconds) is not worth it.
    static let minimumWorkNanoseconds: UInt64 = 250_000
    /// A first element this slow is enough of a probe: the rest goes to the pool at once.
    static let heavyElementNanoseconds: UInt64 = 20_000

    static func run(_ stack: LuaStack, mapping: Bool) throws(LuaRaise) -> Int32 {
        let kind = try stack.checkCollectionContents(1)
        try stack.checkFunction(2)
        guard kind == .array || kind == .dictionary else {
            return mapping ? try CollectionHelpers.map(stack) : try CollectionHelpers.each(stack)
        }
        stack.top = 2
        let dictionary = kind == .dictionary
        let keys: Int32 = dictionary ? LuaCollection(stack, 1, kind: kind).pushKeys() : 0
        // The walk stops at a list's first nil, so the border bounds it; the pool needs the true
        // count (`listCount`, one read per element), taken only once the work is known to be heavy.
        let count = stack.rawLength(keys != 0 ? keys : 1)
        let result = mapping ? CollectionBuilder(stack, kind: kind, arrayCount: Int32(clamping: count)).table : 0
        stack.pushNull()
        let null = stack.top
        let handler = stack.pushMessageHandler()
        var walk = bk_walk(table: 1, keys: keys, block: 2, prefix: 0,
                           action: mapping ? BK_WALK_MAP : BK_WALK_DISCARD, result: result, null: null,
                           count: 0, appended: 0, first: 1, returns: 0, base: 0, position: 0)
        // The probe: element 1, then (unless it was clearly heavy) up to element 32, timed.
        var probed: Int64 = 0
        var elementTime: UInt64 = 0
        for end in [min(count, 1), min(count, 32)] where end > probed {
            walk.first = probed + 1
            walk.count = end
            let start = MonotonicClock.now()
            try drive(stack, &walk, handler)
            elementTime = (MonotonicClock.now() &- start) / UInt64(end - probed)
            probed = end
            if elementTime >= heavyElementNanoseconds { break }
        }
        var remaining = count - probed
        walk.first = probed + 1
        walk.count = count
        if remaining > 0, elementTime >= minimumElementNanoseconds,
           elementTime &* UInt64(clamping: remaining) >= minimumWorkNanoseconds,
           stack.transferProblem(at: 2, what: "the block", strict: true) == nil {
            let listed = dictionary ? count : stack.listCount(1)
            remaining = listed - probed
            if remaining > 0 {
                try runOnPool(stack, dictionary: dictionary, mapping: mapping, keys: keys, first: probed + 1,
                              count: listed, result: result)
            }
        } else if remaining > 0 {
            try drive(stack, &walk, handler)
        }
        stack.top = result
        return mapping ? 1 : 0
    }

    private static func drive(_ stack: LuaStack, _ walk: inout bk_walk, _ handler: Int32) throws(LuaRaise) {
        switch bk_walk_run(stack.L, &walk, handler) {
        case LUA_OK: break
        case BK_WALK_NO_STACK: throw .message("stack overflow")
        default: throw .valueOnTop
        }
    }

    /// Elements first ... count over the pool; results into `result` (0: none kept).
    private static func runOnPool(_ stack: LuaStack, dictionary: Bool, mapping: Bool, keys: Int32,
                                  first: Int64, count: Int64, result: Int32) throws(LuaRaise) {
        let pool = stack.state.workerPool
        let remaining = count - first + 1
        let parts = Int(min(Int64(pool.count), remaining))
        let states: [LuaState]
        do throws(LuaError) {
            states = try pool.take(parts, settings: WorkerSettings(stack))
        } catch {
            throw .message(error.message)
        }
        defer { pool.giveBack(states) }
        var bounds: [(first: Int64, count: Int64)] = []
        for part in 0 ..< Int64(parts) {
            let start = first + remaining * part / Int64(parts)
            let next = first + remaining * (part + 1) / Int64(parts)
            bounds.append((start, next - start))
        }
        // Each state gets the block, then its slice: a list of elements, or a list of keys and a
        // dictionary of them.
        for (part, state) in states.enumerated() {
            let base = stack.top
            if dictionary { try pushSlice(stack, keys: keys, first: bounds[part].first, count: bounds[part].count) }
            let copied: Bool = state.lock.withLock {
                let target = state.stack
                guard stack.copy(2, count: 1, to: target, what: "the block") else { return false }
                if dictionary { return stack.copy(base + 1, count: 2, to: target, what: "the elements") }
                return bk_transfer_copy_range(stack.L, 1, bounds[part].first, bounds[part].count,
                                              target.L, 0, 0, "the collection") == LUA_OK
            }
            stack.top = base
            if !copied {
                let message = state.lock.withLock { state.stack.toString(-1) } ?? "cannot be copied"
                throw .message(message)
            }
        }
        WorkerPool.runEach(states) { worker, _ in
            walk(worker, dictionary: dictionary, mapping: mapping)
        }
        // The first failed slice holds the first error in element order.
        for state in states {
            let failed: Bool = state.lock.withLock {
                let worker = state.stack
                guard worker.rawGet(LuaStack.registryIndex, field: failedKey) == .boolean else {
                    worker.pop()
                    return false
                }
                worker.pop()
                worker.pushNil()
                worker.rawSet(LuaStack.registryIndex, field: failedKey)
                _ = worker.copy(-1, count: 1, to: stack, what: "the block's error")
                return true
            }
            if failed { throw .valueOnTop }
        }
        guard mapping else { return }
        for (part, state) in states.enumerated() {
            if !dictionary {
                // Straight into the result, at the slice's place.
                let status = state.lock.withLock {
                    bk_transfer_copy_range(state.L, -1, 1, bounds[part].count, stack.L, result,
                                           bounds[part].first - 1, "the results")
                }
                if status != LUA_OK { throw .valueOnTop }
                continue
            }
            let copied: Bool = state.lock.withLock { state.stack.copy(-1, count: 1, to: stack, what: "the results") }
            if !copied { throw .valueOnTop }
            let slice = stack.top
            var step = 0
            stack.pushNil()
            while stack.next(slice) {
                stack.pushCopy(of: -2)
                stack.insert(at: -2)
                stack.rawSet(result)
                step += 1
                if step & 4095 == 0 { try stack.checkMemoryBudget() }
            }
            stack.pop()
        }
    }

    /// Pushes a dictionary's slice: a list of its keys and a dictionary of them.
    private static func pushSlice(_ stack: LuaStack, keys: Int32, first: Int64, count: Int64) throws(LuaRaise) {
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

    /// Registry mark of a pool state whose walk failed (its error is on top of its stack).
    static let failedKey = "bk.parallel.failed"

    /// In a pool state: the stack is block, slice (arrays) or block, keys, values (dictionaries).
    /// Leaves the result (or the error, with the failed mark in the registry) on top.
    private static func walk(_ worker: LuaStack, dictionary: Bool, mapping: Bool) {
        let count = worker.rawLength(2)
        worker.pushNewTable(arrayCount: Int32(clamping: count))
        let result = worker.top
        worker.pushNull()
        let null = worker.top
        let handler = worker.pushMessageHandler()
        var walk = bk_walk(table: dictionary ? 3 : 2, keys: dictionary ? 2 : 0, block: 1, prefix: 0,
                           action: mapping ? BK_WALK_MAP : BK_WALK_DISCARD, result: result, null: null,
                           count: count, appended: 0, first: 1, returns: 0, base: 0, position: 0)
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
