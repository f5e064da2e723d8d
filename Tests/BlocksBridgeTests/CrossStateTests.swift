import Testing
import Foundation
import BlocksBridge

/// Shareable and observable: the same Swift object in the main state and in workers, each
/// property set by one state only (the object's own storage is not what this tests).
final class CrossGauge: LuaShareable, LuaObservable, LuaConvertible, @unchecked Sendable {
    let luaObservers = LuaObservers()
    @LuaObserved("a") var a = 0
    @LuaObserved("b") var b = 0
    @LuaObserved("c") var c = 0
    static let luaClass = LuaClass(name: "test.CrossGauge", methods: LuaObservers.methods,
                                   properties: [.observable("a", \CrossGauge.a), .observable("b", \CrossGauge.b),
                                                .observable("c", \CrossGauge.c)])
}

/// Two-state stress (issue [N] 6 and its net): states that observe and set one shared object, and
/// talk over channels, must never deadlock. A deadlock cannot be undone from inside the process:
/// the watchdog reports it and aborts, so the run fails instead of hanging.
@Suite struct CrossStateTests {
    static let script = """
        local N = ...
        local seen = 0
        for _, key in ipairs({"a", "b", "c"}) do
          bk.addObserverForKeyPath(gauge, key, {"new"}, function() seen = seen + 1 end)
        end
        local toWorkers, fromWorkers = bk.channel(), bk.channel()
        local function work(g, key, n, inbox, outbox)
          local seen = 0
          for _, k in ipairs({"a", "b", "c"}) do
            bk.addObserverForKeyPath(g, k, {"new"}, function() seen = seen + 1 end)
          end
          for i = 1, n do
            g[key] = i
            if i % 25 == 0 then
              outbox:send({key, i, {i}})
              inbox:receive(0)
              bk.run(0.001)
            end
          end
          bk.run(0.05)
          return seen
        end
        local workers = {bk.worker(work, gauge, "b", N, toWorkers, fromWorkers),
                         bk.worker(work, gauge, "c", N, toWorkers, fromWorkers)}
        for i = 1, N do
          gauge.a = i
          if i % 25 == 0 then
            toWorkers:send({i})
            fromWorkers:receive(0)
          end
        end
        local s1, s2 = workers[1]:result(), workers[2]:result()
        bk.run()
        return string.format("main %d workers %s %s", seen, s1 >= N, s2 >= N)
        """

    @Test func observersAndChannelsOnBothSidesOfASharedObjectNeverDeadlock() throws {
        let n = 2000
        let done = DispatchSemaphore(value: 0)
        let outcome = Locked<String>("")
        let gauge = CrossGauge()
        Thread.detachNewThread {
            do {
                let lua = try scriptingState()
                try lua.setGlobal("gauge", gauge)
                let chunk = try lua.run("return function(...) \(Self.script) end", as: LuaRef.self)
                let result = try chunk.call(n, as: String.self)
                outcome.withLock { $0 = result }
            } catch {
                outcome.withLock { $0 = "error: \(error)" }
            }
            done.signal()
        }
        if done.wait(timeout: .now() + 120) == .timedOut {
            FileHandle.standardError.write(Data("CrossStateTests: deadlock: the two-state stress did not end in 120 s\n".utf8))
            abort()
        }
        // Every set reaches the main state's observers: its own at once, the workers' on its loop.
        #expect(outcome.withLock { $0 } == "main \(3 * n) workers true true")
        #expect(gauge.a == n && gauge.b == n && gauge.c == n)
    }
}
