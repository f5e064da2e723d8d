import BlocksBridge

/// The collection toolbox against Penlight's nearest equivalent, each over `count` elements in one
/// state, sides alternating (target: faster than Penlight, so at most 1.0x). Penlight's side is
/// what a Penlight user writes: `List:sorted(cmp)` (sortedBy: with a comparator of keys),
/// `List:partition(f)` (its groupBy), `tablex.keys` / `values` / `zip` / `sub` / `find` /
/// `reduce`, `array2d.flatten`, `seq.unique` (which also sorts) and `pl.Set`'s operators on sets
/// built from the same lists. (map, select, reduce and each: Collections.swift.)
func toolboxBenchmarks(count: Int) throws -> [Benchmark] {
    let state = try LuaState()
    try state.run("""
        bk = require "bk"
        local tablex, List, Set = require "pl.tablex", require "pl.List", require "pl.Set"
        local array2d, seq = require "pl.array2d", require "pl.seq"
        local n = \(count)
        local t, shuffled, d, nested, other = {}, {}, {}, {}, {}
        for i = 1, n do t[i] = i end
        for i = 1, n do shuffled[i] = (i * 7919) % n end
        for i = 1, n do d["k" .. i] = i end
        for i = 1, n // 2 do nested[i] = { i, i } end
        for i = 1, n do other[i] = i + n // 2 end
        -- List(x) gives x itself the List metatable: the Lists are copies, so bk reads plain tables
        -- (a table with a foreign metatable is copied raw first).
        local function copy(a) local c = {} for i = 1, #a do c[i] = a[i] end return c end
        local list, shuffledList = List(copy(t)), List(copy(shuffled))
        local less = function(a, b) return a < b end
        local key = function(x) return -x end
        local byKey = function(a, b) return key(a) < key(b) end
        local half = n // 2
        local bucket = function(x) return x % 100 end
        local add = function(a, x) return a + x end
        local min, max = math.min, math.max
        toolbox = {
          sorted = { function() return bk.sorted(shuffled, less) end,
                     function() return shuffledList:sorted(less) end, "List:sorted(cmp)" },
          sortedBy = { function() return bk.sortedBy(shuffled, key) end,
                       function() return shuffledList:sorted(byKey) end, "List:sorted(key cmp)" },
          groupBy = { function() return bk.groupBy(t, bucket) end,
                      function() return list:partition(bucket) end, "List:partition" },
          keys = { function() return bk.keys(d) end, function() return tablex.keys(d) end, "tablex.keys" },
          values = { function() return bk.values(d) end, function() return tablex.values(d) end, "tablex.values" },
          zip = { function() return bk.zip(t, t) end, function() return tablex.zip(t, t) end, "tablex.zip" },
          flatten = { function() return bk.flatten(nested) end,
                      function() return array2d.flatten(nested) end, "array2d.flatten" },
          slice = { function() return bk.slice(t, 2, -2) end,
                    function() return tablex.sub(t, 2, -2) end, "tablex.sub" },
          take = { function() return bk.take(t, half) end,
                   function() return tablex.sub(t, 1, half) end, "tablex.sub(t, 1, k)" },
          indexOf = { function() return bk.indexOf(t, half) end,
                      function() return tablex.find(t, half) end, "tablex.find" },
          sum = { function() return bk.sum(t) end, function() return tablex.reduce("+", t) end,
                  "tablex.reduce('+')" },
          sumBlock = { function() return bk.reduce(t, 0, add) end, function() return tablex.reduce(add, t, 0) end,
                       "tablex.reduce(f)" },
          min = { function() return bk.min(t) end, function() return tablex.reduce(min, t) end,
                  "tablex.reduce(math.min)" },
          max = { function() return bk.max(t) end, function() return tablex.reduce(max, t) end,
                  "tablex.reduce(math.max)" },
          minmax = { function() return bk.min(t), bk.max(t) end, function() return list:minmax() end,
                     "List:minmax" },
          uniq = { function() return bk.uniq(shuffled) end, function() return seq.unique(shuffled, true) end,
                   "seq.unique" },
          union = { function() return bk.union(t, other) end, function() return Set(t) + Set(other) end,
                    "Set + Set" },
          intersection = { function() return bk.intersection(t, other) end,
                           function() return Set(t) * Set(other) end, "Set * Set" },
          difference = { function() return bk.difference(t, other) end,
                         function() return Set(t) - Set(other) end, "Set - Set" },
          symmetricDifference = { function() return bk.symmetricDifference(t, other) end,
                                  function() return Set(t) ^ Set(other) end, "Set ^ Set" },
        }
        -- The sides must agree before anything is timed.
        assert(bk.sorted(shuffled, less)[n] == shuffledList:sorted(less)[n])
        assert(#bk.flatten(nested) == #array2d.flatten(nested))
        assert(bk.sum(t) == tablex.reduce("+", t) and bk.min(t) == 1 and bk.max(t) == n)
        assert(#bk.union(t, other) == #Set.values(Set(t) + Set(other)))
        assert(#bk.slice(t, 2, -2) == #tablex.sub(t, 2, -2))
        assert(#bk.take(t, half) == #tablex.sub(t, 1, half) and bk.indexOf(t, half) == tablex.find(t, half))
        assert(bk.sortedBy(shuffled, key)[1] == shuffledList:sorted(byKey)[1])
        assert(#bk.symmetricDifference(t, other) == #Set.values(Set(t) ^ Set(other)))
        """)
    func time(_ helper: String, _ side: Int) throws -> Double {
        try state.run("collectgarbage()")
        return try seconds { try state.run("toolbox.\(helper)[\(side)]()") }
    }
    let scale = count >= 1_000_000 ? "\(count / 1_000_000)M" : "\(count / 1000)k"
    let penlight = try state.run("""
        local names = {}
        for name, case in pairs(toolbox) do names[#names + 1] = name .. "=" .. case[3] end
        table.sort(names)
        return table.concat(names, ";")
        """, as: String.self)
    return penlight.split(separator: ";").compactMap { entry -> Benchmark? in
        let parts = entry.split(separator: "=", maxSplits: 1).map(String.init)
        guard parts.count == 2 else { return nil }
        let helper = parts[0]
        let name = helper == "sumBlock" ? "bk.reduce(+)" : helper == "minmax" ? "bk.min+max" : "bk.\(helper)"
        return Benchmark(name: "\(name) vs \(parts[1]) (\(scale))", target: 1.0,
                         ours: { try time(helper, 1) }, reference: { try time(helper, 2) })
    }
}
