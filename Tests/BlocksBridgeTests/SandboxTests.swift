import Testing
import Foundation
import CLua
@testable import BlocksBridge

/// Each limit stops a hostile script with a clear error, and the same state keeps working.
@Suite struct SandboxTests {
    /// Runs `code`, expecting an error whose message contains `expected`; returns the error.
    @discardableResult
    private func expectFailure(_ state: LuaState, _ code: String, _ expected: String,
                               sourceLocation: SourceLocation = #_sourceLocation) -> LuaError? {
        do {
            try state.run(code, name: "=hostile")
            Issue.record("no error for \(code)", sourceLocation: sourceLocation)
            return nil
        } catch {
            #expect(error.message.contains(expected), "\(error)", sourceLocation: sourceLocation)
            return error
        }
    }

    private func expectStillWorks(_ state: LuaState, sourceLocation: SourceLocation = #_sourceLocation) {
        let result = try? state.run("local s = 0 for i = 1, 100 do s = s + i end return s .. ''")
        #expect(result?.first?.string == "5050", sourceLocation: sourceLocation)
    }

    @Test func instructionLimitStopsARunawayLoop() throws {
        let state = try LuaState(sandbox: Sandbox(instructionLimit: 100_000))
        let error = expectFailure(state, "local n = 0\nwhile true do n = n + 1 end", "instruction limit exceeded")
        #expect(error?.message.hasPrefix("hostile:2:") == true, "\(String(describing: error))")
        #expect(state.instructionsUsed >= 100_000)
        // Each run gets a fresh budget: the state keeps working.
        expectStillWorks(state)
        #expect(state.instructionsUsed < 100_000)
    }

    @Test func instructionLimitCannotBeCaughtAndIgnored() throws {
        let state = try LuaState(sandbox: Sandbox(instructionLimit: 50_000))
        // The script swallows the error and loops again, in the same thread and in coroutines.
        expectFailure(state, """
            while true do pcall(function() while true do end end) end
            """, "instruction limit exceeded")
        expectFailure(state, """
            while true do
              coroutine.resume(coroutine.create(function() while true do end end))
            end
            """, "instruction limit exceeded")
        expectFailure(state, """
            local function handler() while true do end end
            while true do xpcall(function() while true do end end, handler) end
            """, "instruction limit exceeded")
        expectStillWorks(state)
        // The guarded xpcall still lets its function yield.
        let yielded = try state.run("""
            local co = coroutine.wrap(function() return xpcall(function() coroutine.yield(1) return 2 end, print) end)
            local a = co()
            local ok, b = co()
            return a, ok, b
            """)
        #expect(yielded.map(\.scalar) == [.integer(1), .boolean(true), .integer(2)])
    }

    @Test func instructionLimitStopsLoopsInsideCallbacksOfSwiftFunctions() throws {
        let state = try LuaState(sandbox: Sandbox(instructionLimit: 20_000))
        let stack = state.stack
        // A helper that calls its block, as bk's collection helpers do.
        stack.push(function: "each") { stack throws(LuaRaise) in
            try stack.checkFunction(1)
            let handler = stack.pushMessageHandler()
            for _ in 0 ..< 1_000_000 {
                stack.pushCopy(of: 1)
                try stack.callBlock(arguments: 0, results: 0, handler: handler)
            }
            return 0
        }
        stack.pushGlobalTable()
        stack.insert(at: -2)
        stack.rawSet(-2, field: "each")
        stack.pop()
        expectFailure(state, "each(function() end)", "instruction limit exceeded")
        expectFailure(state, "each(function() while true do end end)", "instruction limit exceeded")
        expectStillWorks(state)
        #expect(stack.top == 0)
    }

    @Test func timeLimitStopsALongScript() throws {
        let state = try LuaState(sandbox: Sandbox(timeLimit: .milliseconds(100)))
        let started = ContinuousClock.now
        expectFailure(state, "while true do end", "time limit exceeded")
        // Stopped, and not immediately (the deadline is per run).
        #expect(ContinuousClock.now - started >= .milliseconds(100))
        expectStillWorks(state)
        // A new run starts a new deadline: a short sleep-free script well inside it succeeds twice.
        expectStillWorks(state)
    }

    @Test func memoryLimitStopsAnAllocatingScript() throws {
        let state = try LuaState(sandbox: Sandbox(memoryLimit: 4 << 20))
        let error = expectFailure(state, "local t = {} for i = 1, 1e8 do t[i] = ('x'):rep(64) .. i end",
                                  "not enough memory")
        #expect(error?.kind == .memory || error?.message == "not enough memory")
        expectFailure(state, "return ('x'):rep(1 << 30)", "not enough memory")
        expectFailure(state, "local s = 'x' while true do s = s .. s end", "not enough memory")
        try state.run("collectgarbage()")
        #expect(state.memoryInUse <= 4 << 20)
        expectStillWorks(state)
    }

    @Test func memoryLimitHoldsWhileSwiftFunctionsAllocate() throws {
        let state = try LuaState(sandbox: Sandbox(memoryLimit: 2 << 20))
        let stack = state.stack
        // A Swift function that pushes far more than the cap allows: it is never interrupted
        // (allocations in Swift frames do not fail); the error is raised once it has returned.
        stack.push(function: "bloat") { stack in
            stack.pushNewTable()
            for i in 1 ... 100_000 {
                stack.push(String(repeating: "y", count: 40) + String(i))
                stack.rawSet(-2, Int64(i))
            }
            return 1
        }
        stack.pushGlobalTable()
        stack.insert(at: -2)
        stack.rawSet(-2, field: "bloat")
        stack.pop()
        expectFailure(state, "local t = bloat() return #t", "not enough memory")
        try state.run("collectgarbage()")
        expectStillWorks(state)
    }

