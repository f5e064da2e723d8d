#if canImport(Glibc)
import Glibc
#endif
import BlocksBridge

// Tasks: many tasks sleeping on the loop against luv timers driving coroutines (stock lua5.4, a
// subprocess timing itself), and the cost of awaiting a finished task against a plain call.

/// `count` tasks each sleeping a random 0-10 ms, run to idle; returns elapsed seconds.
private func oursSleepingTasks(_ count: Int) -> String {
    """
    local count = \(count)
    math.randomseed(42)
    local async, sleep, random, now = bk.async, bk.sleep, math.random, bk.now
    local t0 = now()
    local function body(ms) sleep(ms / 1000) end
    for _ = 1, count do async(body, random(0, 10)) end
    bk.run()
    return now() - t0
    """
}

private let luvSleepingTasks = """
    local uv = require "luv"
    local count = tonumber(arg[1])
    math.randomseed(42)
    local random, yield, running, resume = math.random, coroutine.yield, coroutine.running, coroutine.resume
    local t0 = uv.hrtime()
    local function sleep(ms)
      local co = running()
      local timer = uv.new_timer()
      timer:start(ms, 0, function() timer:close() resume(co) end)
      yield()
    end
    local function body(ms) sleep(ms) end
    for _ = 1, count do
      local co = coroutine.create(body)
      resume(co, random(0, 10))
    end
    uv.run()
    print((uv.hrtime() - t0) / 1e9)
    """

/// 100k tasks sleeping 0-10 ms vs luv timers + coroutines; reports memory per suspended task.
func sleepingTasksBenchmark(count: Int) throws -> Benchmark {
    let state = try LuaState()
    state.installGlobals()
    try state.run("collectgarbage('generational')")  // as bklua runs scripts
    return Benchmark(
        name: "\(count / 1000)k tasks sleeping 0-10 ms vs luv", target: 1.2,
        ours: {
            let values = try state.run(oursSleepingTasks(count), name: "=bench")
            try state.run("collectgarbage()")
            return Double(values.first?.description ?? "") ?? 0
        },
        reference: {
            try runStockLua(luvSleepingTasks, argument: count).first ?? 0
        },
        report: {
            // Bytes per suspended task beyond its coroutine: 10k tasks asleep, against 10k bare
            // coroutines suspended at a yield (the same function, the same depth).
            let numbers = try state.run("""
                local n = 10000
                collectgarbage() collectgarbage()
                local base = collectgarbage("count")
                local cos = {}
                local function body() coroutine.yield() end
                for i = 1, n do cos[i] = coroutine.create(body) coroutine.resume(cos[i]) end
                collectgarbage() collectgarbage()
                local bare = (collectgarbage("count") - base) * 1024 / n
                cos = nil
                collectgarbage() collectgarbage()
                base = collectgarbage("count")
                local tasks = {}
                local function sleeper() bk.sleep(100) end
                for i = 1, n do tasks[i] = bk.async(sleeper) end
                collectgarbage() collectgarbage()
                local each = (collectgarbage("count") - base) * 1024 / n
                for i = 1, n do tasks[i]:cancel() end
                return bare, each
                """).compactMap { Double($0.description) }
            guard numbers.count == 2 else { return [] }
            return [
                "memory per suspended task: \(Int(numbers[1])) bytes of Lua heap (a bare suspended coroutine: \(Int(numbers[0])));"
                    + " beyond the coroutine \(Int(numbers[1] - numbers[0])) bytes (goal <= 1024), plus the sleep's Swift handle",
            ]
        })
}

/// bk.await of a finished task against a plain function call.
func awaitFinishedBenchmark(calls: Int) throws -> Benchmark {
    let state = try LuaState()
    state.installGlobals()
    return Benchmark(
        name: "await finished task vs call (\(calls / 1_000_000)M)", target: nil,
        ours: {
            try seconds {
                try state.run("""
                    local await, t = bk.await, bk.async(function() return 1 end)
                    local x
                    for _ = 1, \(calls) do x = await(t) end
                    """)
            }
        },
        reference: {
            try seconds {
                try state.run("""
                    local f = function() return 1 end
                    local x
                    for _ = 1, \(calls) do x = f() end
                    """)
            }
        })
}
