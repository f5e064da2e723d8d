-- Collections: kinds, every helper on every kind, early stopping, bk.null, errors, mutation rules.

local function list(c)
  local out = {}
  for i = 1, #c do out[i] = c[i] end
  return out
end

-- A block that counts its calls.
local function counter(f)
  local box = { calls = 0 }
  box.f = function(...)
    box.calls = box.calls + 1
    return f(...)
  end
  return box
end

-- Sorted "k=v" list of a dictionary, to compare without depending on key order.
local function entries(d)
  local out = {}
  for k, v in pairs(d) do out[#out + 1] = tostring(k) .. "=" .. tostring(v) end
  table.sort(out)
  return table.concat(out, " ")
end

local function double(x) return x * 2 end
local function even(x) return x % 2 == 0 end

-- Builders of each list kind from {1, 2, 3, 4}.
local listKinds = {
  plain = function() return { 1, 2, 3, 4 } end,
  array = function() return bk.array { 1, 2, 3, 4 } end,
  set = function() return bk.set { 1, 2, 3, 4 } end,
  orderedSet = function() return bk.orderedSet { 1, 2, 3, 4 } end,
  indexSet = function() return bk.indexSet { 1, 2, 3, 4 } end,
}
local expectedKind = { plain = "array", array = "array", set = "set", orderedSet = "orderedSet",
  indexSet = "indexSet" }

-- Kinds -----------------------------------------------------------------------------------------

test("kind of plain tables: array when t[1] ~= nil or empty, else dictionary", function()
  eq(bk.kind({ 1, 2 }), "array")
  eq(bk.kind({}), "array")
  eq(bk.kind({ a = 1 }), "dictionary")
  eq(bk.kind({ [2] = "x" }), "dictionary")
  eq(bk.kind({ 1, a = 2 }), "array")
end)

test("array and dictionary mark in place and return the table", function()
  local t = { a = 1 }
  eq(bk.array(t), t)
  eq(bk.kind(t), "array")
  local e = {}
  eq(bk.dictionary(e), e)
  eq(bk.kind(e), "dictionary")
  eq(bk.kind(bk.array()), "array")
  eq(bk.kind(bk.dictionary()), "dictionary")
  eq(next(bk.dictionary()), nil)
end)

test("array refuses a table with a foreign metatable", function()
  raises("bad argument #1 to 'array' (table already has a metatable)", bk.array, setmetatable({}, {}))
  raises("bad argument #1 to 'dictionary' (table expected, got number)", bk.dictionary, 3)
end)

test("re-marking a bk collection changes its kind", function()
  local t = bk.dictionary { 1, 2 }
  eq(bk.kind(t), "dictionary")
  bk.array(t)
  eq(bk.kind(t), "array")
end)

test("set keeps the first occurrence, in order, by raw equality", function()
  local shared = {}
  local s = bk.set { 3, 1, 3, "a", 1.0, shared, shared, {}, "a" }
  eq(bk.kind(s), "set")
  eq(#s, 5)
  eq(s[1], 3); eq(s[2], 1); eq(s[3], "a"); eq(s[4], shared); eq(type(s[5]), "table")
  ok(s:contains(1.0) and s:contains(1) and s:contains(shared))
  ok(not s:contains({}))
end)

test("set ignores metamethod equality", function()
  local mt = { __eq = function() return true end }
  local a, b = setmetatable({}, mt), setmetatable({}, mt)
  eq(a == b, true)
  eq(#bk.set { a, b }, 2)
end)

test("set add, remove, contains, count", function()
  local s = bk.set()
  eq(#s, 0)
  eq(s:add("x"), true)
  eq(s:add("x"), false)
  eq(s:bk_add("y"), true)
  eq(s:count(), 2)
  eq(s:remove("x"), true)
  eq(s:remove("x"), false)
  deepEq(list(s), { "y" })
  ok(not s:contains("x"))
  raises("bad argument #2 to 'add' (element must not be nil)", s.add, s, nil)
  raises("bad argument #1 to 'add' (set expected, got table)", s.add, {}, 1)
end)

test("NaN can be a set element but never equals itself", function()
  local nan = 0 / 0
  local s = bk.set { nan, nan, 1 }
  eq(#s, 3)
  ok(not s:contains(nan))
  eq(#bk.select(s, function() return true end), 3)
end)

test("ordered set keeps insertion order and is its own kind", function()
  local s = bk.orderedSet { "c", "a", "c", "b" }
  eq(bk.kind(s), "orderedSet")
  deepEq(list(s), { "c", "a", "b" })
  s:add("z")
  deepEq(list(s), { "c", "a", "b", "z" })
end)

test("two sets have separate memberships", function()
  local a, b = bk.set { 1 }, bk.set { 2 }
  ok(a:contains(1) and not a:contains(2))
  ok(b:contains(2) and not b:contains(1))
end)

test("index set: sorted unique non-negative integers", function()
  local s = bk.indexSet { 5, 3, 3, 9, 0, 2.0 }
  eq(bk.kind(s), "indexSet")
  deepEq(list(s), { 0, 2, 3, 5, 9 })
  eq(math.type(s[2]), "integer")
  deepEq(list(bk.indexSet(3, 4)), { 3, 4, 5, 6 })
  deepEq(list(bk.indexSet(7)), { 7 })
  deepEq(list(bk.indexSet(7, 0)), {})
  deepEq(list(bk.indexSet()), {})
  eq(s:add(4), true); eq(s:add(4), false)
  eq(s:add(100), true)
  deepEq(list(s), { 0, 2, 3, 4, 5, 9, 100 })
  eq(s:remove(0), true); eq(s:remove(0), false)
  deepEq(list(s), { 2, 3, 4, 5, 9, 100 })
  ok(s:contains(9) and not s:contains(1) and not s:contains("9") and not s:contains(-1))
end)

test("index set bad arguments", function()
  raises("bad argument #1 to 'indexSet' (non-negative integers expected, got number -1 at position 2)",
    bk.indexSet, { 1, -1 })
  raises("bad argument #1 to 'indexSet' (non-negative integers expected, got string at position 1)",
    bk.indexSet, { "1" })
  raises("bad argument #1 to 'indexSet' (non-negative integers expected, got number 1.5 at position 1)",
    bk.indexSet, { 1.5 })
  -- Dictionary sources name the bad value and its key (not t[1]).
  raises("bad argument #1 to 'indexSet' (non-negative integers expected, got string at key 'a')",
    bk.indexSet, { a = "x" })
  raises("bad argument #1 to 'indexSet' (non-negative integers expected, got number -1 at key 'a')",
    bk.indexSet, bk.dictionary { a = -1 })
  raises("bad argument #1 to 'indexSet' (non-negative integers expected, got boolean at key 10)",
    bk.indexSet, { [10] = true })
  -- Neither a collection nor a number: say what it takes (numeric strings are not numbers here).
  raises("bad argument #1 to 'indexSet' (table or integer expected, got string)", bk.indexSet, "5", "2")
  raises("bad argument #1 to 'indexSet' (table or integer expected, got boolean)", bk.indexSet, true)
  raises("bad argument #1 to 'indexSet' (index must be non-negative)", bk.indexSet, -1, 2)
  raises("bad argument #2 to 'indexSet' (count must be non-negative)", bk.indexSet, 1, -2)
  raises("bad argument #1 to 'indexSet' (number has no integer representation)", bk.indexSet, 1.5)
  raises("bad argument #2 to 'add' (non-negative integer expected, got number -3)",
    bk.indexSet().add, bk.indexSet(), -3)
end)

test("bk.kind rejects non-tables", function()
  raises("bad argument #1 to 'kind' (table expected, got string)", bk.kind, "x")
  raises("bad argument #1 to 'kind' (table expected, got no value)", bk.kind)
end)

test("bk.null is a unique sentinel printed as null", function()
  eq(tostring(bk.null), "null")
  eq(type(bk.null), "userdata")
  ok(bk.null ~= nil and bk.null ~= false)
  eq(getmetatable(bk.null), false)
  eq(bk_null, nil)  -- not a function: no bk_ global
end)

-- Methods -----------------------------------------------------------------------------------------

test("every kind has every helper as bk_name, list kinds also as name", function()
  local names = { "each", "apply", "match", "select", "reject", "map", "reduce", "reduceInteger",
    "reduceFloat", "any", "none", "all", "corresponds", "performSelect", "performReject", "performMap",
    "count" }
  local collections = { bk.array(), bk.dictionary(), bk.set(), bk.orderedSet(), bk.indexSet() }
  for _, c in ipairs(collections) do
    for _, name in ipairs(names) do
      eq(type(c["bk_" .. name]), "function", bk.kind(c) .. ":bk_" .. name)
      if bk.kind(c) == "dictionary" then
        eq(c[name], nil, "dictionary." .. name)  -- a dictionary answers only its own keys
      else
        eq(c[name], c["bk_" .. name], bk.kind(c) .. ":" .. name)
      end
      if bk[name] then eq(c["bk_" .. name], bk[name], name) end
    end
  end
end)

test("method and function forms agree", function()
  local a = bk.array { 1, 2, 3 }
  deepEq(list(a:map(double)), { 2, 4, 6 })
  deepEq(list(a:bk_map(double)), { 2, 4, 6 })
  deepEq(list(bk_map(a, double)), { 2, 4, 6 })
end)

-- Every helper on every list kind -------------------------------------------------------------------

for name, make in pairs(listKinds) do
  test(name .. ": each visits in order", function()
    local seen = {}
    eq(select("#", bk.each(make(), function(x) seen[#seen + 1] = x end)), 0)
    deepEq(seen, { 1, 2, 3, 4 })
  end)

  test(name .. ": apply visits every element", function()
    local sum = 0
    bk.apply(make(), function(x) sum = sum + x end)
    eq(sum, 10)
  end)

  test(name .. ": match returns the first passing element and stops", function()
    local c = counter(function(x) return x > 1 end)
    eq(bk.match(make(), c.f), 2)
    eq(c.calls, 2)
    eq(bk.match(make(), function() return false end), nil)
  end)

  test(name .. ": select and reject keep the kind", function()
    local s = bk.select(make(), even)
    deepEq(list(s), { 2, 4 })
    eq(bk.kind(s), expectedKind[name])
    local r = bk.reject(make(), even)
    deepEq(list(r), { 1, 3 })
    eq(bk.kind(r), expectedKind[name])
  end)

  test(name .. ": map makes an array, nil results become bk.null", function()
    local m = bk.map(make(), function(x) if x ~= 2 then return x * 10 end end)
    eq(bk.kind(m), "array")
    eq(#m, 4)
    deepEq(list(m), { 10, bk.null, 30, 40 })
  end)

  test(name .. ": reduce folds in order", function()
    eq(bk.reduce(make(), "", function(acc, x) return acc .. x end), "1234")
    eq(bk.reduce(make(), nil, function(acc, x) return x end), 4)
  end)

  test(name .. ": reduceInteger and reduceFloat", function()
    local i = bk.reduceInteger(make(), 0, function(acc, x) return acc + x end)
    eq(i, 10); eq(math.type(i), "integer")
    local f = bk.reduceFloat(make(), 0, function(acc, x) return acc + x / 2 end)
    eq(f, 5.0); eq(math.type(f), "float")
  end)

  test(name .. ": any, none, all stop early", function()
    local c = counter(function(x) return x == 2 end)
    eq(bk.any(make(), c.f), true); eq(c.calls, 2)
    c = counter(function(x) return x == 2 end)
    eq(bk.none(make(), c.f), false); eq(c.calls, 2)
    c = counter(function(x) return x < 2 end)
    eq(bk.all(make(), c.f), false); eq(c.calls, 2)
    eq(bk.any(make(), function() return false end), false)
    eq(bk.none(make(), function() return false end), true)
    eq(bk.all(make(), function() return 0 end), true)  -- 0 is truthy in Lua
  end)

  test(name .. ": corresponds pairs by position and stops early", function()
    eq(bk.corresponds(make(), { 2, 4, 6, 8 }, function(a, b) return b == a * 2 end), true)
    local c = counter(function(a, b) return a == b end)
    eq(bk.corresponds(make(), { 1, 0, 3, 4 }, c.f), false)
    eq(c.calls, 2)
    c = counter(function() return true end)
    eq(bk.corresponds(make(), { 1, 2, 3 }, c.f), false)
    eq(c.calls, 0)
  end)

  test(name .. ": the empty collection", function()
    local e = bk.select(make(), function() return false end)
    eq(#e, 0)
    local calls = 0
    local function f() calls = calls + 1 return true end
    bk.each(e, f)
    eq(bk.match(e, f), nil)
    eq(#bk.map(e, f), 0)
    eq(bk.reduce(e, "init", f), "init")
    eq(bk.reduceInteger(e, 7, f), 7)
    eq(bk.reduceFloat(e, 7, f), 7.0)
    eq(bk.any(e, f), false); eq(bk.none(e, f), true); eq(bk.all(e, f), true)
    eq(bk.corresponds(e, {}, f), true)
    eq(calls, 0)
  end)
end

-- Dictionaries --------------------------------------------------------------------------------------

local function dict() return { a = 1, b = 2, c = 3, d = 4 } end

test("dictionary: each and apply get (key, value)", function()
  local seen = {}
  bk.each(dict(), function(k, v) seen[#seen + 1] = k .. v end)
  table.sort(seen)
  deepEq(seen, { "a1", "b2", "c3", "d4" })
  local sum = 0
  bk.apply(bk.dictionary(dict()), function(k, v) sum = sum + v end)
  eq(sum, 10)
end)

test("dictionary: match returns the value, stops at the first", function()
  local c = counter(function(k, v) return k == "c" end)
  eq(bk.match(dict(), c.f), 3)
  ok(c.calls >= 1 and c.calls <= 4)
  local calls = 0
  bk.match(dict(), function() calls = calls + 1 return true end)
  eq(calls, 1)
  eq(bk.match(dict(), function() return false end), nil)
end)

test("dictionary: select, reject keep keys and the kind", function()
  local s = bk.select(dict(), function(k, v) return v % 2 == 0 end)
  eq(entries(s), "b=2 d=4"); eq(bk.kind(s), "dictionary")
  local r = bk.reject(dict(), function(k, v) return v % 2 == 0 end)
  eq(entries(r), "a=1 c=3"); eq(bk.kind(r), "dictionary")
  eq(bk.kind(bk.select(dict(), function() return false end)), "dictionary")
end)

test("dictionary: map keeps keys, nil becomes bk.null", function()
  local m = bk.map(dict(), function(k, v) if k ~= "b" then return k .. v end end)
  eq(bk.kind(m), "dictionary")
  eq(m.a, "a1"); eq(m.b, bk.null); eq(m.c, "c3"); eq(m.d, "d4")
end)

test("dictionary: reduce gets (acc, key, value)", function()
  eq(bk.reduce(dict(), 0, function(acc, k, v) return acc + v end), 10)
  eq(bk.reduceInteger(dict(), 1, function(acc, k, v) return acc * v end), 24)
  eq(bk.reduceFloat(dict(), 0, function(acc, k, v) return acc + #k end), 4.0)
end)

test("dictionary: any, none, all stop early (order independent counts)", function()
  local c = counter(function() return true end)
  eq(bk.any(dict(), c.f), true); eq(c.calls, 1)
  c = counter(function() return true end)
  eq(bk.none(dict(), c.f), false); eq(c.calls, 1)
  c = counter(function() return false end)
  eq(bk.all(dict(), c.f), false); eq(c.calls, 1)
  c = counter(function(k, v) return v > 0 end)
  eq(bk.all(dict(), c.f), true); eq(c.calls, 4)
end)

test("dictionary: corresponds pairs by key", function()
  local other = { a = 10, b = 20, c = 30, d = 40 }
  eq(bk.corresponds(dict(), other, function(x, y) return y == x * 10 end), true)
  eq(bk.corresponds(dict(), { a = 10, b = 20, c = 30, e = 40 }, function(x, y) return y ~= nil end), false)
  eq(bk.corresponds(dict(), { a = 1 }, function() return true end), false)
end)

test("dictionary: results do not depend on key order", function()
  -- Same contents built in two insertion orders (different internal layouts).
  local one, two = {}, {}
  local keys = {}
  for i = 1, 50 do keys[i] = "k" .. i end
  for i = 1, 50 do one[keys[i]] = i end
  for i = 50, 1, -1 do two[keys[i]] = i end
  for _, d in ipairs({ one, two }) do
    eq(entries(bk.select(d, function(k, v) return v > 40 end)),
      "k41=41 k42=42 k43=43 k44=44 k45=45 k46=46 k47=47 k48=48 k49=49 k50=50")
    eq(bk.reduce(d, 0, function(a, k, v) return a + v end), 1275)
    eq(bk.match(d, function(k, v) return v == 17 end), 17)
  end
end)

test("dictionary: the empty dictionary", function()
  local e = bk.dictionary()
  local calls = 0
  local function f() calls = calls + 1 return true end
  bk.each(e, f)
  eq(bk.kind(bk.map(e, f)), "dictionary")
  eq(bk.kind(bk.select(e, f)), "dictionary")
  eq(bk.reduce(e, 1, f), 1)
  eq(bk.all(e, f), true)
  eq(calls, 0)
end)

-- In-place helpers -----------------------------------------------------------------------------------

test("performSelect / performReject / performMap on arrays", function()
  local a = { 1, 2, 3, 4, 5, 6 }
  eq(bk.performSelect(a, even), a)
  deepEq(a, { 2, 4, 6 })
  eq(bk.performReject(a, function(x) return x == 4 end), a)
  deepEq(a, { 2, 6 })
  eq(bk.performMap(a, function(x) if x == 2 then return nil end return x + 1 end), a)
  eq(a[1], bk.null); eq(a[2], 7); eq(#a, 2)
end)

test("performSelect / performReject / performMap on dictionaries", function()
  local d = dict()
  eq(bk.performSelect(d, function(k, v) return v > 1 end), d)
  eq(entries(d), "b=2 c=3 d=4")
  bk.performReject(d, function(k) return k == "c" end)
  eq(entries(d), "b=2 d=4")
  bk.performMap(d, function(k, v) return v * 100 end)
  eq(entries(d), "b=200 d=400")
end)

test("performSelect / performReject / performMap on sets keep membership right", function()
  for _, make in ipairs({ bk.set, bk.orderedSet }) do
    local s = make { 1, 2, 3, 4, 5 }
    eq(s:performSelect(function(x) return x ~= 3 end), s)
    deepEq(list(s), { 1, 2, 4, 5 })
    ok(not s:contains(3))
    s:performReject(even)
    deepEq(list(s), { 1, 5 })
    ok(not s:contains(2) and s:contains(5))
    s:performMap(function(x) return x % 2 end)  -- both map to 1: deduplicated
    deepEq(list(s), { 1 })
    ok(s:contains(1) and not s:contains(5))
    eq(s:add(5), true)
    deepEq(list(s), { 1, 5 })
    eq(bk.kind(s), make == bk.set and "set" or "orderedSet")
  end
end)

test("performSelect / performMap on index sets keep them sorted", function()
  local s = bk.indexSet { 1, 2, 3, 4, 5 }
  s:performSelect(function(x) return x > 2 end)
  deepEq(list(s), { 3, 4, 5 })
  s:performMap(function(x) return 10 - x end)
  deepEq(list(s), { 5, 6, 7 })
  s:performMap(function(x) return 1 end)
  deepEq(list(s), { 1 })
  raises("bad argument #2 to 'performMap' (block returned string, non-negative integer expected)",
    s.performMap, s, function() return "x" end)
  raises("bad argument #2 to 'performMap' (block returned number -1, non-negative integer expected)",
    s.performMap, s, function() return -1 end)
  deepEq(list(s), { 1 })  -- unchanged by the failed calls
end)

-- Errors --------------------------------------------------------------------------------------------

test("a raising block stops the helper; its error reaches the caller unchanged", function()
  local calls = 0
  local okCall, err = pcall(bk.map, { 1, 2, 3 }, function(x)
    calls = calls + 1
    if x == 2 then error("boom at " .. x) end
    return x
  end)
  ok(not okCall)
  eq(calls, 2)
  ok(err:match("^Tests/lua/test_collections%.lua:%d+: boom at 2$"), err)  -- as error() made it: no traceback added
end)

test("errors in blocks of every helper reach the caller", function()
  local function boom() error("boom", 0) end
  local helpers = {
    function() bk.each({ 1 }, boom) end,
    function() bk.apply({ a = 1 }, boom) end,
    function() bk.match(bk.set { 1 }, boom) end,
    function() bk.select(bk.indexSet { 1 }, boom) end,
    function() bk.reject(bk.orderedSet { 1 }, boom) end,
    function() bk.map({ a = 1 }, boom) end,
    function() bk.reduce({ 1 }, 0, boom) end,
    function() bk.reduceInteger({ 1 }, 0, boom) end,
    function() bk.reduceFloat({ 1 }, 0, boom) end,
    function() bk.any({ 1 }, boom) end,
    function() bk.none({ 1 }, boom) end,
    function() bk.all({ 1 }, boom) end,
    function() bk.corresponds({ 1 }, { 1 }, boom) end,
    function() bk.performSelect({ 1 }, boom) end,
    function() bk.performReject({ a = 1 }, boom) end,
    function() bk.performMap(bk.set { 1 }, boom) end,
  }
  for i, f in ipairs(helpers) do
    local okCall, err = pcall(f)
    ok(not okCall, "helper " .. i)
    ok(tostring(err):find("^boom"), "helper " .. i .. ": " .. tostring(err))
  end
end)

test("non-string error values pass through unchanged", function()
  local value = { code = 42 }
  local okCall, err = pcall(bk.each, { 1 }, function() error(value) end)
  ok(not okCall)
  eq(err, value)
end)

test("a failing performSelect leaves the array consistent", function()
  local a = { 1, 2, 3, 4, 5, 6 }
  local okCall = pcall(bk.performSelect, a, function(x)
    if x == 4 then error("stop") end
    return x % 2 == 1
  end)
  ok(not okCall)
  deepEq(a, { 1, 3, 4, 5, 6 })  -- 2 rejected; 4 (failing) and the rest kept
end)

test("a failing performMap on a set leaves it unchanged", function()
  local s = bk.set { 1, 2, 3 }
  ok(not pcall(s.performMap, s, function(x) if x == 3 then error("no") end return x * 10 end))
  deepEq(list(s), { 1, 2, 3 })
  ok(s:contains(2))
end)

test("reduceInteger / reduceFloat reject non-numbers", function()
  raises("bad argument #3 to 'reduceInteger' (block returned table, number expected)",
    bk.reduceInteger, { 1 }, 0, function() return {} end)
  raises("bad argument #3 to 'reduceInteger' (block returned a number with no integer representation)",
    bk.reduceInteger, { 1 }, 0, function() return 1.5 end)
  raises("bad argument #3 to 'reduceFloat' (block returned nil, number expected)",
    bk.reduceFloat, { 1 }, 0, function() end)
  raises("bad argument #2 to 'reduceInteger' (number has no integer representation)",
    bk.reduceInteger, { 1 }, 0.5, function() end)
  raises("bad argument #2 to 'reduceFloat' (number expected, got string)",
    bk.reduceFloat, { 1 }, "x", function() end)
  eq(bk.reduceInteger({ 1, 2 }, 0, function(a, x) return a + x + 0.0 end), 3)  -- integral floats convert
end)

test("bad arguments give the standard messages for every helper", function()
  for _, name in ipairs({ "each", "apply", "match", "select", "reject", "map", "any", "none", "all",
    "performSelect", "performReject", "performMap" }) do
    raises("bad argument #1 to '" .. name .. "' (table expected, got nil)", bk[name], nil, print)
    raises("bad argument #1 to '" .. name .. "' (table expected, got number)", bk[name], 1, print)
    raises("bad argument #2 to '" .. name .. "' (function expected, got no value)", bk[name], {})
    raises("bad argument #2 to '" .. name .. "' (function expected, got nil)", bk[name], {}, nil)
    raises("bad argument #2 to '" .. name .. "' (function expected, got string)", bk[name], {}, "f")
  end
  for _, name in ipairs({ "reduce", "reduceInteger", "reduceFloat" }) do
    raises("bad argument #1 to '" .. name .. "' (table expected, got string)", bk[name], "t", 0, print)
    raises("bad argument #3 to '" .. name .. "' (function expected, got no value)", bk[name], {}, 0)
  end
  raises("bad argument #2 to 'reduce' (value expected)", bk.reduce, {})
  raises("bad argument #2 to 'corresponds' (table expected, got nil)", bk.corresponds, {}, nil, print)
  raises("bad argument #3 to 'corresponds' (function expected, got no value)", bk.corresponds, {}, {})
  raises("bad argument #1 to 'set' (table expected, got number)", bk.set, 1)
  raises("bad argument #1 to 'orderedSet' (table expected, got boolean)", bk.orderedSet, true)
end)

test("method calls report bad self / arguments", function()
  local a = bk.array { 1 }
  raises("bad argument #1 to 'map' (function expected, got nil)", function() a:map(nil) end)
end)

-- Mutation during a walk (documented behaviour) ------------------------------------------------------

test("arrays: appended elements are not visited; a shrunk array stops early", function()
  local a = { 1, 2, 3 }
  local seen = {}
  bk.each(a, function(x) seen[#seen + 1] = x; a[#a + 1] = x * 10 end)
  deepEq(seen, { 1, 2, 3 })
  eq(#a, 6)
  local b = { 1, 2, 3, 4 }
  seen = {}
  bk.each(b, function(x) seen[#seen + 1] = x; b[#b] = nil end)
  deepEq(seen, { 1, 2 })
end)

test("arrays: replaced elements are seen when their turn comes", function()
  local a = { 1, 2, 3 }
  local m = bk.map(a, function(x) a[3] = 30; return x end)
  deepEq(list(m), { 1, 2, 30 })
end)

test("dictionaries: keys added by a block are not visited, removed keys are skipped", function()
  local d = { a = 1, b = 2, c = 3 }
  local seen = 0
  bk.each(d, function(k, v)
    seen = seen + 1
    for i = 1, 20 do d["new" .. seen .. "_" .. i] = i end  -- forces rehashes
    d.a, d.b, d.c = nil, nil, nil
    d[k] = v
  end)
  eq(seen, 1)  -- the other two were removed before their turn
end)

test("dictionaries: a block may clear the table", function()
  local d = {}
  for i = 1, 100 do d["k" .. i] = i end
  local seen = 0
  bk.each(d, function()
    seen = seen + 1
    for k in pairs(d) do d[k] = nil end
    for i = 1, 100 do d["x" .. i] = i end
  end)
  eq(seen, 1)
end)

test("sets: elements added during a walk are not visited", function()
  local s = bk.set { 1, 2 }
  local seen = 0
  s:each(function(x) seen = seen + 1; s:add(x + 100) end)
  eq(seen, 2)
  eq(#s, 4)
end)

test("a hand-made table claiming a set kind without membership does not crash", function()
  local fake = setmetatable({ 1, 2, 3 }, { __bkkind = 2 })
  eq(bk.kind(fake), "set")
  bk.performReject(fake, function(x) return x == 2 end)
  deepEq(list(fake), { 1, 3 })
  raises("bad argument #1 to 'add' (set expected, got table)", bk.set().add, fake, 4)
  local fakeIndex = setmetatable({ "x", 3 }, { __bkkind = 4 })
  eq(bk.indexSet().contains(fakeIndex, 3), false)
end)

test("a table given another set's metatable never reaches that set's membership", function()
  for _, make in ipairs { bk.set, bk.orderedSet } do
    local s = make { 1, 2 }
    local forged = setmetatable({}, getmetatable(s))
    raises("bad argument #1 to 'add' (set expected, got table)", forged.add, forged, 7)
    raises("bad argument #1 to 'remove' (set expected, got table)", forged.remove, forged, 1)
    raises("bad argument #1 to 'contains' (set expected, got table)", forged.contains, forged, 1)
    eq(s:add(7), true)
    eq(s:add(1), false)
    deepEq(list(s), { 1, 2, 7 })
    -- Nor through a metatable built by hand from the set's fields.
    local copied = {}
    for k, v in pairs(getmetatable(s)) do copied[k] = v end
    local forged2 = setmetatable({ 1, 2 }, copied)
    raises("bad argument #1 to 'remove' (set expected, got table)", forged2.remove, forged2, 1)
    eq(s:contains(1), true)
    -- The helpers still treat it as a set kind and give their results a membership of their own.
    local r = bk.select(forged2, function() return true end)
    eq(r:add(1), false)
    eq(r:add(9), true)
    eq(s:contains(9), false)
  end
  -- Index sets keep no bookkeeping beside their elements: a forged one only misleads itself.
  local i = bk.indexSet { 1, 2 }
  local forgedIndex = setmetatable({}, getmetatable(i))
  eq(forgedIndex:add(5), true)
  eq(i:contains(5), false)
  deepEq(list(i), { 1, 2 })
end)

test("index set ranges are bounded", function()
  raises("bad argument #2 to 'indexSet' (count too large)", bk.indexSet, 0, 1 << 40)
  raises("bad argument #2 to 'indexSet' (count too large)", bk.indexSet, math.maxinteger, 2)
  eq(#bk.indexSet(10, 1000), 1000)
end)

test("many extra arguments are harmless", function()
  local args = {}
  for i = 1, 200 do args[i] = i end
  deepEq(list(bk.map({ 1, 2 }, function(x) return x end, table.unpack(args))), { 1, 2 })
end)

test("performSelect: a position made nil by a block ends the array there", function()
  local a = { 1, 2, 3, 4, 5 }
  bk.performSelect(a, function(x) if x == 2 then a[4] = nil end return true end)
  deepEq(a, { 1, 2, 3 })
end)

test("helpers survive a full garbage collection inside every block", function()
  local function gc(...) collectgarbage() return ... end
  for _, make in pairs(listKinds) do
    local m = bk.map(make(), function(x) gc() return { x } end)
    eq(#m, 4); eq(m[4][1], 4)
    eq(#bk.select(make(), function(x) gc() return x > 2 end), 2)
    eq(bk.reduce(make(), 0, function(a, x) gc() return a + x end), 10)
  end
  local d = bk.map(dict(), function(k, v) gc() return { v } end)
  eq(d.c[1], 3)
  local m = bk.map({ 1, 2, 3 }, function(x) gc() return { x } end)
  eq(m[3][1], 3)
end)

test("a block may yield: the walk suspends with its coroutine and goes on when resumed", function()
  local co = coroutine.create(function()
    bk.each({ 1, 2 }, function(x) coroutine.yield(x) end)
    local m = bk.map({ a = 1, b = 2 }, function(k, v) return coroutine.yield(k) .. v end)
    return bk.reduce({ 10, 20 }, 1, function(acc, x) return acc + coroutine.yield(x) end), m
  end)
  local seen = {}
  local okResume, value = coroutine.resume(co)
  while okResume and coroutine.status(co) == "suspended" do
    seen[#seen + 1] = value
    okResume, value = coroutine.resume(co, type(value) == "string" and value:upper() or value)
  end
  ok(okResume, value)
  eq(value, 31)
  eq(#seen, 6)
  eq(seen[1], 1); eq(seen[2], 2); eq(seen[5], 10); eq(seen[6], 20)
  -- Outside a coroutine, a yielding block gets Lua's error, unchanged.
  local okCall, err = pcall(bk.each, { 1 }, function() coroutine.yield() end)
  ok(not okCall)
  ok(tostring(err):find("outside a coroutine", 1, true), err)
end)

test("a coroutine closed while a block is suspended mid-walk leaves nothing behind", function()
  local co = coroutine.create(function()
    local closed <close> = setmetatable({}, { __close = function() end })  -- luacheck: ignore 211 (closed with the coroutine)
    bk.map({ 1, 2, 3 }, function(x) coroutine.yield() return x end)
  end)
  coroutine.resume(co)
  eq(coroutine.status(co), "suspended")
  ok(coroutine.close(co))
  collectgarbage()
  eq(bk.map({ 1 }, function(x) return x + 1 end)[1], 2)
end)

test("deep recursion through helpers ends with a stack overflow error, not a crash", function()
  local function deep(n) return bk.map({ n }, function(x) return deep(x + 1) end) end
  local okCall, err = pcall(deep, 1)
  ok(not okCall)
  ok(tostring(err):find("overflow", 1, true), err)
end)

test("over lists, select, reject, map, each and reduce suspend and raise unchanged (Lua and C walks)", function()
  -- select, reject and reduce continue into ListWalks.lua (a Lua->Lua call per element), map and
  -- each take the C walk: in both, a block may yield mid-walk and its error value arrives unchanged.
  local E = setmetatable({}, { __name = "E" })
  for _, make in ipairs({ function(t) return t end, function(t) return bk.array(t) end }) do
    local co = coroutine.create(function()
      local kept = bk.select(make({ 1, 2, 3, 4 }), function(x) return coroutine.yield(x) end)
      local dropped = bk.reject(make({ 1, 2, 3 }), function(x) return coroutine.yield(x) end)
      local mapped = bk.map(make({ 1, 2 }), function(x) return coroutine.yield(x) end)
      local sum = bk.reduce(make({ 5, 6 }), 0, function(a, x) return a + coroutine.yield(x) end)
      local seen = 0
      bk.each(make({ 7, 8 }), function(x) seen = seen + coroutine.yield(x) end)
      return kept, dropped, mapped, sum, seen
    end)
    local answers = { true, false, true, false, true, false, false, 10, 20, 1, 2, 3, 4 }
    local okResume, kept, dropped, mapped, sum, seen = coroutine.resume(co)
    local turn = 0
    while okResume and coroutine.status(co) == "suspended" do
      turn = turn + 1
      okResume, kept, dropped, mapped, sum, seen = coroutine.resume(co, answers[turn])
    end
    ok(okResume, kept)
    eq(turn, 13)
    deepEq({ kept[1], kept[2], #kept }, { 1, 3, 2 })
    deepEq({ dropped[1], dropped[2], #dropped }, { 2, 3, 2 })
    ok(mapped[1] == 10 and mapped[2] == 20 and #mapped == 2)
    eq(sum, 3)
    eq(seen, 7)
    for _, call in ipairs({ function(f) return bk.select(make({ 1, 2 }), f) end,
                            function(f) return bk.reject(make({ 1, 2 }), f) end,
                            function(f) return bk.map(make({ 1, 2 }), f) end,
                            function(f) return bk.each(make({ 1, 2 }), f) end,
                            function(f) return bk.reduce(make({ 1, 2 }), 0, function(_, x) return f(x) end) end }) do
      local okCall, err = pcall(call, function(x) if x == 2 then error(E) end return true end)
      ok(not okCall and rawequal(err, E), tostring(err))
      okCall, err = pcall(call, function() error(42) end)
      ok(not okCall and err == 42, tostring(err))
    end
  end
  -- reduce walks every list kind in Lua (a set's select keeps its membership in Swift).
  local co = coroutine.wrap(function()
    return bk.reduce(bk.orderedSet({ 4, 5 }), 1, function(a, x) return a * coroutine.yield(x) end)
  end)
  eq(co(), 4)
  eq(co(2), 5)
  eq(co(3), 6)
end)

test("a list with a foreign metatable is still read raw (its __index never runs)", function()
  -- Such lists keep the C walk (raw reads): in Lua, t[i] at the hole would ask __index.
  local asked = 0
  local meta = { __index = function(_, k) asked = asked + 1 return k * 10 end }
  local function make() return setmetatable({ 1, 2, nil, 4 }, meta) end
  local all = function() return true end
  eq(#bk.select(make(), all), 2)
  eq(#bk.reject(make(), function() return false end), 2)
  eq(#bk.map(make(), function(x) return x end), 2)
  local seen = 0
  bk.each(make(), function() seen = seen + 1 end)
  eq(seen, 2)
  eq(bk.reduce(make(), 0, function(a, x) return a + x end), 3)
  eq(asked, 0)
  -- A bk kind's list with a hole stops there too.
  local a = bk.array({ 1, 2 })
  a[4] = 4
  eq(#bk.select(a, all), 2)
  eq(bk.reduce(a, 0, function(acc, x) return acc + x end), 3)
end)
