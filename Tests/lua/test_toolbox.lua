-- The collection toolbox (sorted, groupBy, sum, union, ...): every helper on every kind, blocks that
-- suspend or raise any value, and hostile inputs. Runs in bklua and in stock lua5.4 with bk.so.

local NAMES = {
  "sorted", "sortedBy", "reversed", "groupBy", "countBy", "partition", "uniq", "keys", "values", "zip",
  "flatten", "flatMap", "compactMap", "slice", "take", "drop", "takeWhile", "dropWhile", "chunked",
  "first", "last", "indexOf", "sum", "min", "max", "count", "union", "intersection", "difference",
  "symmetricDifference", "isSubset", "isSuperset", "isDisjoint",
}

-- The list kinds built from the same elements.
local function listKinds(list)
  return {
    array = bk.array({ table.unpack(list) }),
    plain = { table.unpack(list) },
    set = bk.set(list),
    orderedSet = bk.orderedSet(list),
  }
end

local function plain(t)  -- a copy without metatable, for deepEq
  local copy = {}
  for k, v in pairs(t) do copy[k] = v end
  return copy
end

test("every helper is bk.NAME, the global bk_NAME and a method of every kind", function()
  local kinds = { bk.array({ 1 }), bk.set({ 1 }), bk.orderedSet({ 1 }), bk.indexSet({ 1 }) }
  for _, name in ipairs(NAMES) do
    eq(type(bk[name]), "function", name)
    ok(rawequal(_G["bk_" .. name], bk[name]), "bk_" .. name)
    for _, c in ipairs(kinds) do
      ok(rawequal(c[name], bk[name]), bk.kind(c) .. ":" .. name)
      ok(rawequal(c["bk_" .. name], bk[name]), bk.kind(c) .. ":bk_" .. name)
    end
    ok(rawequal(bk.dictionary({ a = 1 })["bk_" .. name], bk[name]), "dictionary:bk_" .. name)
    eq(bk.dictionary({ a = 1 })[name], nil, "a dictionary answers only its own keys: " .. name)
  end
end)

test("sorted is stable and takes a comparator", function()
  deepEq(plain(bk.sorted({ 3, 1, 2 })), { 1, 2, 3 })
  eq(getmetatable(bk.sorted({ 3, 1 })), getmetatable(bk.array()))
  local people = {}
  for i = 1, 100 do people[i] = { age = i % 7, id = i } end
  local byAge = bk.sorted(people, function(a, b) return a.age < b.age end)
  for i = 2, 100 do
    local a, b = byAge[i - 1], byAge[i]
    ok(a.age < b.age or (a.age == b.age and a.id < b.id), "stable at " .. i)
  end
  -- 1 and 1.0 are equal under `<` but distinct: their order is kept.
  local mixed = bk.sorted({ 2, 1.0, 1, 0 })
  eq(math.type(mixed[2]), "float")
  eq(math.type(mixed[3]), "integer")
  deepEq(plain(bk.sorted({ "b", "a", "c" }, function(a, b) return a > b end)), { "c", "b", "a" })
  deepEq(plain(bk.sorted({})), {})
  -- every kind: dictionaries sort their values
  deepEq(plain(bk.sorted({ x = 3, y = 1, z = 2 })), { 1, 2, 3 })
  deepEq(plain(bk.sorted(bk.indexSet({ 5, 1, 3 }), function(a, b) return a > b end)), { 5, 3, 1 })
  deepEq(plain(bk.array({ 3, 1, 2 }):sorted()), { 1, 2, 3 })
end)

