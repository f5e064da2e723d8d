import Testing
import Dispatch
@testable import BlocksBridge

private struct SwiftFailure: Error, CustomStringConvertible {
    var description: String { "the Swift side failed" }
}

/// A flag set from Swift tasks.
private final class Flag: Sendable {
    private let value = Locked(false)  // not Mutex: ThreadSanitizer does not see it
    func set() { value.withLock { $0 = true } }
    var isSet: Bool { value.withLock { $0 } }
}

/// Tests only: hands a state to a child task to cancel it from outside (the state is used by one
/// task at a time here).
private final class StateBox: @unchecked Sendable {
    let state: LuaState
    init(_ state: LuaState) { self.state = state }
}

/// The Swift side of tasks: async closures registered with `register`, `callAsync`, and
/// cancellation both ways. (The Lua side is Tests/lua/test_tasks.lua.)
@Suite struct TasksTests {
    @Test func asyncSwiftClosureSuspendsOnlyTheCallingTask() throws {
        let state = try LuaState()
        state.register("fetch") { (name: String) async throws -> String in
            try await Task.sleep(for: .milliseconds(100))
            return "got " + name
        }
        let log = try state.run("""
            local bk = require "bk"
            local log = {}
            local a = bk.async(function() local got = fetch("a") log[#log + 1] = got end)
            local ticker = bk.async(function() bk.sleep(0.001) log[#log + 1] = "tick" end)
            bk.await(a)
            bk.await(ticker)
            return table.concat(log, ",") .. "|" .. fetch("top") .. "|" .. tostring(a.isFinished)
            """, as: String.self)
        #expect(log == "tick,got a|got top|true")
    }

    @Test func asyncSwiftErrorIsRaisedInTheTask() throws {
        let state = try LuaState()
        state.register("fail") { (x: Int) async throws -> Int in
            try await Task.sleep(for: .milliseconds(5))
            throw SwiftFailure()
        }
        state.register("nothing") { () async throws in }
        let message = try state.run("""
            local bk = require "bk"
            local t = bk.async(function() return pcall(fail, 1) end)
            local ok, err = bk.await(t)
            assert(not ok)
            assert(select("#", nothing()) == 0)
            local okType, typeErr = pcall(fail, "x")
            assert(not okType and typeErr:find("bad argument #1 to 'fail'", 1, true), typeErr)
            return err
            """, as: String.self)
        #expect(message.contains("the Swift side failed"))
    }

    @Test func cancellingTheLuaTaskCancelsTheSwiftWork() throws {
        let state = try LuaState()
        let sawCancellation = Flag()
        state.register("slow") { () async throws -> Int in
            do { try await Task.sleep(for: .seconds(30)) } catch {
                sawCancellation.set()
                throw error
            }
            return 1
        }
        let cancelled = try state.run("""
            local bk = require "bk"
            local t = bk.async(function() return slow() end)
            bk.sleep(0.02)
            t:cancel()
            bk.run()  -- the Swift call keeps the loop alive until it has ended
            return t.isCancelled and t.isFinished
            """, as: Bool.self)
        #expect(cancelled)
        #expect(sawCancellation.isSet)
    }

    @Test func callAsyncAwaitsALuaFunctionThatSuspends() async throws {
        let state = try LuaState()
        try state.run("""
            local bk = require "bk"
            function slowDouble(x) bk.sleep(0.01) return x * 2 end
            function boom() bk.sleep(0) error("async boom", 0) end
            """)
        #expect(try await state.callAsync("slowDouble", 21, as: Int.self) == 42)
        await #expect(throws: LuaError.self) { try await state.callAsync("boom", as: Int?.self) }
        let f = try state.global("slowDouble", as: LuaRef.self)
        #expect(try await f.callAsync(5, as: Int.self) == 10)
        #expect(state.eventLoop.pendingCount == 0)
    }

    @Test func cancellingTheSwiftTaskCancelsTheLuaTask() async throws {
        let box = StateBox(try LuaState())
        try box.state.run("""
            local bk = require "bk"
            cleaned = false
            function forever()
              local guard <close> = setmetatable({}, { __close = function() cleaned = true end })
              bk.sleep(100)
            end
            """)
        let waiting = Task { try await box.state.callAsync("forever", as: Bool?.self) }
        try await Task.sleep(for: .milliseconds(50))
        waiting.cancel()
        let outcome = await waiting.result
        switch outcome {
        case .success: Issue.record("a cancelled call returned")
        case .failure(let error): #expect(String(describing: error).contains("cancelled"))
        }
        #expect(try box.state.global("cleaned", as: Bool.self))
        #expect(box.state.eventLoop.pendingCount == 0)
    }

    @Test func luaRefIsSendableAndCallsOnTheLoopFromAnyThread() throws {
        let state = try LuaState()
        try state.run("calls = {} function record(x) calls[#calls + 1] = x end")
        let record = try state.global("record", as: LuaRef.self)
        let group = DispatchGroup()
        for i in 1 ... 3 {
            // A @Sendable closure on another thread holding the reference.
            DispatchQueue.global().async(group: group) { record.callOnLoop(i) }
        }
        group.wait()
        #expect(try state.run("return #calls", as: Int.self) == 0)  // not yet: on the loop's next turn
        state.eventLoop.run()
        #expect(try state.run("table.sort(calls) return table.concat(calls, ',')", as: String.self) == "1,2,3")
    }

    @Test func luaClosureIsSendableAndReachesLuaFromAnyThread() async throws {
        let state = try LuaState()
        // A Lua function that takes a Swift callback and answers through it.
        try state.run("function ask(question, reply) reply(question .. '?') end")
        let ask = try state.global("ask", as: LuaRef.self)
        let answers = Locked<[String]>([])
        // Made here, stored, sent to a Dispatch queue and a detached task (both need Sendable).
        let reply = LuaClosure(name: "reply") { (answer: String) in answers.withLock { $0.append(answer) } }
        let group = DispatchGroup()
        DispatchQueue.global().async(group: group) { _ = ask.callOnLoop("from a queue", reply) }
        group.wait()
        await Task.detached { _ = ask.callOnLoop("from a task", reply) }.value
        #expect(answers.withLock { $0 }.isEmpty)  // not yet: on the loop's next turn
        state.eventLoop.run()
        #expect(answers.withLock { $0 }.sorted() == ["from a queue?", "from a task?"])
        // Its argument checks still name it.
        let error = #expect(throws: LuaError.self) { try state.call("ask", 1, LuaClosure(name: "reply") { (n: Int) in _ = n }) }
        #expect(error?.message.contains("bad argument #1 to 'reply' (number expected, got string)") == true)
    }
}
