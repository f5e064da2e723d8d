#if canImport(Glibc)
import Glibc
#endif
import BlocksBridge

// The event loop against libuv (luv in stock lua5.4, run as a subprocess with the same workload).
// Each side times itself from inside its own Lua script, so process start-up is not counted.

/// Our side: `count` blocks with random delays in [0, 50 ms] (whole milliseconds, as luv takes),
/// every other one cancelled at once, run to idle. Returns "elapsed fired p50 p99" (seconds) as the
/// luv script prints them. Lateness is counted from the due time, or from the moment the loop
/// starts when the block fell due while the script was still scheduling: it measures the loop.
private let oursDelayedBlocks = """
    local count = ...
    math.randomseed(42)
    local now, performBlock = bk.now, bk.performBlock
    local late, fired, start = {}, 0, math.huge
    local t0 = now()
    for i = 1, count do
      local delay = math.floor(math.random() * 50 + 0.5) / 1000
      local at = now() + delay
      local h = performBlock(function() fired = fired + 1; late[fired] = now() - math.max(at, start) end, delay)
      if i % 2 == 0 then h:cancel() end
    end
    start = now()
    bk.run()
    local elapsed = now() - t0
    table.sort(late)
    return elapsed, fired, late[math.max(1, fired // 2)], late[math.max(1, math.ceil(fired * 0.99))]
    """

private let luvDelayedBlocks = """
    local uv = require "luv"
    local count = tonumber(arg[1])
    math.randomseed(42)
    local hrtime = uv.hrtime
    local late, fired, start = {}, 0, math.huge
    local t0 = hrtime()
    for i = 1, count do
      local ms = math.floor(math.random() * 50 + 0.5)
      local at = hrtime() + ms * 1e6
      local t = uv.new_timer()
      t:start(ms, 0, function() fired = fired + 1; late[fired] = (hrtime() - math.max(at, start)) / 1e9; t:close() end)
      if i % 2 == 0 then t:stop(); t:close() end
    end
    start = hrtime()
    uv.run()
    local elapsed = (hrtime() - t0) / 1e9
    table.sort(late)
    print(elapsed, fired, late[math.max(1, fired // 2)], late[math.max(1, math.ceil(fired * 0.99))])
    """

/// 1M schedule + cancel: our side returns elapsed; the luv side prints "elapsed rssBefore rssAfter".
private let oursScheduleCancel = """
    local count = ...
    local f = function() end
    local performBlock, now = bk.performBlock, bk.now
    local t0 = now()
    for i = 1, count do performBlock(f, 10):cancel() end
    bk.run(0)
    local elapsed = now() - t0
    collectgarbage() collectgarbage()
    return elapsed
    """

private let luvScheduleCancel = """
    local uv = require "luv"
    local count = tonumber(arg[1])
    local function rss()
      for line in io.lines("/proc/self/status") do
        local kb = line:match("^VmRSS:%s+(%d+)") if kb then return tonumber(kb) end
      end
    end
    local f = function() end
    collectgarbage()
    local before = rss()
    local t0 = uv.hrtime()
    for i = 1, count do local t = uv.new_timer() t:start(10000, 0, f) t:stop() t:close() end
    uv.run()
    local elapsed = (uv.hrtime() - t0) / 1e9
    collectgarbage() collectgarbage()
    print(elapsed, before, rss())
    """

