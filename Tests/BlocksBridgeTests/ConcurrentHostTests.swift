import Testing
import Foundation
import Synchronization
import BlocksBridge

/// An observable object one host thread sets while Lua observes it.
private final class Gauge: LuaObservable, LuaConvertible {
    let luaObservers = LuaObservers()
    @LuaObserved("level") var level = 0
    static let luaClass = LuaClass(name: "stress.Gauge", methods: LuaObservers.methods,
                                   properties: [.observable("level", \Gauge.level)])
}

/// A per-state extension: every thread must get the same instance.
private final class Marker {}

/// What the threads share. The state is reached only through host entry points, which take its lock.
private final class Stress: @unchecked Sendable {
    let state: LuaState
    let gauge = Gauge()
    let end: ContinuousClock.Instant
    let failures = Locked<[String]>([])
    let markers = Locked<Set<ObjectIdentifier>>([])
    let bumps = Atomic<Int>(0)
    let levelSets = Atomic<Int>(0)
    let finished = Atomic<Int>(0)
    let chunkPath: String

    init(seconds: Double) throws {
        state = try LuaState()
        state.installGlobals()
        end = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        chunkPath = NSTemporaryDirectory() + "bk-stress-\(getpid())-\(UInt.random(in: 0 ... .max)).lua"
        try "spawn(1); return 'from file', select('#', ...)".write(toFile: chunkPath, atomically: true, encoding: .utf8)
    }

    deinit { try? FileManager.default.removeItem(atPath: chunkPath) }

    var running: Bool { ContinuousClock.now < end }

    func check(_ ok: Bool, _ what: @autoclosure () -> String) {
        if !ok { failures.withLock { $0.append(what()) } }
    }

    /// Runs `body(i)` for i = 1, 2, ... until the time is up (at most `limit` times); a thrown
    /// error is a failure.
    func repeatUntilTime(_ name: String, limit: Int = 50_000, _ body: (Int) throws -> Void) {
        var i = 0
        while running && i < limit {
            i += 1
            do { try body(i) } catch { check(false, "\(name) #\(i): \(error)") }
        }
        check(i > 0, "\(name) never ran")
    }
}

@Suite struct ConcurrentHostTests {
    /// Several threads make every kind of host call on one state while background blocks, main-queue
    /// blocks and a repeating timer run on it (this thread drives the loop). Bounded: ~1.5 s of calls.
    @Test(.timeLimit(.minutes(1)))
    func hostCallsFromManyThreadsRaceWithBlocksAndTimers() throws {
        let stress = try Stress(seconds: 1.5)
        let state = stress.state
        try state.setGlobal("gauge", stress.gauge)
        try state.run("""
            counter, spawned, background, main, ticks, observed = 0, 0, 0, 0, 0, 0
            function bump(n) counter = counter + n; return counter end
            function spawn(n)
              for _ = 1, n do
                spawned = spawned + 1
                bk.performBlock(function()
                  local t = {}
                  for j = 1, 20 do t[j] = tostring(j) end
                  background = background + 1
                end, 0, bk.backgroundQueue)
                bk.performBlock(function() main = main + 1 end, 0)
              end
            end
            function makeTable(i) return {i, tostring(i)} end
            ticker = bk.scheduledTimerWithTimeInterval(0.001, function() ticks = ticks + 1 end, true)
            bk.addObserverForKeyPath(gauge, "level", {"new"}, function() observed = observed + 1 end)
            """)

        let workers: [@Sendable () -> Void] = [
            {   // untyped run and runFile
                stress.repeatUntilTime("run") { i in
                    let results = try stress.state.run("spawn(1); return \(i) * 2, 'x'")
                    stress.check(results.count == 2 && results.first?.integer == Int64(2 * i)
                                 && results.last?.string == "x", "run #\(i) returned \(results)")
                    let file = try stress.state.runFile(stress.chunkPath)
                    stress.check(file.count == 2 && file.first?.string == "from file" && file.last?.integer == 0,
                                 "runFile #\(i) returned \(file)")
                }
            },
            {   // typed calls and globals
                var last = 0
                stress.repeatUntilTime("call") { i in
                    let counter = try stress.state.call("bump", 1, as: Int.self)
                    stress.bumps.add(1, ordering: .relaxed)
                    stress.check(counter > last, "bump returned \(counter) after \(last)")
                    last = counter
                    try stress.state.setGlobal("list", [i, i + 1])
                    let list = try stress.state.global("list", as: [Int].self)
                    stress.check(list == [i, i + 1], "global list #\(i) is \(list)")
                }
            },
            {   // references made, called and released on this thread
                stress.repeatUntilTime("refs") { i in
                    let add = try stress.state.run("return function(x) return x + 1 end", as: LuaRef.self)
                    stress.check(try add.call(i, as: Int.self) == i + 1, "ref call #\(i)")
                    let table = try stress.state.call("makeTable", i)
                    guard case .table(let ref) = table.first else {
                        stress.check(false, "makeTable #\(i) returned \(table)")
                        return
                    }
                    stress.check(try ref.get(as: [String].self) == ["\(i)", "\(i)"], "table ref #\(i)")
                }
            },
            {   // installGlobals, extension lookups and observed property sets
                stress.repeatUntilTime("globals") { i in
                    let marker = stress.state.extensionObject(Marker.self) { Marker() }
                    stress.markers.withLock { _ = $0.insert(ObjectIdentifier(marker)) }
                    stress.state.installGlobals()
                    _ = stress.state.eventLoop
                    stress.gauge.level = i
                    stress.levelSets.add(1, ordering: .relaxed)
                }
            },
            {   // first uses of an extension race with the other threads' lookups
                stress.repeatUntilTime("extensions") { _ in
                    let marker = stress.state.extensionObject(Marker.self) { Marker() }
                    stress.markers.withLock { _ = $0.insert(ObjectIdentifier(marker)) }
                    let results = try stress.state.run("return bk_performBlock ~= nil")
                    stress.check(results.first?.boolean == true, "bk_performBlock missing")
                }
            },
        ]
        for worker in workers {
            Thread {
                worker()
                stress.finished.add(1, ordering: .relaxed)
            }.start()
        }
        let loop = state.eventLoop
        while stress.finished.load(ordering: .relaxed) < workers.count {
            if loop.run(seconds: 0.02) { Thread.sleep(forTimeInterval: 0.001) }
        }
        try state.run("ticker:invalidate()")
        #expect(loop.run(seconds: 20) == true)

        #expect(stress.failures.withLock { $0 } == [])
        #expect(stress.markers.withLock { $0.count } == 1)
        let totals = try state.run("return spawned, background, main, counter, observed, ticks")
        let spawned = try #require(totals[0].integer)
        #expect(spawned > 0)
        #expect(totals[1].integer == spawned)
        #expect(totals[2].integer == spawned)
        #expect(totals[3].integer == Int64(stress.bumps.load(ordering: .relaxed)))
        #expect(totals[4].integer == Int64(stress.levelSets.load(ordering: .relaxed)))
        #expect((totals[5].integer ?? 0) > 0)
    }
}