    @Test func hostPushesOverTheCapDoNotAbort() throws {
        // The host's own Swift code is a live frame: its allocations over-commit instead of
        // raising with no protected call around (which would abort the process).
        let state = try LuaState(sandbox: Sandbox(memoryLimit: 1 << 20))
        let stack = state.stack
        for i in 0 ..< 64 {
            stack.push(String(repeating: "z", count: 64 * 1024) + String(i))
            stack.rawSet(LuaStack.registryIndex, field: "big\(i)")
        }
        #expect(state.memoryInUse > 1 << 20)
        expectFailure(state, "local t = {} for i = 1, 1000 do t[i] = {} end", "not enough memory")
        for i in 0 ..< 64 {
            stack.pushNil()
            stack.rawSet(LuaStack.registryIndex, field: "big\(i)")
        }
        try state.run("collectgarbage()")
        expectStillWorks(state)
    }

    @Test func interruptStopsAScriptFromAnotherThread() async throws {
        // The time limit only bounds the test if the interrupt were lost; it is far longer.
        let state = try LuaState(sandbox: Sandbox(timeLimit: .seconds(20)))
        state.interruptHandle.interrupt(after: 0.05)
        expectFailure(state, "while true do end", "interrupted")
        // The next run starts with the interrupt cleared.
        expectStillWorks(state)
    }

    @Test func interruptStopsAScriptWaitingOnTheLoop() throws {
        // The script runs no Lua while it sleeps: only the loop's own check of the limits sees
        // the interrupt (within its 20 ms cap), where the sleep would otherwise last 60 s.
        let state = try LuaState(sandbox: Sandbox(timeLimit: .seconds(120)))
        state.installGlobals()
        state.interruptHandle.interrupt(after: 0.1)
        expectFailure(state, "bk.sleep(60)", "interrupted")
        expectStillWorks(state)
    }

    @Test func interruptEndsAWaitOnTheLoopInAStateWithoutLimits() throws {
        // No count hook, so no polling cap: only the wake-up the interrupt sends ends the sleep
        // before its 20 s (the bound below is the sleep's half, far above the 0.1 s expected).
        let state = try scriptingState()
        state.interruptHandle.interrupt(after: 0.1)
        let result = try state.run("""
            local start = bk.now()
            local ok, err = pcall(bk.sleep, 20)
            return bk.now() - start, tostring(err)
            """)
        let elapsed = result.first?.number ?? .infinity
        #expect(elapsed < 10, "the sleep ran \(elapsed) s")
        #expect(result.last?.string?.contains("interrupted") == true, "\(result)")
    }

    @Test func interruptAskedForBeforeARunStopsThatRun() throws {
        let state = try LuaState(sandbox: Sandbox(timeLimit: .seconds(20)))
        state.interruptHandle.interrupt()  // nothing runs yet: the next run takes it
        expectFailure(state, "while true do end", "interrupted")
        expectStillWorks(state)  // consumed: the run after is not interrupted
    }

    @Test func safeLibrariesLeaveOutDangerousFunctions() throws {
        let state = try LuaState(sandbox: Sandbox())
        let absent = try state.run("""
            return io == nil, debug == nil, dofile == nil, loadfile == nil, os.execute == nil,
                   os.exit == nil, os.getenv == nil, os.remove == nil, package.loadlib == nil,
                   package.searchpath == nil, type(os.time()) == 'number', type(os.clock()) == 'number',
                   string.format('%d', 3) == '3', math.max(1, 2) == 2, utf8.char(72) == 'H',
                   type(coroutine.wrap) == 'function', table.concat({1, 2}) == '12'
            """)
        #expect(absent.allSatisfy { $0.boolean == true }, "\(absent)")
        // require reaches the bk module and preloaded modules, not files.
        try state.run("package.preload.mine = function() return 'preloaded' end")
        #expect(try state.run("return require('mine'), require('bk') ~= nil").map(\.scalar) == [.string("preloaded"), .boolean(true)])
        expectFailure(state, "require('os').execute('true')", "attempt to call a nil value")
        expectFailure(state, "require('io')", "module 'io' not found")
        // Text chunks load; binary chunks do not, whatever mode is asked for.
        #expect(try state.run("return load('return 1 + 1')()", as: Int.self) == 2)
        expectFailure(state, "assert(load(string.dump(function() return 1 end), 'x', 'b'))", "attempt to load a binary chunk")
        expectFailure(state, "assert(load(string.dump(function() return 1 end)))", "attempt to load a binary chunk")
        #expect(try state.run("local env = {} load('x = 5', 'c', 't', env)() return env.x", as: Int.self) == 5)
        // A finalizer could not be stopped by the hook: refused.
        expectFailure(state, "setmetatable({}, {__gc = function() while true do end end})", "__gc metamethods are not allowed")
        #expect(try state.run("return getmetatable(setmetatable({}, {__index = {a = 1}})).__index.a", as: Int.self) == 1)
    }

    @Test func limitsAreIndependentOfTheSafeLibraries() throws {
        let state = try LuaState(sandbox: Sandbox(instructionLimit: 10_000, safeLibraries: false))
        #expect(try state.run("return io ~= nil and debug ~= nil", as: Bool.self) == true)
        expectFailure(state, "for i = 1, 1e9 do end", "instruction limit exceeded")
        // A host may lift the limit.
        state.instructionLimit = 0
        #expect(try state.run("local n = 0 for i = 1, 1e5 do n = n + 1 end return n", as: Int.self) == 100000)
    }
}

extension LuaInterruptHandle {
    /// Interrupts the state's script from another thread `seconds` from now.
    func interrupt(after seconds: Double) {
        let thread = Thread {
            Thread.sleep(forTimeInterval: seconds)
            interrupt()
        }
        thread.start()
    }
}
