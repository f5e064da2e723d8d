import BlocksBridge

/// bk.map / bk.select / bk.reduce / bk.each over `count` integers, each against (a) a hand-written
/// Lua loop calling the same Lua function (target: at most 1.3x) and (b) Penlight's equivalent
/// (`tablex.map`, `List:filter`, `tablex.reduce`, `tablex.foreach`; target: faster, so below 1.0x).
func collectionBenchmarks(count: Int) throws -> [Benchmark] {
    let state = try LuaState()
    try state.run("""
        bk = require "bk"
        tablex = require "pl.tablex"
        List = require "pl.List"
        local n = \(count)
        t = {}
        for i = 1, n do t[i] = i end
        list = List({ table.unpack({}) })  -- a List over its own copy of t
        for i = 1, n do list[i] = i end
        inc = function(x) return x + 1 end
        even = function(x) return x % 2 == 0 end
        add = function(a, x) return a + x end
        touch = function(x) return x end
        -- Every side reads t and its function through locals (upvalues), as a hand-written loop would.
        local t, list, inc, even, add, touch, bk, tablex = t, list, inc, even, add, touch, bk, tablex
        cases = {
          map = {
            bk = function() return bk.map(t, inc) end,
            loop = function() local r = {} for i = 1, #t do r[i] = inc(t[i]) end return r end,
            penlight = function() return tablex.map(inc, t) end,
          },
          select = {
            bk = function() return bk.select(t, even) end,
            loop = function()
              local r, k = {}, 0
              for i = 1, #t do local v = t[i] if even(v) then k = k + 1 r[k] = v end end
              return r
            end,
            penlight = function() return list:filter(even) end,
          },
          reduce = {
            bk = function() return bk.reduce(t, 0, add) end,
            loop = function() local a = 0 for i = 1, #t do a = add(a, t[i]) end return a end,
            penlight = function() return tablex.reduce(add, t, 0) end,
          },
          each = {
            bk = function() bk.each(t, touch) end,
            loop = function() for i = 1, #t do touch(t[i]) end end,
            penlight = function() tablex.foreach(t, touch) end,
            -- The floor of any helper that protects each block call: Lua's own pcall per element.
            pcall = function() local pcall = pcall for i = 1, #t do pcall(touch, t[i]) end end,
          },
        }
        -- The sides must agree before anything is timed.
        assert(#cases.map.bk() == n and cases.map.bk()[n] == cases.map.penlight()[n])
        assert(#cases.select.bk() == #cases.select.penlight())
        assert(cases.reduce.bk() == cases.reduce.loop() and cases.reduce.bk() == cases.reduce.penlight())
        """)
    func time(_ helper: String, _ side: String) throws -> Double {
        try state.run("collectgarbage()")
        return try seconds { try state.run("cases.\(helper).\(side)()") }
    }
    let millions = count >= 1_000_000 ? "\(count / 1_000_000)M" : "\(count / 1000)k"
    var benchmarks: [Benchmark] = []
    for helper in ["map", "select", "reduce", "each"] {
        benchmarks.append(Benchmark(name: "bk.\(helper) vs Lua loop (\(millions))", target: 1.3,
                                    ours: { try time(helper, "bk") }, reference: { try time(helper, "loop") }))
        let penlight = ["map": "tablex.map", "select": "List:filter", "reduce": "tablex.reduce",
                        "each": "tablex.foreach"][helper] ?? helper
        benchmarks.append(Benchmark(name: "bk.\(helper) vs \(penlight) (\(millions))", target: 1.0,
                                    ours: { try time(helper, "bk") }, reference: { try time(helper, "penlight") }))
    }
    // Context, no target: a protected call per element (which the boundary rules require of a
    // helper written in Swift) costs this much in plain Lua too.
    benchmarks.append(Benchmark(name: "bk.each vs Lua loop of pcall (\(millions))", target: nil,
                                ours: { try time("each", "bk") }, reference: { try time("each", "pcall") }))
    return benchmarks
}
