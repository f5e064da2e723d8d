import Testing
@testable import BlocksBridge

/// What a Swift host's state reports of failed tasks, and when: a failure no one awaited when the
/// task is collected or the state is released; never one awaited, then or later. (bklua's side is
/// Tests/lua/test_exit_status.lua.)
@Suite struct UnawaitedTaskFailureTests {
    /// A state whose bk.onError hands each report to `reports`.
    private func state(reporting reports: Locked<[String]>) throws -> LuaState {
        let state = try LuaState()
        state.register("record") { (message: String) in reports.withLock { $0.append(message) } }
        try state.run("bk = require 'bk' bk.onError(record)")
        return state
    }

    @Test func aFailureAwaitedLaterIsNeverReported() throws {
        let reports = Locked<[String]>([])
        do {
            let state = try state(reporting: reports)
            try state.run("t = bk.async(function() bk.sleep(0.01) error('late', 0) end) bk.run()")
            #expect(try state.run("return t.isFinished", as: Bool.self))
            #expect(try state.run("return select(2, pcall(bk.await, t))", as: String.self) == "late")
            state.reportUnawaitedTaskFailures()
        }
        #expect(reports.withLock { $0 }.isEmpty)
    }

    @Test func aFailureNoOneAwaitedIsReportedWhenCollectedOrWhenTheStateIsReleased() throws {
        let reports = Locked<[String]>([])
        do {
            let state = try state(reporting: reports)
            try state.run("bk.async(function() error('dropped', 0) end) kept = bk.async(function() error('kept', 0) end)")
            #expect(reports.withLock { $0 }.isEmpty, "not on the loop's next turn")
            try state.run("collectgarbage() collectgarbage()")
            #expect(reports.withLock { $0 }.map { $0.prefix(7) } == ["dropped"])
        }
        let all = reports.withLock { $0 }
        #expect(all.count == 2)
        #expect(all.last?.hasPrefix("kept\nstack traceback:") == true, "\(all)")
    }

    @Test func reportUnawaitedTaskFailuresReportsEachOnce() throws {
        let reports = Locked<[String]>([])
        let state = try state(reporting: reports)
        try state.run("a = bk.async(function() error('first', 0) end) b = bk.async(function() error('second', 0) end)")
        state.reportUnawaitedTaskFailures()
        state.reportUnawaitedTaskFailures()
        #expect(reports.withLock { $0 }.map { String($0.prefix(while: { $0 != "\n" })) } == ["first", "second"])
        #expect(try state.run("return select(2, pcall(bk.await, a))", as: String.self) == "first", "still raised when awaited")
    }
}
