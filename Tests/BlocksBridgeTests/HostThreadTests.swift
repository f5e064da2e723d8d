import Testing
import Foundation
import Synchronization
import BlocksBridge

/// Runs `body` on a new thread; the returned flag turns true when it has finished.
private func onAnotherThread(_ body: @escaping @Sendable () -> Void) -> Finished {
    let finished = Finished()
    Thread {
        body()
        finished.done.store(true, ordering: .releasing)
    }.start()
    return finished
}

private final class Finished: Sendable {
    let done = Atomic<Bool>(false)
    var isDone: Bool { done.load(ordering: .acquiring) }

    /// Waits up to `seconds` for the thread to finish.
    func wait(seconds: Double = 10) -> Bool {
        let end = Date().addingTimeInterval(seconds)
        while !isDone && Date() < end { Thread.sleep(forTimeInterval: 0.001) }
        return isDone
    }
}

/// The state is used from the other thread only through host entry points (they take its lock).
private struct Shared: @unchecked Sendable {
    let state: LuaState
}

/// Host entry points touch the state only with its lock: while another thread holds it, they wait
/// (or, for a reference's release, defer the work) and change nothing.
@Suite struct HostThreadTests {
    @Test func untypedRunWaitsForTheLockBeforeLoading() throws {
        let shared = Shared(state: try LuaState())
        let state = shared.state
        state.lock.lock()
        let top = state.stack.top
        let runner = onAnotherThread { _ = try? shared.state.run("ran = true") }
        let fileRunner = onAnotherThread { _ = try? shared.state.runFile("/nonexistent/bk-test.lua") }
        Thread.sleep(forTimeInterval: 0.1)
        // Loading first would have pushed the chunk (or the error) on this thread's stack.
        #expect(state.stack.top == top)
        #expect(!runner.isDone && !fileRunner.isDone)
        state.lock.unlock()
        #expect(runner.wait() && fileRunner.wait())
        #expect(try state.global("ran", as: Bool.self))
    }

    @Test func installGlobalsWaitsForTheLock() throws {
        let shared = Shared(state: try LuaState())
        let state = shared.state
        state.lock.lock()
        let installer = onAnotherThread { shared.state.installGlobals() }
        Thread.sleep(forTimeInterval: 0.1)
        #expect(state.stack.type(at: 1) == .none)
        state.stack.pushGlobalTable()
        #expect(state.stack.rawGet(-1, field: "bk_map") == .nil)
        state.stack.top = 0
        #expect(!installer.isDone)
        state.lock.unlock()
        #expect(installer.wait())
        #expect(try state.global("bk_map", as: LuaRef.self).isNil == false)
    }

    /// A host holding the lock while it waits for a thread that drops a reference: the release
    /// must neither wait for the lock (deadlock) nor touch the state without it.
    @Test func aReferenceDroppedWhileAnotherThreadHoldsTheLockIsReleasedLater() throws {
        let state = try LuaState()
        // Handed over once (the thread's start and end order the accesses).
        nonisolated(unsafe) var reference: LuaRef? = try state.run("return function() end", as: LuaRef.self)
        let slot = try #require(reference?.id)
        let registrySlot = "return type(debug.getregistry()[\(slot)])"
        #expect(try state.run(registrySlot, as: String.self) == "function")
        state.lock.lock()
        let dropper = onAnotherThread { reference = nil }
        #expect(dropper.wait())  // did not wait for the lock
        // Still held by this thread: the slot is untouched (read raw: a host call would free it)...
        #expect(state.stack.rawGet(LuaStack.registryIndex, Int64(slot)) == .function)
        state.stack.top = 0
        state.lock.unlock()
        // ...and freed by the next host call (a freed slot holds the free list's next index).
        #expect(try state.run(registrySlot, as: String.self) == "number")
    }

    @Test func aReferenceDroppedOnAnotherThreadWithTheLockFreeIsReleasedAtOnce() throws {
        let shared = Shared(state: try LuaState())
        nonisolated(unsafe) var reference: LuaRef? = try shared.state.run("return {}", as: LuaRef.self)
        let slot = try #require(reference?.id)
        #expect(onAnotherThread { reference = nil }.wait())
        // Looked at without a host call (which would free deferred slots).
        shared.state.lock.lock()
        defer { shared.state.lock.unlock() }
        #expect(shared.state.stack.rawGet(LuaStack.registryIndex, Int64(slot)) == .number)
        shared.state.stack.top = 0
    }

    @Test func extensionsMadeOnceWhateverTheThread() throws {
        final class Made {}
        let shared = Shared(state: try LuaState())
        let made = Locked<[ObjectIdentifier]>([])
        let threads = (0 ..< 8).map { _ in
            onAnotherThread {
                let object = shared.state.extensionObject(Made.self) {
                    Thread.sleep(forTimeInterval: 0.02)  // widen the window between lookup and insert
                    return Made()
                }
                made.withLock { $0.append(ObjectIdentifier(object)) }
            }
        }
        #expect(threads.allSatisfy { $0.wait() })
        #expect(Set(made.withLock { $0 }).count == 1)
    }
}
