import Testing
import Dispatch
import CLuaShim
@testable import BlocksBridge

@Suite struct EventLoopTests {
    @Test func swiftBlocksRunInDelayOrderAndEqualDelaysInSubmissionOrder() throws {
        let state = try scriptingState()
        let loop = state.eventLoop
        let trail = Trail<String>()
        loop.perform(after: 0.03) { trail.append("c") }
        loop.perform(after: 0.01) { trail.append("a1") }
        loop.perform { trail.append("now") }
        loop.perform(after: 0.01) { trail.append("a2") }
        loop.perform(after: 0.02) { trail.append("b") }
        #expect(loop.pendingCount == 5)
        #expect(loop.run() == true)
        #expect(trail.values == ["now", "a1", "a2", "b", "c"])
        #expect(loop.pendingCount == 0)
    }

    @Test func runDueWorkRunsOnlyWhatIsDueAndReportsTheNextDeadline() throws {
        let state = try scriptingState()
        let loop = state.eventLoop
        #expect(loop.secondsUntilNextWork == nil)
        let trail = Trail<Int>()
        loop.perform { trail.append(1) }
        loop.perform { trail.append(2) }
        loop.perform(after: 30) { trail.append(3) }
        #expect(loop.secondsUntilNextWork == 0)
        #expect(loop.runDueWork() == 2)
        #expect(trail.values == [1, 2])
        let next = try #require(loop.secondsUntilNextWork)
        #expect(next > 20 && next <= 30)
        #expect(loop.runDueWork() == 0)
        #expect(loop.pendingCount == 1)
    }

    @Test func cancelledSwiftBlocksDoNotRun() throws {
        let state = try scriptingState()
        let loop = state.eventLoop
        let trail = Trail<Int>()
        let handle = loop.perform(after: 0.01) { trail.append(1) }
        loop.perform(after: 0.02) { trail.append(2) }
        handle.cancel()
        handle.cancel()
        #expect(handle.isCancelled)
        #expect(!handle.isFinished)
        loop.run()
        #expect(trail.values == [2])
    }

    @Test func runWithSecondsReturnsFalseAtTheDeadline() throws {
        let state = try scriptingState()
        let loop = state.eventLoop
        let handle = loop.perform(after: 60) {}
        let clock = ContinuousClock()
        let start = clock.now
        #expect(loop.run(seconds: 0.05) == false)
        #expect(clock.now - start >= .milliseconds(45))
        handle.cancel()
        #expect(loop.run(seconds: 0) == true)
    }

