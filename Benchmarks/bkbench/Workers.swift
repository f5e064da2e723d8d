import BlocksBridge

/// bk.parallelMap against bk.map in one process: a CPU-bound block (about 1 ms of pure Lua per
/// element) over 64 elements with 2 workers (target: at least 1.7x faster, ratio <= 0.59), the same
/// with 1 and 4 workers (scaling, reported), a trivial block over 1e5 elements (the overhead; the
/// cut-over keeps it within 2x), and the channel round trip main <-> worker in messages per second.
func workerBenchmarks(elements: Int, trivialCount: Int, roundTrips: Int) throws -> [Benchmark] {
    let state = try LuaState()
    try state.run("""
        bk = require "bk"
        -- Calibrate the CPU-bound block to about 1 ms per element.
        local function spin(n, x) local s = 0 for i = 1, n do s = s + (i * x) % 7 end return s end
        local n = 10000
        while true do
          local took = math.huge
          for _ = 1, 5 do  -- the fastest of five: other processes only ever slow a run down
            local start = bk.now()
            spin(n, 1)
            took = math.min(took, bk.now() - start)
          end
          if took >= 0.0005 then n = math.floor(n * 0.001 / took) break end
          n = n * 2
        end
        local loops = n
        cpu = function(x) local s = 0 for i = 1, loops do s = s + (i * x) % 7 end return s end
        identity = function(x) return x end
        input = {}
        for i = 1, \(elements) do input[i] = i end
        big = {}
        for i = 1, \(trivialCount) do big[i] = i end
        assert(bk.parallelMap(input, cpu)[\(elements)] == bk.map(input, cpu)[\(elements)])
        requests, replies = bk.channel(), bk.channel()
        echo = bk.worker(function(inbox, outbox)
          while true do
            local v = inbox:receive()
            if v == nil then return end
            outbox:send(v)
          end
        end, requests, replies)
        roundTrips = function(n) for i = 1, n do requests:send(i) assert(replies:receive() == i) end end
        local local_ = bk.channel()
        sameState = function(n) for i = 1, n do local_:send(i) assert(local_:receive() == i) end end
        """)
    func time(_ code: String) throws -> Double {
        try state.run("collectgarbage()")
        return try seconds { try state.run(code) }
    }
    func parallel(_ workers: Int) -> () throws -> Double {
        { try time("bk.setWorkerCount(\(workers)) bk.parallelMap(input, cpu)") }
    }
    let map: () throws -> Double = { try time("bk.map(input, cpu)") }
    var roundTripSeconds: [Double] = []
    return [
        Benchmark(name: "parallelMap/map, \(elements) x 1 ms, 2 workers", target: 1 / 1.7,
                  ours: parallel(2), reference: map),
        Benchmark(name: "parallelMap/map, \(elements) x 1 ms, 1 worker", target: nil,
                  ours: parallel(1), reference: map),
        Benchmark(name: "parallelMap/map, \(elements) x 1 ms, 4 workers", target: nil,
                  ours: parallel(4), reference: map),
        Benchmark(name: "parallelMap/map, trivial block, \(trivialCount / 1000)k", target: 2,
                  ours: { try time("bk.setWorkerCount(2) bk.parallelMap(big, identity)") },
                  reference: { try time("bk.map(big, identity)") }),
        Benchmark(name: "channel round trip main<->worker / same state", target: nil,
                  ours: {
                      let s = try time("roundTrips(\(roundTrips))")
                      roundTripSeconds.append(s)
                      return s
                  },
                  reference: { try time("sameState(\(roundTrips))") },
                  report: {
                      let best = roundTripSeconds.min() ?? 1
                      return ["main <-> worker: \(Int(Double(roundTrips) / best)) round trips/s "
                              + "(\(Int(2 * Double(roundTrips) / best)) messages/s)"]
                  }),
    ]
}
