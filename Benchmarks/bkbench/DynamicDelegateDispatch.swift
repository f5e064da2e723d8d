import BlocksBridge

/// A call through a dynamic delegate to its block (`dd:method(x)`) vs the same Lua function called
/// body called directly as a method of a plain object (`obj:method(x)`), `calls` times each.
func dynamicDelegateBenchmark(calls: Int) throws -> Benchmark {
    let state = try LuaState()
    try state.run("""
        local bk = require "bk"
        local P = bk.protocol("BenchDelegate", { tableViewHeightForRowAtIndexPath = {} })
        dd = bk.dynamicDelegateForProtocol({}, P)
        dd:implementMethod("tableView:heightForRowAtIndexPath:", function(row) return row end)
        direct = { tableViewHeightForRowAtIndexPath = function(self, row) return row end }
        function loop(o, n)
          local sum = 0
          for i = 1, n do sum = sum + o:tableViewHeightForRowAtIndexPath(i) end
          assert(sum == n * (n + 1) // 2)
        end
        """)
    func time(_ object: String) throws -> Double {
        try seconds { try state.run("loop(\(object), \(calls))") }
    }
    return Benchmark(name: "delegate: dd:method vs obj:method (\(calls / 1_000_000)M)", target: 2.0,
                     ours: { try time("dd") }, reference: { try time("direct") })
}
