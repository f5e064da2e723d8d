import Testing
import Foundation
@testable import BlocksBridge

/// Every driver of the event loop (`run(seconds:)`, `run(until:deadline:)`, `run(seconds:until:)`,
/// `waitUntilIdle`, `waitAsync`) is the same turn: the state's sandbox limits and an interrupt
/// end each of them, however much work is scheduled (a repeating timer would keep it for ever).
@Suite struct LoopDriverLimitsTests {
    /// A state with `limit` and a repeating timer that keeps its loop busy.
    private func busyState(timeLimit limit: Duration?) throws -> LuaState {
        let state = limit.map { try? LuaState(sandbox: Sandbox(timeLimit: $0)) } ?? (try? LuaState())
        let busy = try #require(state)
        busy.installGlobals()
        try busy.run("bk.scheduledTimerWithTimeInterval(0.005, function() end, true)")
        return busy
    }

    /// Seconds `body` took.
    private func elapsed(_ body: () async throws -> Void) async rethrows -> Double {
        let start = Date()
        try await body()
        return Date().timeIntervalSince(start)
    }

    /// The host gives up on a wait after `seconds`: the bound a driver that ignores the limits
    /// runs into. The tests wait 60 s and expect under 30: a loaded machine's pool (as many threads
    /// as cores, other suites' long synchronous tests on them) once delayed the return by 15 s.
    private func giveUp(on loop: EventLoop, after seconds: Double) {
        let thread = Thread {
            Thread.sleep(forTimeInterval: seconds)
            loop.stop()
        }
        thread.start()
    }

    // MARK: run(seconds:)

    @Test func runSecondsStopsAtTheTimeLimit() async throws {
        let state = try busyState(timeLimit: .milliseconds(200))
        var idle = true
        let took = await elapsed { idle = state.eventLoop.run(seconds: 60) }
        #expect(!idle)
        #expect(took < 30, "ran \(took) s")
        #expect(state.stopReason == "time limit exceeded")
    }

    @Test func runSecondsStopsAtAnInterrupt() async throws {
        let state = try busyState(timeLimit: nil)
        state.interruptHandle.interrupt(after: 0.1)
        let took = await elapsed { _ = state.eventLoop.run(seconds: 60) }
        #expect(took < 30, "ran \(took) s")
        #expect(state.stopReason == "interrupted")
    }

    // MARK: waitUntilIdle

    @Test func waitUntilIdleStopsAtTheTimeLimit() async throws {
        let state = try busyState(timeLimit: .milliseconds(200))
        giveUp(on: state.eventLoop, after: 60)
        let took = await elapsed { await state.eventLoop.waitUntilIdle() }
        #expect(took < 30, "waited \(took) s")
        #expect(state.stopReason == "time limit exceeded")
    }

    @Test func waitUntilIdleStopsAtAnInterrupt() async throws {
        let state = try busyState(timeLimit: .seconds(60))
        giveUp(on: state.eventLoop, after: 60)
        state.interruptHandle.interrupt(after: 0.1)
        let took = await elapsed { await state.eventLoop.waitUntilIdle() }
        #expect(took < 30, "waited \(took) s")
        #expect(state.stopReason == "interrupted")
    }

    @Test func waitUntilIdleStopsAtAnInterruptWithoutLimits() async throws {
        let state = try busyState(timeLimit: nil)
        giveUp(on: state.eventLoop, after: 60)
        state.interruptHandle.interrupt(after: 0.1)
        let took = await elapsed { await state.eventLoop.waitUntilIdle() }
        #expect(took < 30, "waited \(took) s")
    }

    // MARK: waitAsync (callAsync)

    @Test func callAsyncStopsAtTheTimeLimit() async throws {
        let state = try busyState(timeLimit: .milliseconds(200))
        try state.run("function waits() bk.sleep(60) return 1 end")
        var message = ""
        let took = await elapsed {
            do {
                _ = try await state.callAsync("waits", as: Int.self)
            } catch {
                message = "\(error)"
            }
        }
        #expect(took < 30, "waited \(took) s")
        #expect(message.contains("time limit exceeded"), "\(message)")
    }

    @Test func callAsyncStopsAtAnInterrupt() async throws {
        let state = try busyState(timeLimit: nil)
        try state.run("function waits() bk.sleep(60) return 1 end")
        state.interruptHandle.interrupt(after: 0.1)
        var message = ""
        let took = await elapsed {
            do {
                _ = try await state.callAsync("waits", as: Int.self)
            } catch {
                message = "\(error)"
            }
        }
        #expect(took < 30, "waited \(took) s")
        #expect(message.contains("interrupted"), "\(message)")
    }

    // MARK: run(seconds:until:) (bk.sleep, bk.await outside a task)

    @Test func awaitOnTheLoopStopsAtTheTimeLimit() async throws {
        let state = try busyState(timeLimit: .milliseconds(200))
        var message = ""
        let took = await elapsed {
            do { try state.run("bk.sleep(60)") } catch { message = "\(error)" }
        }
        #expect(took < 30, "waited \(took) s")
        #expect(message.contains("time limit exceeded"), "\(message)")
    }

    @Test func awaitOnTheLoopStopsAtAnInterrupt() async throws {
        let state = try busyState(timeLimit: nil)
        state.interruptHandle.interrupt(after: 0.1)
        var message = ""
        let took = await elapsed {
            do { try state.run("bk.sleep(60)") } catch { message = "\(error)" }
        }
        #expect(took < 30, "waited \(took) s")
        #expect(message.contains("interrupted"), "\(message)")
    }

    // MARK: run(until:deadline:) (a channel's receive)

    @Test func channelWaitStopsAtTheTimeLimit() async throws {
        let state = try busyState(timeLimit: .milliseconds(200))
        var message = ""
        let took = await elapsed {
            do { try state.run("bk.channel():receive(60)") } catch { message = "\(error)" }
        }
        #expect(took < 30, "waited \(took) s")
        #expect(message.contains("time limit exceeded"), "\(message)")
    }

    @Test func channelWaitStopsAtAnInterrupt() async throws {
        let state = try busyState(timeLimit: nil)
        state.interruptHandle.interrupt(after: 0.1)
        var message = ""
        let took = await elapsed {
            do { try state.run("bk.channel():receive(60)") } catch { message = "\(error)" }
        }
        #expect(took < 30, "waited \(took) s")
        #expect(message.contains("interrupted"), "\(message)")
    }
}
