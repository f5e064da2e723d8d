-- A dictionary answers only its own keys and bk's `bk_NAME` methods: a missing key is nil, even one
-- named like a helper (`d.each`, `counts["map"]`), while arrays, sets, ordered sets and index sets
-- keep the short method names (`a:map(f)`).
-- Runs under bklua and under stock lua5.4 loading bk.so.

local bk = require "bk"

local HELPERS = { "each", "apply", "parallelMap", "match", "select", "reject", "map", "reduce", "reduceInteger",
                  "reduceFloat", "any", "none", "all", "corresponds", "performSelect", "performReject",
                  "performMap", "count", "add", "remove", "contains" }

test("dictionary results answer missing keys with nil, even helper names", function()
  local counts = { apple = 3, pear = 1, plum = 5 }
  local common = bk.select(counts, function(_, n) return n > 1 end)
  eq(bk.kind(common), "dictionary")
  eq(common.each, nil)
  eq(common.map, nil)
  eq(common.count, nil)
  eq(common.apple, 3)
  for _, name in ipairs(HELPERS) do
    eq(common[name], nil, name)
    eq(bk.dictionary()[name], nil, name)
    eq(bk.map(counts, function(_, v) return v end)[name], nil, name)
  end
end)

test("word counts keyed by helper names work as plain tables do", function()
  local counts = bk.dictionary()
  for w in ("map the map each select each map"):gmatch("%a+") do
    if counts[w] then counts[w] = counts[w] + 1 else counts[w] = 1 end
  end
  eq(counts.map, 3)
  eq(counts.each, 2)
  eq(counts.select, 1)
  eq(counts.the, 1)
  eq(counts.reduce, nil)
end)

test("a dictionary's helpers are bk.NAME(d, ...) and d:bk_NAME(...)", function()
  local d = bk.dictionary({ a = 1, b = 2 })
  eq(type(d.bk_map), "function")
  eq(d.bk_map, bk.map)
  eq(d:bk_map(function(_, v) return v * 10 end).b, 20)
  eq(d:bk_count(), 2)
  eq(d:bk_reduce(0, function(acc, _, v) return acc + v end), 3)
  eq(bk.map(d, function(_, v) return v + 1 end).a, 2)
end)

test("arrays, sets, ordered sets and index sets keep the short names", function()
  local a = bk.array({ 1, 2, 3 })
  eq(a.map, bk.map)
  eq(table.concat(a:map(function(x) return x * 2 end), ","), "2,4,6")
  eq(a:count(), 3)
  local s = bk.set({ 1, 2 })
  ok(s:contains(2))
  eq(bk.orderedSet({ 1 }).each, bk.each)
  eq(bk.indexSet({ 1 }).select, bk.select)
end)
