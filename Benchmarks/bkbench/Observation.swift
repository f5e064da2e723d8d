import BlocksBridge

/// A state with an observed table (one trivial observer on `value`) and a plain twin.
private func observationState() throws -> LuaState {
    let state = try LuaState()
    try state.run("""
        local bk = require "bk"
        local function task() end
        observed = { value = 0, other = 0 }
        bk.addObserverForKeyPath(observed, "value", task)
        plain = { value = 0, other = 0 }
        function observedWrites(n) local t = observed for i = 1, n do t.value = i end end
        function plainWritesAndCalls(n) local t, f = plain, task for i = 1, n do t.value = i f(t) end end
        -- The least an observer isolated from the writer costs: the write, then the task in a
        -- protected call.
        function plainWritesAndProtectedCalls(n)
          local t, f, pcall = plain, task, pcall
          for i = 1, n do t.value = i pcall(f, t) end
        end
        function unobservedFieldWrites(n) local t = observed for i = 1, n do t.other = i end end
        function plainWrites(n) local t = plain for i = 1, n do t.other = i end end
        -- The floor for any metamethod-based observation that isolates task errors: a bare
        -- __newindex storing the value and calling the task in a protected call.
        local store, traceback = {}, debug.traceback
        local floor = setmetatable({}, { __index = store, __newindex = function(t, k, v)
          store[k] = v
          xpcall(task, traceback, t)
        end })
        function floorWrites(n) local t = floor for i = 1, n do t.value = i end end
        """)
    return state
}

/// A write to an observed field with one trivial observer vs the least an observer isolated from
/// the writer costs: a plain write, then the same function in a protected call. Reported beside
/// it: the same against a plain write and a direct call (a hand-written "setter that notifies",
/// which an error in the observer would break), and a bare Lua `__newindex` with an `xpcall`.
func observedWriteBenchmark(writes: Int) throws -> Benchmark {
    let state = try observationState()
    return Benchmark(name: "observe: observed write vs write+pcall (\(writes / 1_000_000)M)", target: 1.5,
                     ours: { try seconds { try state.run("observedWrites(\(writes))") } },
                     reference: { try seconds { try state.run("plainWritesAndProtectedCalls(\(writes))") } },
                     report: {
                         let ours = try seconds { try state.run("observedWrites(\(writes))") }
                         let floor = try seconds { try state.run("floorWrites(\(writes))") }
                         let direct = try seconds { try state.run("plainWritesAndCalls(\(writes))") }
                         return ["observed write vs write+call: \(format(ours / direct, 2))x; "
                                 + "a bare Lua __newindex + xpcall vs write+pcall: "
                                 + "\(format(floor / (try seconds { try state.run("plainWritesAndProtectedCalls(\(writes))") }), 2))x"]
                     })
}

/// A write to an unobserved field of a table that has an observation on another key vs a plain
/// write to a table without observations.
func unobservedWriteBenchmark(writes: Int) throws -> Benchmark {
    let state = try observationState()
    return Benchmark(name: "observe: unobserved field vs plain (\(writes / 1_000_000)M)", target: 1.5,
                     ours: { try seconds { try state.run("unobservedFieldWrites(\(writes))") } },
                     reference: { try seconds { try state.run("plainWrites(\(writes))") } })
}
