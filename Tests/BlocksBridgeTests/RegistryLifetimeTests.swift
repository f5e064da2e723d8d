import Testing
import Foundation
import Synchronization
@testable import BlocksBridge

/// Registry slots own themselves (`RegistrySlot`: one owner, freed once; a second push or release
/// of a consumed slot does not compile), go to the state's one release queue when dropped, and
/// the state's life is one state machine that the trampoline and the loop both read.
@Suite struct RegistryLifetimeTests {
    /// Runs `body` on a new thread and waits for it.
    private func onAnotherThread(_ body: @escaping @Sendable () -> Void) {
        let done = DispatchSemaphore(value: 0)
        Thread {
            body()
            done.signal()
        }.start()
        done.wait()
    }

    private final class TimerBox: @unchecked Sendable {
        var timer: BlockTimer?
    }

    /// A timer never scheduled holds its function's slot; dropped on a thread that does not hold
    /// the state, the slot is queued (no Lua is touched there) and freed at the next safe point,
    /// a host call, once: two slots made afterwards are distinct.
    @Test func slotDroppedOnAnotherThreadIsFreedOnceAtTheNextSafePoint() throws {
        let state = try LuaState()
        let loop = state.eventLoop
        let box = TimerBox()
        try armProbedTimer(in: state, loop: loop, box: box)
        #expect(try state.run("collectgarbage() collectgarbage() return next(probe) ~= nil", as: Bool.self))
        #expect(!state.releases.hasWaiting)
        onAnotherThread { box.timer = nil }
        #expect(state.releases.hasWaiting, "queued, not freed, on a thread without the state")
        // The host call drains the queue before its chunk runs: the function is garbage then.
        #expect(try state.run("collectgarbage() collectgarbage() return next(probe) == nil", as: Bool.self))
        #expect(!state.releases.hasWaiting)
        let first = try state.run("return {}", as: LuaRef.self)
        let second = try state.run("return {}", as: LuaRef.self)
        #expect(first.id != second.id, "a slot freed twice would be handed out twice")
    }

    /// The loop's turn drains the same queue (a slot dropped while the loop waits wakes it).
    @Test func slotDroppedWhileTheLoopWaitsIsFreedByItsNextTurn() throws {
        let state = try LuaState()
        state.installGlobals()
        let loop = state.eventLoop
        let box = TimerBox()
        try armProbedTimer(in: state, loop: loop, box: box)
        // The loop waits for a second; the drop on another thread wakes its next turn, which frees
        // the slot and runs the block that looks.
        try state.run("bk.performBlock(function() collectgarbage() collectgarbage() gone = next(probe) == nil end, 0.2)")
        let dropper = Thread { box.timer = nil }
        dropper.start()
        loop.run(seconds: 2)
        #expect(try state.run("return gone", as: Bool.self))
    }

    /// The state's life is one machine: a state marked closing (as bk.so's anchor or os.exit do)
    /// refuses bk calls in the trampoline and schedules nothing on its loop, from the same value.
    @Test func closingIsOneStateTheTrampolineAndTheLoopShare() throws {
        let state = try LuaState()
        state.installGlobals()
        let loop = state.eventLoop
        #expect(state.runtimeStorage.life == .open)
        state.lock.withLock { state.runtimeStorage.advance(to: .closing) }
        #expect(loop.isClosed)
        loop.perform(after: 0) {}
        #expect(loop.pendingCount == 0, "a closing state's loop schedules nothing")
        #expect(throws: LuaError.self) { try state.run("return bk.pending()") }
        state.lock.withLock { state.runtimeStorage.advance(to: .open) }
        #expect(state.runtimeStorage.life == .closing, "the life never goes back")
    }

    /// `loopThread` stays the driver's while a driver runs, whatever other threads do meanwhile (a
    /// host thread calling `runDueWork` between the driver's turns): work scheduled from another
    /// thread still wakes the driver, and runs on its thread.
    @Test func loopThreadStaysFixedWhileADriverRuns() throws {
        let state = try LuaState()
        let loop = state.eventLoop
        let driver = Atomic<UInt>(0)
        let ranOn = Atomic<UInt>(1)
        let finished = DispatchSemaphore(value: 0)
        loop.scheduledTimer(interval: 5, repeats: false) { _ in }  // keeps the driver running
        Thread {
            driver.store(UInt(pthread_self()), ordering: .releasing)
            loop.run(seconds: 3)
            finished.signal()
        }.start()
        while driver.load(ordering: .acquiring) == 0 || loop.currentLoopThread != driver.load(ordering: .acquiring) {
            Thread.sleep(forTimeInterval: 0.001)
        }
        let thread = driver.load(ordering: .acquiring)
        for _ in 0 ..< 20 {
            loop.runDueWork()
            #expect(loop.currentLoopThread == thread)
        }
        loop.perform(after: 0) {
            ranOn.store(UInt(pthread_self()), ordering: .releasing)
            loop.stop()
        }
        #expect(finished.wait(timeout: .now() + 2) == .success, "the driver was woken and stopped")
        #expect(ranOn.load(ordering: .acquiring) == thread)
    }
}

extension RegistryLifetimeTests {
    /// Puts in `box` a timer whose function is also a key of the weak global `probe`: `next(probe)`
    /// is nil once the timer's registry slot is freed and the function collected.
    private func armProbedTimer(in state: LuaState, loop: EventLoop, box: TimerBox) throws {
        try state.lock.withLock { () throws(LuaError) in
            let stack = state.stack
            try stack.load("probe = setmetatable({}, { __mode = 'k' }) local f = function() end probe[f] = true return f",
                           name: "=probe")
            try stack.call(arguments: 0, results: 1)
            box.timer = loop.timer(interval: 60, repeats: false, functionAt: -1, in: stack)
            stack.pop()
        }
    }
}
