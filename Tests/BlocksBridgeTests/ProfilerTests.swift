import Testing
import Foundation
import BlocksBridge

/// This thread's CPU time in seconds (other suites run in parallel: the process's is no measure).
private func threadCPUSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// Spends `seconds` of this thread's CPU time (not wall-clock time: a loaded machine changes
/// nothing).
private func burnCPU(seconds: Double) {
    let now = threadCPUSeconds
    let end = now() + seconds
    var x = 0
    while now() < end { for i in 0 ..< 1000 { x &+= i } }
    withExtendedLifetime(x) {}
}

/// A class whose method burns CPU in Swift, called as a method from Lua.
final class Gadget: LuaBridged, LuaConvertible {
    static let luaClass = LuaClass(name: "Gadget", methods: [
        BKFunction("resize") { stack throws(LuaRaise) in
            _ = try stack.checkObject(Gadget.self, at: 1)
            burnCPU(seconds: try stack.checkNumber(2))
            return 0
        },
    ])
}

/// The host API `lua.profile(rate:) { ... }`: CPU time in Lua, in tasks, in workers and in Swift
/// functions called from Lua, each where it was spent.
@Suite(.serialized) struct ProfilerTests {
    /// Samples of the stacks whose innermost frame contains `text`.
    private func samples(_ profile: LuaProfile, leaf text: String) -> Int {
        profile.stacks.filter { $0.key.split(separator: ";").last.map { $0.contains(text) } ?? false }.values.reduce(0, +)
    }