    @Test func stopFromAnotherThreadEndsRun() throws {
        let state = try scriptingState()
        let loop = state.eventLoop
        let timer = loop.scheduledTimer(interval: 0.005, repeats: true) { _ in }
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.05) { loop.stop() }
        #expect(loop.run(seconds: 30) == false)
        #expect(timer.isValid)
        timer.invalidate()
        #expect(loop.pendingCount == 0)
    }

    @Test func backgroundSwiftBlocksRunOnOtherThreadsAndKeepTheLoopAlive() throws {
        let state = try scriptingState()
        let loop = state.eventLoop
        let trail = Trail<Int64>()
        let main = bk_loop_thread_id()
        for _ in 0 ..< 8 {
            loop.perform(on: .background) { trail.append(bk_loop_thread_id()) }
        }
        let serial = BlockQueue(label: "swift-serial")
        let order = Trail<Int>()
        for i in 0 ..< 20 { loop.perform(after: i % 2 == 0 ? 0 : 0.001, on: serial) { order.append(i) } }
        #expect(loop.run(seconds: 30) == true)
        #expect(trail.values.count == 8)
        #expect(trail.values.allSatisfy { $0 != main })
        #expect(order.values.count == 20)
    }

    @Test func workScheduledFromAnotherThreadMakesTheWakeupDescriptorReadable() throws {
        let state = try scriptingState()
        let loop = state.eventLoop
        let trail = Trail<Int>()
        let scheduled = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            loop.perform { trail.append(1) }
            scheduled.signal()
        }
        scheduled.wait()
        #expect(bk_loop_wait_readable(loop.wakeupDescriptor, 5_000_000_000) == 1)
        #expect(loop.runDueWork() == 1)
        #expect(trail.values == [1])
        // runDueWork drained the descriptor.
        #expect(bk_loop_wait_readable(loop.wakeupDescriptor, 0) == 0)
    }

    @Test func waitUntilIdleDrivesTheLoopFromAnAsyncHost() async throws {
        let state = try scriptingState()
        let loop = state.eventLoop
        let trail = Trail<String>()
        loop.perform(after: 0.02) { trail.append("swift") }
        loop.perform(on: .background) { trail.append("background") }
        try state.run("""
            done = {}
            bk.performBlock(function() done[#done + 1] = 'lua' end, 0.01)
            bk.performBlockInBackground(function() done[#done + 1] = 'lua background' end, 0.03)
            """)
        await loop.waitUntilIdle()
        #expect(loop.pendingCount == 0)
        #expect(Set(trail.values) == ["swift", "background"])
        let count = try state.run("return #done")
        #expect(count.first?.integer == 2)
    }

    @Test func swiftTimersRepeatUntilInvalidatedFromTheirOwnBlock() throws {
        let state = try scriptingState()
        let loop = state.eventLoop
        let fired = Trail<Int>()
        let timer = loop.scheduledTimer(interval: 0.002, repeats: true) { timer in
            fired.append(1)
            if fired.values.count == 5 { timer.invalidate() }
        }
        #expect(loop.run(seconds: 30) == true)
        #expect(fired.values.count == 5)
        #expect(!timer.isValid)
        let later = loop.timer(interval: 0.001, repeats: false) { _ in fired.append(2) }
        #expect(loop.pendingCount == 0)
        later.schedule()
        loop.run()
        #expect(fired.values.last == 2)
    }

    @Test func backgroundLuaWaitsWhileTheHostIsInLua() throws {
        let state = try scriptingState()
        // The script holds the state: the background block cannot run until it returns.
        let seen = try state.run("""
            flag = false
            bk.performBlockInBackground(function() flag = true end, 0)
            local stop = os.clock() + 0.05
            while os.clock() < stop do end
            return flag
            """)
        #expect(seen.first?.boolean == false)
        state.eventLoop.run()
        #expect(try state.run("return flag", as: Bool.self) == true)
    }

    @Test func scheduleAndCancelDoesNotGrowMemory() throws {
        let state = try scriptingState()
        let code = """
            local f = function() end
            for i = 1, 50000 do bk.performBlock({}, f, 10):cancel() end
            collectgarbage() collectgarbage()
            """
        try state.run(code)
        let baseline = state.memoryInUse
        for _ in 0 ..< 3 { try state.run(code) }
        #expect(state.memoryInUse < baseline + 256 * 1024, "grew from \(baseline) to \(state.memoryInUse)")
        #expect(state.eventLoop.pendingCount == 0)
    }

    @Test func luaErrorsInBlocksGoToTheErrorHandler() throws {
        let state = try scriptingState()
        try state.run("""
            messages = {}
            bk.onError(function(m) messages[#messages + 1] = m end)
            bk.performBlock(function() error('first') end, 0)
            bk.scheduledTimerWithTimeInterval(0.001, function() error('second') end)
            """)
        #expect(state.eventLoop.run() == true)
        let result = try state.run("return #messages, messages[1], messages[2]")
        #expect(result.first?.integer == 2)
        #expect(result[1].string?.contains("first") == true)
        #expect(result[2].string?.contains("second") == true)
        #expect(result[2].string?.contains("stack traceback:") == true)
    }

    @Test func hostsScheduleLuaFunctionsWithAnObject() throws {
        let state = try scriptingState()
        let loop = state.eventLoop
        let stack = state.stack
        try state.run("got = nil; target = {name = 'target'}; function record(obj) got = obj.name end")
        let handle = state.lock.withLock {
            stack.pushGlobalTable()
            stack.rawGet(-1, field: "record")
            stack.rawGet(-2, field: "target")
            let handle = loop.perform(after: 0.01, functionAt: -2, object: -1, in: stack)
            stack.pop(3)
            return handle
        }
        #expect(loop.pendingCount == 1)
        #expect(loop.run(seconds: 30) == true)
        #expect(handle.isFinished)
        #expect(try state.run("return got", as: String.self) == "target")
    }

    @Test func closingTheStateReleasesTheLoopAndWhatIsStillScheduled() throws {
        weak var weakLoop: EventLoop?
        weak var weakTimer: BlockTimer?
        do {
            let state = try scriptingState()
            let loop = state.eventLoop
            weakLoop = loop
            loop.perform(after: 60) {}
            weakTimer = loop.scheduledTimer(interval: 60, repeats: true) { _ in }
            try state.run("bk.performBlock(function() end, 60) bk.scheduledTimerWithTimeInterval(60, print, true)")
            #expect(loop.pendingCount == 4)
        }
        #expect(weakLoop == nil, "scheduled work kept the loop alive")
        #expect(weakTimer == nil)
    }

    @Test func closingTheStateReleasesTheLoopWhileTasksSleep() throws {
        // A sleeping task's wake-up and a block that suspended as a task are known to the loop by
        // identity: closing must let go of them too.
        weak var weakLoop: EventLoop?
        do {
            let state = try scriptingState()
            weakLoop = state.eventLoop
            try state.run("bk.async(function() bk.sleep(60) end) bk.performBlock(function() bk.sleep(60) end, 0)")
            _ = state.eventLoop.run(seconds: 0.05)
            #expect(state.eventLoop.pendingCount > 0)
        }
        #expect(weakLoop == nil, "a sleeping task kept the loop alive")
    }

    @Test func swiftTimerFireRunsNowAndInvalidatesANonRepeatingTimer() throws {
        let state = try scriptingState()
        let loop = state.eventLoop
        let fired = Trail<Int>()
        let once = loop.timer(interval: 60, repeats: false) { _ in fired.append(1) }
        once.fire()
        once.fire()
        #expect(fired.values == [1])
        #expect(!once.isValid)
        let repeating = loop.scheduledTimer(interval: 60, repeats: true) { _ in fired.append(2) }
        repeating.fire()
        #expect(repeating.isValid)
        #expect(loop.pendingCount == 1)
        repeating.invalidate()
        #expect(fired.values == [1, 2])
        #expect(loop.pendingCount == 0)
    }

    @Test func invalidatingTheLastTimerFromAnotherThreadEndsRunPromptly() throws {
        let state = try scriptingState()
        let loop = state.eventLoop
        let timer = loop.scheduledTimer(interval: 60, repeats: false) { _ in }
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.05) { timer.invalidate() }
        let clock = ContinuousClock()
        let start = clock.now
        #expect(loop.run(seconds: 30) == true)
        #expect(clock.now - start < .seconds(20), "slept until the timer's deadline")
    }
}
