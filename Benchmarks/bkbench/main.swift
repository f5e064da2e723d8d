#if canImport(Glibc)
import Glibc
#endif
import BlocksBridge

// bkbench [filter] [--rounds N] [--quick]: each benchmark runs ours and its reference side by side.
var arguments = Array(CommandLine.arguments.dropFirst())
var rounds = 5
var quick = false
var filter: String?
while let argument = arguments.first {
    arguments.removeFirst()
    switch argument {
    case "--rounds": rounds = Int(arguments.first ?? "") ?? rounds; if !arguments.isEmpty { arguments.removeFirst() }
    case "--quick": quick = true
    default: filter = argument
    }
}
let scale = quick ? 10 : 1

do {
    let benchmarks: [Benchmark] = [
        try startUpBenchmark(runs: 200 / scale),
        try callOverheadBenchmark(calls: 10_000_000 / scale),
        try delayedBlocksBenchmark(count: 100_000 / scale),
        try scheduleCancelBenchmark(count: 1_000_000 / scale),
        try dynamicDelegateBenchmark(calls: 1_000_000 / scale),
        try observedWriteBenchmark(writes: 1_000_000 / scale),
        try unobservedWriteBenchmark(writes: 1_000_000 / scale),
        try typedRegisteredFunctionBenchmark(calls: 10_000_000 / scale),
        try typedCallBenchmark(calls: 1_000_000 / scale),
        try sleepingTasksBenchmark(count: 100_000 / scale),
        try awaitFinishedBenchmark(calls: 1_000_000 / scale),
    ] + (try collectionBenchmarks(count: 1_000_000 / scale))
        + (try toolboxBenchmarks(count: 1_000_000 / scale))
        + (try workerBenchmarks(elements: 64, trivialCount: 100_000, roundTrips: 20_000 / scale))
        + (try exportedClassBenchmarks(calls: 5_000_000 / scale))
        + (try debuggerBenchmarks(hits: 100_000 / scale))
        + (try profilerBenchmarks())
    try runBenchmarks(benchmarks, rounds: rounds, filter: filter)
} catch {
    print("bkbench: \(error)")
    exit(1)
}