/// Resident set size of this process in KiB.
func residentKilobytes() -> Int {
    guard let file = fopen("/proc/self/status", "r") else { return 0 }
    defer { fclose(file) }
    var line = [CChar](repeating: 0, count: 256)
    while fgets(&line, Int32(line.count), file) != nil {
        let text = String(decoding: line.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if text.hasPrefix("VmRSS:") {
            return Int(text.dropFirst(6).filter { $0.isNumber }) ?? 0
        }
    }
    return 0
}

/// Runs `script` in stock lua5.4 with `argument`; returns the numbers it printed.
func runStockLua(_ script: String, argument: Int) throws -> [Double] {
    let path = "/tmp/bkbench-\(getpid())-luv.lua"
    guard let file = fopen(path, "w") else { throw BenchmarkError("cannot write \(path)") }
    fputs(script, file)
    fclose(file)
    defer { unlink(path) }
    guard let pipe = popen("lua5.4 \(path) \(argument) 2>&1", "r") else { throw BenchmarkError("cannot run lua5.4") }
    var output = ""
    var buffer = [CChar](repeating: 0, count: 4096)
    while fgets(&buffer, Int32(buffer.count), pipe) != nil {
        output += String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
    let status = pclose(pipe)
    let numbers = output.split(whereSeparator: { $0 == "\t" || $0 == "\n" }).compactMap { Double($0) }
    guard status == 0, !numbers.isEmpty else { throw BenchmarkError("lua5.4 (luv) failed: \(output)") }
    return numbers
}

struct BenchmarkError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

private final class LatencyLog {
    var ours: [(p50: Double, p99: Double, fired: Double)] = []
    var luv: [(p50: Double, p99: Double, fired: Double)] = []
}

private func milliseconds(_ seconds: Double) -> String { format(seconds * 1000, 3) + " ms" }

/// 100k delayed blocks with random delays, half cancelled, run to idle: ours vs luv.
func delayedBlocksBenchmark(count: Int) throws -> Benchmark {
    let state = try LuaState()
    state.installGlobals()
    try state.run("collectgarbage('generational')")  // as bklua runs scripts
    let log = LatencyLog()
    return Benchmark(
        name: "performBlock \(count / 1000)k, half cancelled vs luv", target: 1.0,
        ours: {
            let values = try state.run(oursDelayedBlocks.replacingFirstLine(count: count), name: "=bench")
            let numbers = values.compactMap { Double($0.description) }
            guard numbers.count == 4 else { throw BenchmarkError("bad result \(values)") }
            log.ours.append((numbers[2], numbers[3], numbers[1]))
            try state.run("collectgarbage()")
            return numbers[0]
        },
        reference: {
            let numbers = try runStockLua(luvDelayedBlocks, argument: count)
            guard numbers.count == 4 else { throw BenchmarkError("bad luv result \(numbers)") }
            log.luv.append((numbers[2], numbers[3], numbers[1]))
            return numbers[0]
        },
        report: {
            // Precision: few enough blocks that the script has scheduled them all long before the
            // first is due, so lateness is the loop's alone.
            let precise = try state.run(oursDelayedBlocks.replacingFirstLine(count: 1000), name: "=bench")
                .compactMap { Double($0.description) }
            let preciseLuv = try runStockLua(luvDelayedBlocks, argument: 1000)
            let ours = log.ours.map(\.p99).sorted()
            let luv = log.luv.map(\.p99).sorted()
            guard let o = log.ours.last, let l = log.luv.last else { return [] }
            return [
                "lateness ours p50 \(milliseconds(median(log.ours.map(\.p50)))), p99 \(milliseconds(median(ours))) (target p99 <= 2 ms), fired \(Int(o.fired))",
                "lateness luv  p50 \(milliseconds(median(log.luv.map(\.p50)))), p99 \(milliseconds(median(luv))), fired \(Int(l.fired)) (libuv times from a cached loop time: it can fire early)",
                "  (with 100k blocks most fall due while the script is still scheduling: this is mostly drain time)",
                "1k blocks, lateness ours p50 \(milliseconds(precise[safe: 2])), p99 \(milliseconds(precise[safe: 3])) (target p99 <= 2 ms); luv p50 \(milliseconds(preciseLuv[safe: 2])), p99 \(milliseconds(preciseLuv[safe: 3]))",
            ]
        })
}

/// 1M performBlock + cancel: throughput vs luv's new_timer/start/stop/close, and RSS before/after.
func scheduleCancelBenchmark(count: Int) throws -> Benchmark {
    let state = try LuaState()
    state.installGlobals()
    // bklua's collector. (In the incremental one, handles' finalizers run a few per GC step, so a
    // burst of millions raises the heap until the collector catches up: reported below.)
    try state.run("collectgarbage('generational')")
    var rss: [(before: Int, after: Int)] = []
    var luvRSS: [(before: Double, after: Double)] = []
    return Benchmark(
        name: "\(count / 1000)k schedule+cancel vs luv", target: nil,
        ours: {
            try state.run("collectgarbage()")
            let before = residentKilobytes()
            let values = try state.run(oursScheduleCancel.replacingFirstLine(count: count), name: "=bench")
            rss.append((before, residentKilobytes()))
            return Double(values.first?.description ?? "") ?? 0
        },
        reference: {
            let numbers = try runStockLua(luvScheduleCancel, argument: count)
            guard numbers.count == 3 else { throw BenchmarkError("bad luv result \(numbers)") }
            luvRSS.append((numbers[1], numbers[2]))
            return numbers[0]
        },
        report: {
            guard let first = rss.first, let last = rss.last, let luv = luvRSS.last else { return [] }
            let incremental = try LuaState()
            incremental.installGlobals()
            let peak = try incremental.run("""
                local f, peak = function() end, 0
                for i = 1, \(count) do
                  bk.performBlock(f, 10):cancel()
                  if i % 1000 == 0 then peak = math.max(peak, collectgarbage('count')) end
                end
                collectgarbage() collectgarbage()
                return peak, collectgarbage('count')
                """).compactMap { Double($0.description) }
            return [
                "RSS ours: \(first.before) KiB before the first round, \(first.after) after it, \(last.after) after round \(rss.count) (target: flat)",
                "RSS luv:  \(Int(luv.before)) KiB before, \(Int(luv.after)) KiB after (its own process)",
                "Lua heap after the rounds: \(state.memoryInUse / 1024) KiB, pending \(state.eventLoop.pendingCount)",
                "incremental collector: Lua heap peak \(Int(peak.first ?? 0)) KiB during one run, \(Int(peak.last ?? 0)) KiB after a full collection",
            ]
        })
}

private extension String {
    /// The script with its `local count = ...` line bound to `count`.
    func replacingFirstLine(count: Int) -> String {
        var lines = split(separator: "\n", omittingEmptySubsequences: false)
        if !lines.isEmpty { lines[0] = Substring("local count = \(count)") }
        return lines.joined(separator: "\n")
    }
}

private extension Array where Element == Double {
    subscript(safe index: Int) -> Double { index < count ? self[index] : .nan }
}