    @Test func swiftFunctionsBurningCPUShowAsThemselvesInProportion() throws {
        let lua = try scriptingState()
        lua.register("burn") { (seconds: Double) in burnCPU(seconds: seconds) }
        try lua.setGlobal("gadget", Gadget())
        lua.register("threadClock") { () in threadCPUSeconds() }
        // A Lua loop calibrated to take as long as each Swift burn, in this thread's CPU time.
        try lua.run("""
            function luaHot(n) local x = 0 for i = 1, n do x = x + i % 3 end return x end
            local n, t = 100000, 0
            repeat n = n * 2 local c = threadClock() luaHot(n) t = threadClock() - c until t > 0.1
            N = math.floor(n * 0.3 / t)
            """)
        // Each part's own CPU time is measured inside the profiled run: the profiler's signal
        // handling slows the Lua loop more than the Swift burns (under ASan, by a fifth), so a
        // calibration made before profiling would not hold.
        let profile = try lua.profile {
            try lua.run("""
                local function callsBurn() burn(0.3) end
                local function callsResize() gadget:resize(0.3) end
                local c = threadClock() luaHot(N) T1 = threadClock() - c
                c = threadClock() callsBurn() T2 = threadClock() - c
                c = threadClock() callsResize() T3 = threadClock() - c
                """)
        }
        let seconds = try ["T1", "T2", "T3"].map { name throws(LuaError) in try lua.global(name, as: Double.self) }
        let counts = [samples(profile, leaf: "(luaHot)"), samples(profile, leaf: "[Swift] burn"),
                      samples(profile, leaf: "[Swift] Gadget:resize")]
        let totalSamples = Double(counts.reduce(0, +)), totalSeconds = seconds.reduce(0, +)
        for (count, spent) in zip(counts, seconds) {
            let share = Double(count) / totalSamples, expected = spent / totalSeconds
            #expect(abs(share / expected - 1) <= 0.15, "\(seconds) s gave \(counts) samples\n\(profile.folded)")
        }
        // The Swift frame sits on the Lua function that called it.
        #expect(profile.stacks.keys.contains { $0.hasSuffix("(callsBurn);[Swift] burn") }, "\(profile.folded)")
        let top = profile.hottestFunctions(3).map(\.function)
        #expect(top.contains("[Swift] burn") && top.contains("[Swift] Gadget:resize") && top.contains { $0.hasSuffix("(luaHot)") },
                "\(profile.report)")
        #expect(profile.svg.contains("[Swift] Gadget:resize"))
    }

    @Test func aBlockingSwiftCallIsNotHot() throws {
        let lua = try scriptingState()
        lua.register("wait") { (seconds: Double) in usleep(UInt32(seconds * 1e6)) }
        let profile = try lua.profile {
            try lua.run("""
                local function spin(n) local x = 0 for i = 1, n do x = x + i end return x end
                wait(0.5)
                spin(3e6)
                """)
        }
        let waited = samples(profile, leaf: "[Swift] wait")
        #expect(waited <= max(2, profile.sampleCount / 50), "\(profile.folded)")
        #expect(samples(profile, leaf: "(spin)") > 0, "\(profile.folded)")
    }

    @Test func coroutinesAndTasksMadeBeforeProfilingAreSampled() throws {
        let lua = try scriptingState()
        try lua.run("""
            function spin(n) local x = 0 for i = 1, n do x = x + i end return x end
            co = coroutine.create(function() coroutine.yield() spin(4e6) end)
            coroutine.resume(co)
            gate = false
            task = bk.async(function() while not gate do bk.sleep(0) end spin(4e6) end)
            """)
        let profile = try lua.profile {
            try lua.run("coroutine.resume(co) gate = true bk.await(task)")
        }
        #expect(profile.stacks.keys.contains { $0.hasPrefix("coroutine ") && $0.hasSuffix("(spin)") }, "\(profile.folded)")
        #expect(profile.stacks.keys.contains { $0.hasPrefix("task ") && $0.hasSuffix("(spin)") }, "\(profile.folded)")
    }

    @Test func workersAndPoolStatesJoinTheRunAndMayOutliveIt() throws {
        let lua = try scriptingState()
        let profile = try lua.profile {
            try lua.run("""
                local w = bk.worker(function() local x = 0 for i = 1, 5e6 do x = x + i end return x end)
                w:result()
                bk.parallelMap(bk.array({1, 2, 3, 4}), function(v) local x = 0 for i = 1, 2e6 do x = x + i end return x end)
                endless = bk.worker(function() while true do end end)
                """)
        }
        #expect(profile.stacks.keys.contains { $0.hasPrefix("worker;") }, "\(profile.folded)")
        #expect(profile.stacks.keys.contains { $0.hasPrefix("worker pool;") }, "\(profile.folded)")
        // The endless worker is still sampled by the finished run's sampler until it ends: it
        // must stop cleanly.
        try lua.run("endless:cancel() pcall(bk.await, endless)")
        // Long enough (~0.1 s of CPU) that a run's sampler cannot miss it: 1e6 iterations took a
        // few milliseconds and once gave no sample at all.
        let again = try lua.profile { try lua.run("local x = 0 for i = 1, 2e7 do x = x + i end") }
        #expect(again.sampleCount > 0)
    }

    @Test func aStateProfiledAlreadyGivesAnEmptyProfile() throws {
        let lua = try scriptingState()
        var inner: LuaProfile?
        // ~0.1 s of CPU, as above: a shorter loop could end before a loaded machine's sampler woke.
        let outer = try lua.profile {
            inner = try lua.profile { try lua.run("local x = 0 for i = 1, 2e7 do x = x + i end") }
        }
        #expect(inner?.sampleCount == 0)
        #expect(outer.sampleCount > 0)
    }

    @Test func theStateMayCloseWhileProfiled() throws {
        var lua: LuaState? = try scriptingState()
        _ = try lua?.profile {
            try lua?.run("bk.worker(function() local x = 0 for i = 1, 3e6 do x = x + i end end)")
            lua = nil  // closes the state (its workers finish first) inside the run
        }
        #expect(lua == nil)
    }

    @Test func foldedTextIsOneStackACountPerLine() throws {
        let profile = LuaProfile(rate: 1000, stacks: ["main;a.lua (main chunk);a.lua:2 (f)": 3, "main;a.lua (main chunk)": 1], samplesOutsideLua: 0)
        #expect(profile.folded == "main;a.lua (main chunk) 1\nmain;a.lua (main chunk);a.lua:2 (f) 3\n")
        #expect(profile.hottestFunctions(1) == [.init(function: "a.lua:2 (f)", selfSamples: 3, totalSamples: 3)])
        #expect(profile.svg.contains("data-total=\"4\""))
    }
}
