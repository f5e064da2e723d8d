import CLua
import CLuaShim

/// `bk.apply(c, f)` and `bk.parallelMap(c, f)` on arrays and dictionaries.
///
/// The first elements run in the caller, timed (element 1, then up to 32 unless the first was
/// heavy): when the block is cheap (copying an element in and its result out would cost about as
/// much as the call) or the remaining work is small, the rest runs in the caller too, by the
/// collections' C walk, so small or trivial inputs cost what `map` costs. Otherwise the remaining
/// elements are cut into chunks handed to the pool states as they finish (`runOnPool`), each walked
/// there by the same C walk, and the results are copied back to their places.
/// The block runs in the caller throughout when it would lose state in a copy (it captures a
/// table that is not frozen, or anything not transferable) and for sets and index sets; when the
/// work was heavy enough for the pool, stderr says why, once per call site.
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
        let heavy = remaining > 0 && elementTime >= minimumElementNanoseconds
            && elementTime &* UInt64(clamping: remaining) >= minimumWorkNanoseconds
        var problem = heavy ? stack.transferProblem(at: 2, what: "the block", strict: true) : nil
        if heavy, problem == nil, !mapping {
            problem = elementProblem(stack, keys: keys, count: count)
        }
        if let problem { tellOnce(stack, mapping: mapping, why: problem) }
        if heavy, problem == nil {
            let listed = dictionary ? count : stack.listCount(1)
            remaining = listed - probed
            if remaining > 0 {
                try runOnPool(stack, dictionary: dictionary, mapping: mapping, keys: keys, first: probed + 1,
                              count: listed, result: result, elementTime: elementTime)
            }
        } else if remaining > 0 {
            try drive(stack, &walk, handler)
        }
        stack.top = result
        return mapping ? 1 : 0
    }

    /// Why `apply`'s elements (dictionary: keys and values) cannot go to the pool, or nil. `apply`
    /// works by its block's effects, and on the pool the block gets copies: a change to an element
    /// table, or an element function that assigns to its upvalues, would be made to a copy and lost;
    /// an element that cannot cross at all (a coroutine, a file) would end the call half-way. Such an
    /// element (a table that is not frozen, a function the block's rule refuses, a value that cannot
    /// be copied) keeps the work in the caller. One raw read per element, in place, up to the first
    /// nil of a list (where the walk stops too); only once the work is known to be heavy.
    private static func elementProblem(_ stack: LuaStack, keys: Int32, count: Int64) -> String? {
        let top = stack.top
        defer { stack.top = top }
        var lastFunction: UnsafeRawPointer?  // the function checked last (elements often share one)
        /// The problem of the value at `index`; `what` names it, made only for a message.
        func problem(at index: Int32, _ what: () -> String) -> String? {
            switch stack.type(at: index) {
            case .table where !stack.isFrozenView(index):
                return "\(what()) is a table: a change to it would be made to a copy (bk.freeze it to share a read-only one)"
            case .function:
                let function = stack.toPointer(index)
                if function == lastFunction { return nil }
                lastFunction = function
                return stack.transferProblem(at: index, what: what(), strict: true)
            case .userdata, .thread, .lightUserdata:
                return stack.transferProblem(at: index, what: what())
            default:
                return nil
            }
        }
        var i: Int64 = 1
        while i <= count {
            if keys != 0 {
                _ = stack.rawGet(keys, i)
                if let found = problem(at: -1, { "a key of the dictionary" }) { return found }
                _ = stack.rawGet(1)
                if let found = problem(at: -1, { "a value of the dictionary" }) { return found }
            } else {
                if stack.rawGet(1, i) == .nil { return nil }  // the walk ends here too
                if let found = problem(at: -1, { "element [\(i)]" }) { return found }
            }
            stack.top = top
            i += 1
        }
        return nil
    }

    /// Tells the user on stderr, once per call site, why heavy work stayed in the caller.
    private static func tellOnce(_ stack: LuaStack, mapping: Bool, why problem: String) {
        let site = stack.callSite() ?? "?"
        let name = mapping ? "parallelMap" : "apply"
        guard stack.state.extensionObject(SerialCallSites.self, make: { SerialCallSites() }).sites.insert(name + "@" + site).inserted
        else { return }
        StandardStreams.writeError("bk: \(site): \(name) ran its block in the calling state, in order: \(problem)\n")
    }

    private static func drive(_ stack: LuaStack, _ walk: inout bk_walk, _ handler: Int32) throws(LuaRaise) {
        switch stack.runWalk(&walk, handler: handler) {
        case LUA_OK: break
        case BK_WALK_NO_STACK: throw .message("stack overflow")
        default: throw .valueOnTop
        }
    }

    /// The pool's share of the work is cut into chunks of about this much estimated work at least.
    static let minimumChunkNanoseconds: UInt64 = 100_000
    /// Chunks per pool state at most: enough that a state slowed down (another process on its
    /// core) leaves little for the others to wait for at the end, few enough that hand-overs
    /// (tens of microseconds each) stay negligible.
    static let chunksPerState = 8

    /// Chunk bounds over first ... first + remaining - 1, each about the same size.
    static func chunks(first: Int64, remaining: Int64, states: Int, elementTime: UInt64) -> [(first: Int64, count: Int64)] {
        let perChunk = max(1, Int64(minimumChunkNanoseconds / max(elementTime, 1)))
        let byWork = max(Int64(states), remaining / perChunk)
        let count = min(remaining, Int64(states * chunksPerState), byWork)
        return (0 ..< count).map { chunk in
            let start = first + remaining * chunk / count
            return (start, first + remaining * (chunk + 1) / count - start)
        }
    }

    /// Elements first ... count over the pool; results into `result` (0: none kept).
    ///
    /// The caller hands out chunks in order: each pool state gets the block once, then one chunk
    /// at a time (copied in by the caller, which holds both states), and the next as soon as it
    /// is done, so a state slowed down by another process does less, not the others waiting for
    /// it. Results are copied back to the chunk's place. After a block error no new chunk starts;
    /// the chunks before it all started, so the first error in element order is among those done.
    /// A stop asked of the caller (an interrupt, its time limit) is passed on to the running chunks.
    private static func runOnPool(_ stack: LuaStack, dictionary: Bool, mapping: Bool, keys: Int32,
                                  first: Int64, count: Int64, result: Int32, elementTime: UInt64) throws(LuaRaise) {
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
        let session = stack.state.profileSession  // the pool states join a run sampling the caller
        let debugger = stack.state.debuggerForWorkers  // and the caller's debugger
        for state in states {
            let copied: Bool = state.lock.withLock {
                state.stack.top = 0
                return stack.copy(2, count: 1, to: state.stack, what: "the block")
            }
            if !copied {
                let message = state.lock.withLock { state.stack.toString(-1) } ?? "cannot be copied"
                throw .message(message)
            }
        }
        let bounds = chunks(first: first, remaining: remaining, states: states.count, elementTime: elementTime)
        let board = ChunkBoard()
        var assigned = [Int](repeating: -1, count: states.count)
        var nextChunk = 0
        var running = 0
        var failedChunk: (chunk: Int, state: Int)?
        var copyError: LuaRaise?

        // Copies chunk `nextChunk` into state `index` and starts it.
        func start(_ index: Int) -> Bool {
            let state = states[index]
            let (chunkFirst, chunkCount) = bounds[nextChunk]
            let base = stack.top
            if dictionary {
                do throws(LuaRaise) {
                    try pushSlice(stack, keys: keys, first: chunkFirst, count: chunkCount)
                } catch {
                    copyError = error
                    return false
                }
            }
            let copied: Bool = state.lock.withLock {
                state.stack.top = 1
                if dictionary { return stack.copy(base + 1, count: 2, to: state.stack, what: "the elements") }
                return stack.copyRange(of: 1, first: chunkFirst, count: chunkCount, to: state.stack, what: "the collection")
            }
            stack.top = base
            if !copied {
                copyError = .message(state.lock.withLock { state.stack.toString(-1) } ?? "cannot be copied")
                return false
            }
            assigned[index] = nextChunk
            nextChunk += 1
            running += 1
            let handed = HandedOver(value: state)
            WorkerPool.queue.async {
                let state = handed.value
                state.lock.withLock {
                    let profiled = session?.attach(state.stack, label: "worker pool")
                    defer { profiled?.detach(on: state.stack) }
                    let debugged = debugger?.attachWorker(state.stack, label: "worker pool", pooled: true)
                    defer { debugged?.detach(on: state.stack) }
                    state.resetLimits()
                    walk(state.stack, dictionary: dictionary, mapping: mapping)
                }
                board.finished(index)
            }
            return true
        }

        for index in states.indices where nextChunk < bounds.count {
            if !start(index) { break }
        }
        var stopReason: String?
        while running > 0 {
            guard let index = board.next(waitingAtMost: 20_000_000) else {
                // Still running: pass a stop asked of the caller on to the pool states, once.
                if stopReason == nil, let reason = stack.stopReason {
                    stopReason = reason
                    for (i, state) in states.enumerated() where assigned[i] >= 0 {
                        state.stack.interruptInstallingHook()
                    }
                }
                continue
            }
            running -= 1
            let chunk = assigned[index]
            let state = states[index]
            let failed: Bool = state.lock.withLock {
                let failed = state.stack.rawGet(LuaStack.registryIndex, field: failedKey) == .boolean
                state.stack.pop()
                return failed
            }
            if failed {
                if failedChunk.map({ chunk < $0.chunk }) ?? true { failedChunk = (chunk, index) }
                continue
            }
            if mapping && copyError == nil {
                do throws(LuaRaise) {
                    try copyResults(from: state, into: stack, result: result, dictionary: dictionary,
                                    chunkFirst: bounds[chunk].first, chunkCount: bounds[chunk].count)
                } catch {
                    copyError = error
                }
            }
            if failedChunk == nil, copyError == nil, stopReason == nil, nextChunk < bounds.count {
                _ = start(index)
            }
        }
        if let failedChunk {
            // Its error is on top of its stack; the failed marks are cleared for the next call.
            for state in states {
                state.lock.withLock {
                    state.stack.pushNil()
                    state.stack.rawSet(LuaStack.registryIndex, field: failedKey)
                }
            }
            // The caller's own reason first (the chunks stopped because of it); its hook raises it
            // again at the caller's next instruction, so a pcall cannot go on.
            if let stopReason {
                stack.checkLimitsSoon()
                throw .message(stopReason)
            }
            let state = states[failedChunk.state]
            _ = state.lock.withLock { state.stack.copy(-1, count: 1, to: stack, what: "the block's error") }
            throw .valueOnTop
        }
        if let copyError { throw copyError }
    }

    /// Copies a finished chunk's results (on top of the pool state's stack) into `result`.
    private static func copyResults(from state: LuaState, into stack: LuaStack, result: Int32, dictionary: Bool,
                                    chunkFirst: Int64, chunkCount: Int64) throws(LuaRaise) {
        if !dictionary {
            // Straight into the result, at the chunk's place.
            let copied = state.lock.withLock {
                state.stack.copyRange(of: -1, first: 1, count: chunkCount, to: stack, into: result,
                                      offset: chunkFirst - 1, what: "the results")
            }
            if !copied { throw .valueOnTop }
            return
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
        let handler = worker.pushUncaughtMessageHandler()
        var walk = bk_walk(table: dictionary ? 3 : 2, keys: dictionary ? 2 : 0, block: 1, prefix: 0,
                           action: mapping ? BK_WALK_MAP : BK_WALK_DISCARD, result: result, null: null,
                           count: count, appended: 0, first: 1, returns: 0, base: 0, position: 0)
        let status = worker.runWalk(&walk, handler: handler)
        if status == LUA_OK {
            worker.pushCopy(of: result)
            return
        }
        if status == BK_WALK_NO_STACK { worker.push("stack overflow") }
        worker.push(true)
        worker.rawSet(LuaStack.registryIndex, field: failedKey)
    }
}

/// The call sites already told why their heavy work stayed in the caller (`tellOnce`).
private final class SerialCallSites: LuaStateExtension {
    var sites: Set<String> = []
    func stateWillClose() {}
}

/// The chunks pool states have finished, for the caller handing them out.
private final class ChunkBoard: @unchecked Sendable {
    /// Guards `done`.
    private let condition = ConditionLock()
    private var done: [Int] = []

    /// A pool state (its index) finished its chunk.
    func finished(_ index: Int) {
        condition.withLock {
            done.append(index)
            condition.broadcast()
        }
    }

    /// The next state that finished, waiting at most `nanoseconds`; nil when none did by then.
    func next(waitingAtMost nanoseconds: UInt64) -> Int? {
        let deadline = MonotonicClock.now() &+ nanoseconds
        condition.lock()
        defer { condition.unlock() }
        while done.isEmpty {
            if MonotonicClock.now() >= deadline { return nil }
            condition.wait(until: deadline)
        }
        return done.removeFirst()
    }
}
