#if canImport(Glibc)
import Glibc
#endif
import BlocksBridge

/// The sampling profiler's cost on a CPU-bound script (function calls, a loop, table work):
/// profiled at the default rate (1000 samples per CPU second) against the same run unprofiled, in
/// one state. A second pair compares a state that never profiled with one that profiled before
/// (detached: no hook is left installed).
///
/// Times are this thread's CPU time, not wall-clock time: the profiler's cost is what it adds to
/// the profiled thread (its sampler thread wakes once per millisecond on another core, reported
/// apart), and on a loaded machine wall-clock time mostly measures the other processes.
func profilerBenchmarks() throws -> [Benchmark] {
    func cpuSeconds(_ body: () throws -> Void) rethrows -> Double {
        func now() -> Double {
            var ts = timespec()
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
            return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
        }
        let start = now()
        try body()
        return now() - start
    }
    let script = """
        local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end
        local function loop(n) local x = 0 for i = 1, n do x = x + i % 7 end return x end
        local function tables(n) local t = {} for i = 1, n do t[i] = { i } end return #t end
        fib(25) loop(3e6) tables(2e5)
        """
    let lua = try LuaState()
    let detached = try LuaState()
    let never = try LuaState()
    _ = try detached.profile { try detached.run("local x = 0 for i = 1, 1e5 do x = x + i end") }
    var samples: [Int] = []
    var outside: [Int] = []
    return [
        Benchmark(
            name: "profiler: default rate vs not profiled", target: 1.1,
            ours: {
                var elapsed = 0.0
                let profile = try lua.profile { elapsed = try cpuSeconds { try lua.run(script) } }
                samples.append(profile.sampleCount)
                outside.append(profile.samplesOutsideLua)
                return elapsed
            },
            reference: { try cpuSeconds { try lua.run(script) } },
            report: { ["samples per run: \(median(samples.map(Double.init))) (outside Lua: \(median(outside.map(Double.init))))"] }),
        Benchmark(
            name: "profiler: not attached (profiled before) vs never", target: 1.05,  // 1.0x: the same code runs; 5% is the noise of one run
            ours: { try cpuSeconds { try detached.run(script) } },
            reference: { try cpuSeconds { try never.run(script) } }),
    ]
}