test("sorted with an inconsistent comparator gives a permutation, never a crash or hang", function()
  local n = 1000
  local t = {}
  for i = 1, n do t[i] = (i * 7919) % n end
  for _, less in ipairs({
    function() return true end,
    function() return false end,
    function(a, b) return a <= b end,
    function() return math.random() < 0.5 end,
  }) do
    local r = bk.sorted(t, less)
    eq(#r, n)
    local counts = {}
    for i = 1, n do counts[r[i]] = (counts[r[i]] or 0) + 1 end
    for i = 1, n do eq(counts[t[i]], 1) end
  end
  raises("attempt to compare", bk.sorted, { 1, "x", 2 })
end)

test("sortedBy computes each key once, is stable, and descends on request", function()
  local calls = 0
  local words = { "ccc", "a", "bb", "dd", "e" }
  local r = bk.sortedBy(words, function(w) calls = calls + 1 return #w end)
  eq(calls, #words)
  deepEq(plain(r), { "a", "e", "bb", "dd", "ccc" })
  deepEq(plain(bk.sortedBy(words, function(w) return #w end, true)), { "ccc", "bb", "dd", "a", "e" })
  deepEq(plain(bk.sortedBy({ a = 3, b = 1 }, function(k, v) return v end)), { 1, 3 })
end)

test("sortedBy and sorted by '<' past one run of 12 (the merge phase), stable, both directions", function()
  local n = 1000
  local t = {}
  for i = 1, n do t[i] = (i * 7919) % n end
  local function check(r, before)
    eq(#r, n)
    for i = 2, n do ok(not before(r[i], r[i - 1]), "position " .. i) end
  end
  check(bk.sortedBy(t, function(x) return -x end), function(a, b) return a > b end)
  check(bk.sortedBy(t, function(x) return x end, true), function(a, b) return a > b end)
  -- stable: equal keys keep their order (the last digit, then the position)
  local r = bk.sortedBy(t, function(x) return x % 10 end)
  local at = {}
  for i = 1, n do at[t[i]] = i end
  for i = 2, n do
    local a, b = r[i - 1], r[i]
    ok(a % 10 < b % 10 or (a % 10 == b % 10 and at[a] < at[b]), "stable at " .. i)
  end
  -- not all integers: '<' inline, stably (1 and 1.0 are equal, kept in order)
  local mixed = {}
  for i = 1, n do mixed[i] = (i * 7919) % n + ((i % 2 == 0) and 0.5 or 0) end
  check(bk.sorted(mixed), function(a, b) return a < b end)
  local ones = bk.sorted({ 2, 1.0, 3, 1, 0, 5, 6, 7, 8, 9, 10, 11, 12, 13, 1.0 })
  ok(math.type(ones[2]) == "float" and math.type(ones[3]) == "integer" and math.type(ones[4]) == "float")
end)

test("reversed, keys and values on every kind", function()
  deepEq(plain(bk.reversed({ 1, 2, 3 })), { 3, 2, 1 })
  deepEq(plain(bk.reversed(bk.indexSet({ 3, 1, 2 }))), { 3, 2, 1 })
  deepEq(plain(bk.keys({ "a", "b" })), { 1, 2 })
  deepEq(plain(bk.values(bk.set({ "a", "b", "a" }))), { "a", "b" })
  local d = { x = 1, y = 2, z = 3 }
  local keys, values = bk.keys(d), bk.values(d)
  eq(#keys, 3)
  for i = 1, 3 do eq(d[keys[i]], values[i]) end
  eq(bk.kind(keys), "array")
end)

test("groupBy groups in order, hashes keys as Lua tables do, and keeps dictionary pairs", function()
  local g = bk.groupBy({ 1, 2, 3, 4, 5, 6 }, function(v) return v % 3 end)
  eq(bk.kind(g), "dictionary")
  deepEq(plain(g[0]), { 3, 6 })
  deepEq(plain(g[1]), { 1, 4 })
  eq(bk.kind(g[1]), "array")
  -- 1 and 1.0 are one key
  local h = bk.groupBy({ "a", "b" }, function(v) return v == "a" and 1 or 1.0 end)
  deepEq(plain(h[1]), { "a", "b" })
  -- nil key is bk.null
  local n = bk.groupBy({ 1, 2 }, function() return nil end)
  deepEq(plain(n[bk.null]), { 1, 2 })
  local d = bk.groupBy({ a = 1, b = 2, c = 3 }, function(k, v) return v % 2 end)
  deepEq(plain(d[1]), { a = 1, c = 3 })
  deepEq(plain(d[0]), { b = 2 })
  eq(bk.kind(d[1]), "dictionary")
end)

test("countBy, partition and uniq", function()
  deepEq(plain(bk.countBy({ "a", "b", "a" })), { a = 2, b = 1 })
  deepEq(plain(bk.countBy({ 1, 1.0, 2 })), { [1] = 2, [2] = 1 })
  deepEq(plain(bk.countBy({ 1, 2, 3 }, function(v) return v % 2 end)), { [0] = 1, [1] = 2 })
  local yes, no = bk.partition({ 1, 2, 3, 4 }, function(v) return v % 2 == 0 end)
  deepEq(plain(yes), { 2, 4 })
  deepEq(plain(no), { 1, 3 })
  for name, c in pairs(listKinds({ 1, 2, 3 })) do
    local a, b = bk.partition(c, function(v) return v > 1 end)
    eq(bk.kind(a), bk.kind(c), name)
    eq(bk.kind(b), bk.kind(c), name)
  end
  local s = bk.partition(bk.set({ 1, 2 }), function() return true end)
  ok(s:contains(2), "a partitioned set keeps its membership")
  eq(s:add(2), false)
  local i1, i2 = bk.partition(bk.indexSet({ 1, 2, 3 }), function(v) return v ~= 2 end)
  eq(bk.kind(i1), "indexSet")
  deepEq(plain(i1), { 1, 3 })
  deepEq(plain(i2), { 2 })
  local dy, dn = bk.partition({ a = 1, b = 2 }, function(k, v) return v > 1 end)
  deepEq(plain(dy), { b = 2 })
  deepEq(plain(dn), { a = 1 })
  deepEq(plain(bk.uniq({ 1, 2, 1.0, 3, 2 })), { 1, 2, 3 })
  deepEq(plain(bk.uniq({ "a", "bb", "c" }, function(v) return #v end)), { "a", "bb" })
end)

test("NaN keys are errors naming the element", function()
  local nan = 0 / 0
  raises("bad argument #2 to 'groupBy' (block returned NaN for the element at position 2)",
    bk.groupBy, { 1, 2 }, function(v) return v == 2 and nan or v end)
  raises("bad argument #1 to 'uniq' (NaN element at position 3)", bk.uniq, { 1, 2, nan })
  raises("bad argument #1 to 'countBy' (NaN element at position 1)", bk.countBy, { nan })
  raises("bad argument #2 to 'countBy' (block returned NaN for the element at key \"a\")",
    bk.countBy, { a = 1 }, function() return nan end)
  raises("bad argument #2 to 'union' (NaN element at position 2)", bk.union, { 1 }, { 2, nan })
  raises("bad argument #1 to 'isSubset' (NaN element at position 1)", bk.isSubset, { nan }, { 1 })
  raises("bad argument #2 to 'isSuperset' (NaN element at position 1)", bk.isSuperset, { 1 }, { nan })
  raises("bad argument #1 to 'difference' (NaN element at position 2)", bk.difference, bk.set({ 1, nan }), {})
end)

test("zip, flatten, flatMap and compactMap", function()
  local z = bk.zip({ 1, 2, 3 }, { "a", "b" })
  eq(#z, 2)
  deepEq(plain(z[2]), { 2, "b" })
  eq(bk.kind(z[1]), "array")
  deepEq(plain(bk.zip({ 1 }, { 2 }, { 3 })[1]), { 1, 2, 3 })
  raises("bad argument #2 to 'zip' (table expected, got number)", bk.zip, { 1 }, 5)
  local nested = { 1, { 2, { 3, { 4 } } }, bk.set({ 5 }), { x = 1 }, "s", bk.null, {} }
  local one = bk.flatten(nested)
  eq(#one, 8)
  eq(one[2], 2)
  eq(type(one[3]), "table")
  eq(one[4], 5)
  deepEq(one[5], { x = 1 })
  local all = bk.flatten(nested, 10)
  deepEq({ all[1], all[2], all[3], all[4], all[5] }, { 1, 2, 3, 4, 5 })
  eq(#bk.flatten(nested, 0), #nested)
  -- a cycle with a big depth ends (stack overflow or a result), never hangs
  local cyclic = { 1 }
  cyclic[2] = cyclic
  local okCycle = pcall(bk.flatten, cyclic, 1000)
  ok(okCycle ~= nil)
  deepEq(plain(bk.flatMap({ 1, 2 }, function(v) return { v, v * 10 } end)), { 1, 10, 2, 20 })
  deepEq(plain(bk.flatMap({ 1, 2 }, function(v) return v end)), { 1, 2 })
  deepEq(plain(bk.compactMap({ 1, 2, 3, 4 }, function(v) if v % 2 == 0 then return v * 2 end end)), { 4, 8 })
  deepEq(plain(bk.compactMap({ 1, 2 }, function() return bk.null end)), {})
  deepEq(plain(bk.compactMap({ a = 1, b = 2 }, function(k, v) return v > 1 and k or nil end)), { b = "b" })
end)

test("slice, take, drop, takeWhile, dropWhile, chunked", function()
  local t = { 1, 2, 3, 4, 5 }
  deepEq(plain(bk.slice(t, 2, 4)), { 2, 3, 4 })
  deepEq(plain(bk.slice(t, -2)), { 4, 5 })
  deepEq(plain(bk.slice(t, 0, 100)), t)
  deepEq(plain(bk.slice(t, 4, 2)), {})
  deepEq(plain(bk.slice(t, math.mininteger, math.maxinteger)), t)
  deepEq(plain(bk.slice(t, "2", 2.0)), { 2 })
  raises("bad argument #2 to 'slice' (number expected, got string)", bk.slice, t, "x")
  raises("bad argument #3 to 'slice' (number has no integer representation)", bk.slice, t, 1, 1.5)
  deepEq(plain(bk.take(t, 2)), { 1, 2 })
  deepEq(plain(bk.take(t, math.maxinteger)), t)
  deepEq(plain(bk.drop(t, 3)), { 4, 5 })
  deepEq(plain(bk.drop(t, 9)), {})
  raises("bad argument #2 to 'take' (count must be non-negative)", bk.take, t, -1)
  deepEq(plain(bk.takeWhile(t, function(v) return v < 3 end)), { 1, 2 })
  local calls = 0
  deepEq(plain(bk.dropWhile(t, function(v) calls = calls + 1 return v < 3 end)), { 3, 4, 5 })
  eq(calls, 3)
  local c = bk.chunked(t, 2)
  eq(#c, 3)
  deepEq(plain(c[3]), { 5 })
  eq(bk.kind(c[1]), "array")
  raises("bad argument #2 to 'chunked' (size must be at least 1)", bk.chunked, t, 0)
  eq(#bk.chunked({}, 3), 0)
end)

test("first, last and indexOf", function()
  eq(bk.first({ 1, 2, 3 }), 1)
  eq(bk.last({ 1, 2, 3 }), 3)
  eq(bk.first({}), nil)
  eq(bk.last(bk.set({})), nil)
  deepEq(plain(bk.first({ 1, 2, 3 }, 2)), { 1, 2 })
  deepEq(plain(bk.last({ 1, 2, 3 }, 2)), { 2, 3 })
  deepEq(plain(bk.last({ 1, 2, 3 }, 10)), { 1, 2, 3 })
  eq(bk.first({ a = 7 }), 7)
  eq(bk.indexOf({ "a", "b", "b" }, "b"), 2)
  eq(bk.indexOf({ 1, 2 }, 2.0), 2)
  eq(bk.indexOf({ 1, 2 }, 0 / 0), nil)
  eq(bk.indexOf({ a = "x" }, "x"), "a")
  local eqAll = { __eq = function() return true end }
  local a, b = setmetatable({}, eqAll), setmetatable({}, eqAll)
  eq(bk.indexOf({ a }, b), nil)
  eq(bk.indexOf({ a, b }, b), 2)
end)

test("sum keeps integers integral and follows +", function()
  eq(math.type(bk.sum({ 1, 2 })), "integer")
  eq(bk.sum({ 1, 2 }), 3)
  eq(math.type(bk.sum({ 1, 2.0 })), "float")
  eq(bk.sum({}), 0)
  eq(math.type(bk.sum({})), "integer")
  eq(bk.sum({ math.maxinteger, 1 }), math.mininteger)
  eq(bk.sum({ 1, 2, 3 }, function(v) return v * 2 end), 12)
  eq(bk.sum({ a = 1, b = 2 }), 3)
  eq(bk.sum(bk.indexSet(1, 100)), 5050)
  local V = {}
  V.__add = function(x, y) return setmetatable({ n = x.n + y.n }, V) end
  eq(bk.sum({ setmetatable({ n = 1 }, V), setmetatable({ n = 2 }, V) }).n, 3)
  raises("arithmetic", bk.sum, { 1, {} })
end)

test("min and max: first on ties, nil when empty, key once per element", function()
  eq(bk.min({ 3, 1, 2 }), 1)
  eq(bk.max({ 3, 1, 2 }), 3)
  eq(bk.min({}), nil)
  eq(bk.max({}), nil)
  eq(bk.min({ a = 3, b = 1 }), 1)
  local calls = 0
  local words = { "bb", "a", "cc", "d" }
  eq(bk.min(words, function(w) calls = calls + 1 return #w end), "a")
  eq(calls, 4)
  eq(bk.max(words, function(w) return #w end), "bb")
  eq(math.type(bk.min({ 1, 1.0 })), "integer")
  eq(math.type(bk.max({ 1, 1.0 })), "integer")
end)

test("count with and without a block; c:count()", function()
  eq(bk.count({ 1, 2, 3 }), 3)
  eq(bk.count({ 1, 2, 3 }, function(v) return v > 1 end), 2)
  eq(bk.count({ a = 1, b = 2 }), 2)
  eq(bk.count({ a = 1, b = 2 }, function(k, v) return k == "a" end), 1)
  eq(bk.array({ 1, 2 }):count(), 2)
  eq(bk.set({ 1, 2, 2 }):count(), 2)
  eq(bk.array({ 1, 2, 3 }):count(function(v) return v ~= 2 end), 2)
end)

test("set algebra returns the kind the API says", function()
  local u = bk.union(bk.set({ 1, 2 }), { 2, 3 })
  eq(bk.kind(u), "set")
  deepEq(plain(u), { 1, 2, 3 })
  ok(u:contains(3))
  eq(u:add(1), false)
  local o = bk.union({ 3, 1 }, bk.set({ 1, 2 }))
  eq(bk.kind(o), "orderedSet")
  deepEq(plain(o), { 3, 1, 2 })
  local i = bk.union(bk.indexSet({ 5, 1 }), { 3, 1.0 })
  eq(bk.kind(i), "indexSet")
  deepEq(plain(i), { 1, 3, 5 })
  eq(math.type(i[1]), "integer")
  raises("bad argument #2 to 'union' (non-negative integers expected, got string at position 1)",
    bk.union, bk.indexSet({ 1 }), { "x" })
  deepEq(plain(bk.intersection({ 1, 2, 3, 2 }, { 2, 3, 4 })), { 2, 3 })
  deepEq(plain(bk.difference(bk.orderedSet({ 1, 2, 3 }), { 2 })), { 1, 3 })
  deepEq(plain(bk.symmetricDifference({ 1, 2 }, { 2, 3 })), { 1, 3 })
  eq(bk.kind(bk.intersection(bk.indexSet({ 1, 2 }), { 2 })), "indexSet")
  eq(bk.isSubset({ 1, 2 }, bk.set({ 1, 2, 3 })), true)
  eq(bk.isSubset({ 1, 4 }, bk.indexSet({ 1, 2 })), false)
  eq(bk.isSuperset(bk.orderedSet({ 1, 2, 3 }), { 1.0 }), true)
  eq(bk.isDisjoint({ 1 }, { 2 }), true)
  eq(bk.isDisjoint({ 1 }, { 1.0 }), false)
  eq(bk.isSubset({}, {}), true)
end)

test("argument errors name the helper", function()
  for _, name in ipairs(NAMES) do
    raises("bad argument #1 to '" .. name .. "' (table expected, got number)", bk[name], 5, {})
  end
  raises("bad argument #2 to 'groupBy' (function expected, got nil)", bk.groupBy, {})
  raises("bad argument #2 to 'sorted' (function expected, got number)", bk.sorted, {}, 1)
  raises("bad argument #2 to 'flatten' (depth must be non-negative)", bk.flatten, {}, -1)
  -- the position is the caller's line, as for a C function's bad argument
  local okCall, err = pcall(function() bk.chunked({}, 0) end)
  ok(not okCall and err:find("test_toolbox.lua:%d+: bad argument #2 to 'chunked'"), err)
  okCall, err = pcall(function() bk.union({ 0 / 0 }, {}) end)
  ok(not okCall and err:find("test_toolbox.lua:%d+: bad argument #1 to 'union'"), err)
  okCall, err = pcall(function() bk.array({}):take(-1) end)
  ok(not okCall and err:find("test_toolbox.lua:%d+: bad argument #2 to 'take'"), err)
end)

test("block errors reach the caller unchanged, whatever the value", function()
  local E = setmetatable({}, { __tostring = function() return "E" end })
  local blockHelpers = {
    function(f) return bk.sorted({ 2, 1 }, f) end,
    function(f) return bk.sortedBy({ 2, 1 }, f) end,
    function(f) return bk.groupBy({ 1 }, f) end,
    function(f) return bk.groupBy({ a = 1 }, f) end,
    function(f) return bk.countBy({ 1 }, f) end,
    function(f) return bk.partition({ 1 }, f) end,
    function(f) return bk.uniq({ 1 }, f) end,
    function(f) return bk.flatMap({ 1 }, f) end,
    function(f) return bk.compactMap({ a = 1 }, f) end,
    function(f) return bk.takeWhile({ 1 }, f) end,
    function(f) return bk.dropWhile({ 1 }, f) end,
    function(f) return bk.sum({ 1 }, f) end,
    function(f) return bk.min({ 1 }, f) end,
    function(f) return bk.max({ a = 1 }, f) end,
    function(f) return bk.count({ 1 }, f) end,
  }
  for i, call in ipairs(blockHelpers) do
    for _, value in ipairs({ E, 42, "plain", false }) do
      local okCall, err = pcall(call, function() error(value, 0) end)
      eq(okCall, false, "helper " .. i)
      ok(rawequal(err, value), "helper " .. i .. " keeps " .. tostring(value))
    end
    local okCall, err = pcall(call, function() error("at level 1") end)
    eq(okCall, false)
    ok(err:find("test_toolbox.lua:%d+: at level 1$"), err)
  end
end)

test("blocks may yield through every block helper (coroutines and tasks)", function()
  local function yielding(v, w) coroutine.yield("y") return w or v end
  local calls = {
    { "sorted", function() return bk.sorted({ 3, 1, 2 }, function(a, b) coroutine.yield() return a < b end) end,
      function(r) deepEq(plain(r), { 1, 2, 3 }) end },
    { "sortedBy", function() return bk.sortedBy({ 3, 1, 2 }, yielding) end,
      function(r) deepEq(plain(r), { 1, 2, 3 }) end },
    { "groupBy", function() return bk.groupBy({ 1, 2 }, yielding) end, function(r) eq(r[2][1], 2) end },
    { "sum", function() return bk.sum({ 1, 2 }, yielding) end, function(r) eq(r, 3) end },
    { "takeWhile", function() return bk.takeWhile({ 1, 2 }, yielding) end, function(r) eq(#r, 2) end },
    { "count", function() return bk.count({ a = 1, b = 2 }, yielding) end, function(r) eq(r, 2) end },
  }
  for _, case in ipairs(calls) do
    local co = coroutine.create(case[2])
    local okResume, result = coroutine.resume(co)
    local resumes = 0
    while okResume and coroutine.status(co) == "suspended" do
      resumes = resumes + 1
      okResume, result = coroutine.resume(co)
    end
    ok(okResume, case[1] .. ": " .. tostring(result))
    ok(resumes > 0, case[1] .. " yielded")
    case[3](result)
  end
  -- inside a task, bk.sleep suspends the task in the block
  local result
  local task = bk.async(function()
    result = bk.sortedBy({ 3, 1, 2 }, function(v) bk.sleep(0.001) return v end)
  end)
  bk.await(task)
  deepEq(plain(result), { 1, 2, 3 })
end)

test("hostile inputs: #t = 2^40 by __len and border, forged metatables, observed tables", function()
  local huge = setmetatable({ 1, 2, 3 }, { __len = function() return 1 << 40 end })
  eq(bk.count(huge), 3)
  deepEq(plain(bk.sorted(huge)), { 1, 2, 3 })
  deepEq(plain(bk.take(huge, 1 << 40)), { 1, 2, 3 })
  local border = { 1, 2, 3 }
  for k = 4, 40 do border[1 << k] = 1 end
  for _, name in ipairs({ "sorted", "reversed", "values", "uniq", "sum", "chunked" }) do
    local okCall = pcall(bk[name], border, name == "chunked" and 2 or nil)
    ok(okCall, name)
  end
  eq(bk.sum(border), 6)
  -- a raw border past a hole (sum, min, max and indexOf loop to it): the list still ends at the hole
  local holed = { 1, 2, nil, 4 }
  eq(rawlen(holed), 4, "the border this case needs")
  eq(bk.sum(holed), 3)
  eq(bk.max(holed), 2)
  eq(bk.min({ 5, 6, nil, 1 }), 5)
  eq(bk.indexOf(holed, 4), nil)
  eq(bk.indexOf(holed, 2), 2)
  -- a foreign metatable never runs: reads are raw
  local raiser = function() error("metamethod ran") end
  local forged = setmetatable({ 3, 1, 2 }, { __index = raiser, __len = raiser, __eq = raiser, __lt = raiser })
  deepEq(plain(bk.sorted(forged)), { 1, 2, 3 })
  eq(bk.sum(forged), 6)
  -- read from a raw copy: the block's change is not seen by the walk
  eq(bk.count(forged, function(v) forged[3] = nil return true end), 3)
  -- a table claiming a bk kind through a forged metatable is bounded by its raw count
  local claims = setmetatable({ 1, 2 }, { __bkkind = 0, __index = function() return 1 end })
  eq(#bk.values(claims), 2)
  -- a block that empties the list ends the walk at the hole
  local t = { 1, 2, 3, 4 }
  eq(bk.count(t, function(v) t[3] = nil return true end), 2)
  -- dictionaries: a key removed by a block is skipped, one named like a method is never read
  local d = { a = 1, b = 2, map = 3 }
  local seen = 0
  bk.count(bk.dictionary(d), function(k) seen = seen + 1 d.a, d.b, d.map = nil, nil, nil end)
  eq(seen, 1)
  -- observed tables are read whole
  for _, make in ipairs({ function() return { 7, 6, 5 } end, function() return bk.orderedSet({ 7, 6, 5 }) end }) do
    local o = make()
    bk.addObserverForKeyPaths(o, { 2 }, function() end)
    eq(rawget(o, 2), nil, "the observed position moved out")
    eq(bk.sum(o), 18)
    eq(bk.count(o), 3)
    deepEq(plain(bk.sorted(o)), { 5, 6, 7 })
    deepEq(plain(bk.flatten({ o })), { 7, 6, 5 })
    eq(bk.isSubset({ 6 }, o), true)
  end
end)

test("kinds in, plain-kind results out", function()
  for name, c in pairs(listKinds({ 3, 1, 2 })) do
    eq(bk.kind(bk.sorted(c)), "array", name)
    eq(bk.kind(bk.take(c, 2)), "array", name)
    eq(bk.kind(bk.groupBy(c, function(v) return v end)), "dictionary", name)
    eq(bk.sum(c), 6, name)
    eq(bk.min(c), 1, name)
    eq(bk.count(c), 3, name)
  end
end)

-- MARK: loading. The toolbox is Lua loaded on first use in a state: these run in a fresh child
-- state (bklua, and stock lua5.4 with bk.so when BK_MODULE_DIR is set).

local function inFreshStates(script)
  local quoted = "'" .. script:gsub("'", "'\\''") .. "'"
  local runs = {}
  local bklua = os.getenv("BKLUA")
  if bklua then runs[#runs + 1] = "timeout 120 " .. bklua .. " -e " .. quoted end
  local dir = os.getenv("BK_MODULE_DIR")
  if dir then
    runs[#runs + 1] = "LUA_CPATH='" .. dir .. "/?.so;;' timeout 120 " .. (os.getenv("LUA") or "lua5.4") .. " -e " .. quoted
  end
  ok(#runs > 0, "BKLUA or BK_MODULE_DIR must be set")
  local outputs = {}
  for _, command in ipairs(runs) do
    local out, code = shell(command)
    eq(code, 0, out)
    outputs[#outputs + 1] = out
  end
  return outputs
end

test("finalizers calling toolbox helpers while the toolbox loads get their results", function()
  -- The collector steps at every allocation, so the finalizers run while the chunks compile: the
  -- first one to call a helper loads the toolbox again, nested, and the outer load goes on.
  for _, out in ipairs(inFreshStates([[
    local bk = bk or require "bk"
    local registry = debug.getregistry()
    local during, wrong = 0, 0
    for _ = 1, 300 do
      setmetatable({}, { __gc = function()
        if registry["bk.toolbox"] == nil then during = during + 1 end
        local ok, r = pcall(bk.sorted, { 3, 1, 2 })
        if not (ok and table.concat(r, ",") == "1,2,3") then wrong = wrong + 1 end
      end })
    end
    collectgarbage("incremental", 1, 100, 0)
    local g = bk.groupBy({ 1, 2, 3, 4 }, function(x) return x % 2 end)
    collectgarbage("incremental", 200, 100, 13)
    collectgarbage()
    print(during, wrong, #g[0], #g[1], table.concat(bk.sorted({ 2, 1 }), ","))
  ]])) do
    local during, rest = out:match("^(%d+)\t(.*)\n$")
    ok(tonumber(during) and tonumber(during) >= 1, "a finalizer called a helper while it loaded: " .. out)
    eq(rest, "0\t2\t2\t1,2")
  end
end)

test("a global the toolbox reads while it loads, calling a helper, ends in a few nested loads", function()
  -- `load` (with which it compiles its merge sorts) replaced by a script function that calls a
  -- helper: the load calls itself back. A load nested in a load is allowed (a finalizer's), a
  -- third is refused, so the toolbox is compiled twice, not again at every level down to the
  -- trampoline's nesting limit (~95 levels, 380 calls of `load`).
  for _, out in ipairs(inFreshStates([[
    local bk = bk or require "bk"
    local realLoad, calls, refused = load, 0, 0
    load = function(...)
      calls = calls + 1
      local ok, err = pcall(bk.sorted, { 3, 1, 2 })
      if not ok and tostring(err):find("called again while it loads", 1, true) then refused = refused + 1 end
      return realLoad(...)
    end
    local g = bk.groupBy({ 1, 2, 3 }, function(x) return x % 2 end)
    load = realLoad
    print(calls, refused, #g[1], table.concat(bk.sorted({ 3, 1, 2 }), ","))
  ]])) do
    local calls, refused, rest = out:match("^(%d+)\t(%d+)\t(.*)\n$")
    ok(tonumber(calls) and tonumber(calls) <= 16, "calls of load: " .. out)
    ok(tonumber(refused) and tonumber(refused) >= 1, out)
    eq(rest, "2\t1,2,3")
  end
end)
