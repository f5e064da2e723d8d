import Testing
import Foundation
import Synchronization
@testable import BlocksBridge

/// A host may drop its last reference to a state on any thread, at any moment: while the state's
/// loop runs on another thread, while calls arrive from many threads, even inside a block the loop
/// runs. The loop, its handles and `callOnLoop` never outlive the state: nothing touches it after
/// it closed, and the loop's driver ends.
@Suite struct HostLifetimeTests {
    /// A thread that reports when it has finished.
    private final class Runner: Sendable {
        let finished = Atomic<Bool>(false)

        init(_ body: @escaping @Sendable () -> Void) {
            Thread { [self] in
                body()
                finished.store(true, ordering: .releasing)
            }.start()
        }

        func wait(seconds: Double) -> Bool {
            let end = Date().addingTimeInterval(seconds)
            while !finished.load(ordering: .acquiring), Date() < end { Thread.sleep(forTimeInterval: 0.001) }
            return finished.load(ordering: .acquiring)
        }

        /// `wait(seconds:)` for async tests: suspends between checks instead of blocking one of the
        /// few cooperative threads (other suites' async drivers need them meanwhile).
        func finish(within seconds: Double) async -> Bool {
            let end = Date().addingTimeInterval(seconds)
            while !finished.load(ordering: .acquiring), Date() < end { try? await Task.sleep(nanoseconds: 1_000_000) }
            return finished.load(ordering: .acquiring)
        }
    }

    /// Holds the only host reference to a state, so that a test can drop it from a chosen place.
    private final class Holder: @unchecked Sendable {
        var state: LuaState?
        init(_ state: LuaState) { self.state = state }
    }

    @Test(.timeLimit(.minutes(5))) func droppingTheStateWhileItsLoopRunsAndCallsArrive() async throws {
        for iteration in 0 ..< scaled(300) {
            try await dropWhileDriven(iteration: iteration)
        }
    }

    /// One state: its loop runs on a thread of its own (kept busy by a repeating timer), callers
    /// on four threads call a function on the loop, two more call it and call it as a task; the
    /// host drops the state after a moment. Whichever thread then holds the last reference
    /// (a caller, the loop running a call) closes the state; the loop's run must end.
    private func dropWhileDriven(iteration: Int) async throws {
        var state: LuaState? = try LuaState()
        state?.installGlobals()
        _ = try state?.run("""
            count = 0
            function bump(x) count = count + x; local t = {} for i = 1, 5 do t[i] = {i} end return count end
            bk.scheduledTimerWithTimeInterval(0.001, function() local s = string.rep('x', 100) end, true)
            """)
        let bump = try #require(try state?.global("bump", as: LuaRef.self))
        let loop = try #require(state?.eventLoop)
        let driver = Runner { loop.run(seconds: 30) }
        var callers: [Runner] = []
        // Bounded: callers that never stopped would keep the state alive (each call holds it).
        for _ in 0 ..< 4 {
            callers.append(Runner {
                for _ in 0 ..< 200 {
                    guard bump.callOnLoop(1) != nil else { break }
                    usleep(UInt32.random(in: 0 ... 100))
                }
            })
        }
        callers.append(Runner {
            for _ in 0 ..< 100 where bump.state != nil { _ = try? bump.call(1) }
        })
        let asyncCaller = Task.detached {
            for _ in 0 ..< 20 where bump.state != nil { _ = try? await bump.callAsync(1, as: Int.self) }
        }
        try await Task.sleep(nanoseconds: UInt64(1000 + (iteration % 7) * 700) * 1000)
        state = nil
        for caller in callers { #expect(await caller.finish(within: 20), "a caller hung (iteration \(iteration))") }
        await asyncCaller.value
        #expect(await driver.finish(within: 20), "the loop ran on after its state closed (iteration \(iteration))")
        #expect(bump.state == nil)
        #expect(bump.callOnLoop(1) == nil)
    }

    @Test func lastReferenceDroppedInsideABlockClosesTheStateAfterTheBlock() throws {
        let holder = Holder(try LuaState())
        let loop = try scheduleTheDrop(holder)
        let driver = Runner { loop.run(seconds: 30) }
        #expect(driver.wait(seconds: 20), "the loop ran on after its state closed")
        #expect(holder.state == nil)
    }

    /// A block that drops the holder's state (the only reference left) from a Swift function while
    /// Lua code (the block) runs under it, then goes on; returns the state's loop.
    private func scheduleTheDrop(_ holder: Holder) throws -> EventLoop {
        let state = try #require(holder.state)
        state.installGlobals()
        state.register("drop") { () in holder.state = nil }
        try state.run("""
            bk.scheduledTimerWithTimeInterval(0.001, function() end, true)
            bk.performBlock(function()
              drop()
              after = pcall(bk.version)  -- refused: the state is closing
              local t = {} for i = 1, 1000 do t[i] = {i} end  -- Lua still runs on the open state
            end, 0.01)
            """)
        return state.eventLoop
    }

    @Test func lastReferenceDroppedByACallOnTheLoop() throws {
        // The call made by `callOnLoop` holds the state while it runs: when the host has dropped
        // it meanwhile, the call's end closes the state, on the loop's thread, inside its turn.
        var state: LuaState? = try LuaState()
        state?.installGlobals()
        _ = try state?.run("function slow() local t = {} for i = 1, 20000 do t[i] = {i} end end")
        let slow = try #require(try state?.global("slow", as: LuaRef.self))
        let loop = try #require(state?.eventLoop)
        let started = Atomic<Bool>(false)
        let driver = Runner {
            started.store(true, ordering: .releasing)
            loop.run(seconds: 30)
        }
        while !started.load(ordering: .acquiring) { usleep(100) }
        for _ in 0 ..< 20 { slow.callOnLoop() }
        loop.perform(after: 20) {}  // keeps the loop running
        usleep(2000)
        state = nil
        #expect(driver.wait(seconds: 20), "the loop ran on after its state closed")
        #expect(slow.callOnLoop() == nil)
    }
}
