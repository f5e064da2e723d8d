import Testing
import Foundation
import BlocksBridge

/// A host class marked shareable: the same Swift object on both sides of a copy.
final class SharedCounter: LuaShareable, LuaConvertible {
    let value = Locked(0)  // not Mutex: ThreadSanitizer does not see it
    func add(_ n: Int) -> Int { value.withLock { $0 += n; return $0 } }
    static let luaClass = LuaClass(name: "test.SharedCounter", methods: [
        BKFunction("add") { stack throws(LuaRaise) in
            let counter = try stack.checkObject(SharedCounter.self, at: 1)
            stack.push(counter.add(Int(try stack.checkInteger(2))))
            return 1
        },
    ])
}

/// Not marked shareable: refused by the copier, named.
final class PrivateThing: LuaBridged, LuaConvertible {
    static let luaClass = LuaClass(name: "test.PrivateThing")
}

/// The pool and shareable classes from Swift (plain `import`: what a host sees).
@Suite struct WorkersTests {
    @Test func hostSizesThePool() throws {
        let lua = try scriptingState()
        #expect(lua.workerCount >= 1)
        lua.workerCount = 3
        #expect(try lua.run("return bk.workerCount()", as: Int.self) == 3)
        lua.workerCount = 0
        #expect(lua.workerCount == 1)
    }

    @Test func runOnWorkerRunsInAPoolStateWithTypedResults() throws {
        let lua = try scriptingState()
        let square = try lua.run("return function(x, s) return s .. (x * x) .. (bk.isWorker() and ' in a worker' or '') end",
                                 as: LuaRef.self)
        let answer = try lua.runOnWorker(square, 7, "x=", as: String.self)
        #expect(answer == "x=49 in a worker")
    }

    @Test func runOnWorkerFromManyThreadsAtOnce() throws {
        // A state is used by many threads through its entry points, which take its lock.
        nonisolated(unsafe) let lua = try LuaState()
        let f = try lua.run("return function(n) local s = 0 for i = 1, n do s = s + i end return s end", as: LuaRef.self)
        let results = Locked<[Int]>([])  // not Mutex: ThreadSanitizer does not see it
        DispatchQueue.concurrentPerform(iterations: 8) { i in
            if let value = try? lua.runOnWorker(f, 1000 * (i + 1), as: Int.self) {
                results.withLock { $0.append(value) }
            }
        }
        let expected = (1 ... 8).map { n in (1000 * n) * (1000 * n + 1) / 2 }
        #expect(results.withLock { $0.sorted() } == expected)
    }

    @Test func runOnWorkerReportsWhatCannotCrossAndLuaErrors() throws {
        let lua = try scriptingState()
        let holdsCoroutine = try lua.run("local co = coroutine.create(print) return function() return co end", as: LuaRef.self)
        #expect(throws: LuaError.self) { try lua.runOnWorker(holdsCoroutine, as: Int.self) }
        do {
            _ = try lua.runOnWorker(holdsCoroutine, as: Int.self)
        } catch {
            #expect(error.message.contains("upvalue 'co' of the function is a coroutine"), "\(error)")
        }
        let raises = try lua.run("return function() error('boom', 0) end", as: LuaRef.self)
        do {
            _ = try lua.runOnWorker(raises, as: Int.self)
            Issue.record("no error")
        } catch {
            #expect(error.message.contains("boom"), "\(error)")
        }
    }

    @Test func shareableObjectsCrossAsTheSameObject() throws {
        let lua = try scriptingState()
        let counter = SharedCounter()
        try lua.setGlobal("counter", counter)
        let result = try lua.run("""
            local w = bk.worker(function(c) return c:add(5), c end, counter)
            local n, back = w:result()
            return n + (back == counter and 1000 or 0)
            """, as: Int.self)
        #expect(result == 1005)
        #expect(counter.value.withLock { $0 } == 5)
    }

    @Test func anInterruptOfTheCallerStopsTheBlocksRunningOnThePool() throws {
        // Each element loops for ever: only the interrupt passed on to the pool states ends it.
        let state = try LuaState(sandbox: Sandbox(timeLimit: .seconds(60)))
        state.installGlobals()
        state.interruptHandle.interrupt(after: 0.2)
        do {
            try state.run("""
                bk.setWorkerCount(2)
                local input = {}
                for i = 1, 8 do input[i] = i end
                bk.parallelMap(input, function(x) while true do end end)
                """)
            Issue.record("no error")
        } catch {
            #expect(error.message.contains("interrupted"), "\(error)")
        }
        // The pool is usable again, and the next run is not interrupted.
        let sum = try state.run("""
            local input = {}
            for i = 1, 64 do input[i] = i end
            local total = 0
            for _, v in ipairs(bk.parallelMap(input, function(x) local s = 0 for i = 1, 20000 do s = s + 1 end return x end)) do
              total = total + v
            end
            return total
            """, as: Int.self)
        #expect(sum == 64 * 65 / 2)
    }

    @Test func objectsNotMarkedShareableAreRefusedByName() throws {
        let lua = try scriptingState()
        try lua.setGlobal("thing", PrivateThing())
        let reason = try lua.run("return select(2, bk.isTransferable(thing))", as: String.self)
        #expect(reason == "the value is a test.PrivateThing (not shareable between states)")
    }
}
