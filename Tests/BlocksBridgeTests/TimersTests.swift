import Testing
import Foundation
@testable import BlocksBridge

@Suite struct TimersTests {
    @Test func aTimerInvalidatedWhileAboutToFireNeverRunsAnotherFunction() throws {
        let state = try scriptingState()
        try state.run("""
            log = {}
            T = bk.scheduledTimerWithTimeInterval(100, function() log[#log + 1] = 'timer' end, true)
            """)
        let stack = state.stack
        stack.pushGlobalTable()
        stack.rawGet(-1, field: "T")
        let timer = try #require(stack.toObject(BlockTimer.self, at: -1))
        stack.pop(2)
        // Another thread fires the timer while this one holds the state: it waits for the lock
        // with the timer about to fire, and meanwhile Lua invalidates it and takes a new
        // reference (the one its block's just freed).
        state.lock.lock()
        let done = DispatchSemaphore(value: 0)
        Thread { timer.fire(); done.signal() }.start()
        Thread.sleep(forTimeInterval: 0.2)
        try state.run("""
            T:invalidate()
            OTHER = bk.timerWithTimeInterval(100, function() log[#log + 1] = 'another function' end)
            """)
        state.lock.unlock()
        done.wait()
        let log = try state.run("return #log, log[1]")
        #expect(log.first?.integer == 0, "\(log)")
    }
}
