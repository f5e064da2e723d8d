-- Collections on observed tables: observing a key moves its value out of the raw table (into the
-- observation store), yet every helper must see the full contents, and the in-place helpers must
-- write through the observation (observers notified, the table still observed and consistent).

local function noop() end

-- Sorted "k=v" list of a table's raw contents (results of helpers are fresh, unobserved tables).
local function entries(t)
  local out = {}
  for k, v in next, t do out[#out + 1] = tostring(k) .. "=" .. tostring(v) end
  table.sort(out)
  return table.concat(out, " ")
end

-- Contents through ordinary indexing (an observed table's fields included).
local function listOf(t)
  local out = {}
  for i = 1, #t do out[i] = t[i] end
  return out
end

-- Builders of each kind; `observed` are the keys that get observed.
local kinds = {
  { name = "plain list", make = function() return { 1, 2, 3, 4 } end, observed = { 1, 3 } },
  { name = "array", make = function() return bk.array { 1, 2, 3, 4 } end, observed = { 2, 3 } },
  { name = "set", make = function() return bk.set { 1, 2, 3, 4 } end, observed = { 3 } },
  { name = "orderedSet", make = function() return bk.orderedSet { 1, 2, 3, 4 } end, observed = { 1 } },
  { name = "indexSet", make = function() return bk.indexSet { 1, 2, 3, 4 } end, observed = { 2, 4 } },
  { name = "plain dictionary", make = function() return { a = 1, b = 2, c = 3, d = 4 } end,
    observed = { "b", "d" } },
  { name = "dictionary", make = function() return bk.dictionary { a = 1, b = 2, c = 3, d = 4 } end,
    observed = { "a" } },
}

local function observe(t, keys, task)
  return bk.addObserverForKeyPaths(t, keys, task or noop)
end

-- A fresh collection of `kind`, observed; checks the observed values really left the raw table.
local function observedOf(kind)
  local t = kind.make()
  observe(t, kind.observed)
  for _, k in ipairs(kind.observed) do
    eq(rawget(t, k), nil, kind.name .. ": observed key " .. tostring(k) .. " moved out")
    ok(t[k] ~= nil, kind.name .. ": observed key still readable")
  end
  return t
end

local function isDictionary(kind) return kind.name:find("dictionary") ~= nil end

-- Runs `probe(c)` on an unobserved and an observed collection of every kind: same answer.
local function sameOnBoth(what, probe)
  for _, kind in ipairs(kinds) do
    local expected = probe(kind.make(), kind)
    local got = probe(observedOf(kind), kind)
    eq(got, expected, what .. " on an observed " .. kind.name)
  end
end

-- Non-mutating helpers --------------------------------------------------------------------------

test("each and apply visit the observed elements", function()
  for _, name in ipairs({ "each", "apply" }) do
    sameOnBoth(name, function(c)
      local seen = {}
      bk[name](c, function(a, b) seen[#seen + 1] = tostring(a) .. "/" .. tostring(b) end)
      table.sort(seen)
      return table.concat(seen, " ")
    end)
  end
end)

test("each on an observed person sees the observed name", function()
  local person = { name = "Ada", age = 36 }
  observe(person, { "name" })
  local seen = {}
  bk.each(person, function(k, v) seen[k] = v end)
  eq(seen.name, "Ada")
  eq(seen.age, 36)
end)

test("match finds an observed element", function()
  sameOnBoth("match", function(c, kind)
    local target = kind.make()[kind.observed[1]]
    if isDictionary(kind) then
      return bk.match(c, function(_, v) return v == target end)
    end
    return bk.match(c, function(v) return v == target end)
  end)
end)

test("select, reject and map see the observed elements", function()
  for _, name in ipairs({ "select", "reject" }) do
    sameOnBoth(name, function(c, kind)
      local r = bk[name](c, function(a, b) return (isDictionary(kind) and b or a) % 2 == 1 end)
      return bk.kind(r) .. ": " .. entries(r)
    end)
  end
  sameOnBoth("map", function(c, kind)
    local r = bk.map(c, function(a, b) return (isDictionary(kind) and b or a) * 10 end)
    return bk.kind(r) .. ": " .. entries(r)
  end)
end)

test("map on an observed list goes past the first observed index", function()
  local t = { 1, 2, 3, 4 }
  observe(t, { 2 })
  deepEq(bk.map(t, function(v) return v + 1 end), { 2, 3, 4, 5 })
end)

test("reduce, reduceInteger and reduceFloat sum the observed elements", function()
  for _, name in ipairs({ "reduce", "reduceInteger", "reduceFloat" }) do
    sameOnBoth(name, function(c, kind)
      return bk[name](c, 0, function(acc, a, b) return acc + (isDictionary(kind) and b or a) end)
    end)
  end
end)

test("any, none and all see the observed elements", function()
  sameOnBoth("any/none/all", function(c, kind)
    local target = kind.make()[kind.observed[1]]
    local function value(a, b) return isDictionary(kind) and b or a end
    local function isTarget(a, b) return value(a, b) == target end
    local function notTarget(a, b) return value(a, b) ~= target end
    return tostring(bk.any(c, isTarget)) .. tostring(bk.none(c, isTarget)) .. tostring(bk.all(c, notTarget))
  end)
end)

test("corresponds pairs observed elements on either side", function()
  for _, kind in ipairs(kinds) do
    local function same(a, b) return a == b end
    local plain = kind.make()
    local observed = observedOf(kind)
    eq(bk.corresponds(observed, plain, same), true, kind.name .. " (observed, plain)")
    eq(bk.corresponds(plain, observed, same), true, kind.name .. " (plain, observed)")
    eq(bk.corresponds(observed, observedOf(kind), same), true, kind.name .. " (both observed)")
  end
end)

test("kind and count see the observed elements", function()
  sameOnBoth("kind", function(c) return bk.kind(c) end)
  for _, kind in ipairs(kinds) do
    if not kind.name:find("plain") then
      eq(observedOf(kind):bk_count(), kind.make():bk_count(), "count of an observed " .. kind.name)
    end
  end
  -- A plain list whose first position is observed is still an array.
  local t = { 10, 20, x = 1 }
  observe(t, { 1 })
  eq(bk.kind(t), "array")
end)

test("set, orderedSet and indexSet built from an observed collection", function()
  sameOnBoth("constructors", function(c)
    return entries(bk.set(c)) .. " | " .. entries(bk.orderedSet(c))
  end)
  local t = { 3, 1, 2 }
  observe(t, { 1 })
  deepEq(listOf(bk.indexSet(t)), { 1, 2, 3 })
end)

test("an unobserved collection is not copied (a block's changes are seen)", function()
  local t = { 1, 2, 3 }
  local seen = {}
  bk.each(t, function(v)
    seen[#seen + 1] = v
    t[3] = 30
  end)
  deepEq(seen, { 1, 2, 30 })
end)

-- In-place helpers ------------------------------------------------------------------------------

-- Runs `perform(c)` on an unobserved and an observed collection of every kind; after removing
-- the observation the contents must be the same. Returns nothing; checks notifications happened.
local function performSame(what, perform)
  for _, kind in ipairs(kinds) do
    local plain = kind.make()
    perform(plain, kind)
    local observed = kind.make()
    local id = observe(observed, kind.observed)
    eq(perform(observed, kind), observed, what .. " returns the table")
    bk.removeObserversWithIdentifier(observed, id)
    eq(entries(observed), entries(plain), what .. " on an observed " .. kind.name)
    if kind.name:find("set", 1, true) then
      for _, v in ipairs(plain) do ok(observed:contains(v), what .. ": membership of " .. tostring(v)) end
      eq(#observed, #plain)
    end
  end
end

test("performSelect, performReject and performMap give the unobserved results", function()
  performSame("performSelect", function(c, kind)
    return bk.performSelect(c, function(a, b) return (isDictionary(kind) and b or a) % 2 == 0 end)
  end)
  performSame("performReject", function(c, kind)
    return bk.performReject(c, function(a, b) return (isDictionary(kind) and b or a) % 2 == 0 end)
  end)
  performSame("performMap", function(c, kind)
    return bk.performMap(c, function(a, b) return (isDictionary(kind) and b or a) * 3 end)
  end)
  performSame("performMap (set duplicates)", function(c, kind)
    return bk.performMap(c, function(a, b) return (isDictionary(kind) and b or a) // 2 end)
  end)
end)

test("performSelect on an observed list notifies the changed positions and stays observed", function()
  local t = { 1, 2, 3, 4, 5 }
  local log = {}
  bk.addObserverForKeyPaths(t, { 2, 3, 5 }, { "new", "old" }, function(_, kp, change)
    log[#log + 1] = tostring(kp) .. ":" .. tostring(change.old) .. ">" .. tostring(change.new)
  end)
  eq(bk.performSelect(t, function(v) return v % 2 == 1 end), t)
  -- {1, 3, 5}: position 2 becomes 3, position 3 becomes 5, positions 5 and 4 are cleared.
  deepEq(listOf(t), { 1, 3, 5 })
  eq(#t, 3)
  eq(table.concat(log, " "), "2:2>3 3:3>5 5:5>nil")
  log = {}
  t[2] = 7
  eq(table.concat(log, " "), "2:3>7", "still observed")
  eq(rawget(t, 2), nil)
  bk.removeAllBlockObservers(t)
  deepEq(t, { 1, 7, 5 })
  eq(getmetatable(t), nil)
end)

test("performReject on an observed dictionary notifies the removed key", function()
  local person = bk.dictionary { name = "Ada", age = 36, city = "London" }
  local changes = {}
  bk.addObserverForKeyPath(person, "name", { "new", "old" }, function(_, change)
    changes[#changes + 1] = change
  end)
  bk.performReject(person, function(k) return k == "name" or k == "city" end)
  eq(#changes, 1)
  eq(changes[1].old, "Ada")
  eq(changes[1].new, nil)
  eq(person.name, nil)
  bk.removeAllBlockObservers(person)
  deepEq(person, { age = 36 })
  eq(bk.kind(person), "dictionary")
end)

test("performMap on an observed dictionary and array notifies the observers", function()
  local d = { a = 1, b = 2 }
  local news = {}
  bk.addObserverForKeyPath(d, "b", { "new" }, function(_, c) news[#news + 1] = c.new end)
  bk.performMap(d, function(_, v) return v * 10 end)
  deepEq(news, { 20 })
  eq(d.a, 10)
  eq(d.b, 20)
  local a = bk.array { 1, 2, 3 }
  local calls = 0
  bk.addObserverForKeyPath(a, 1, function() calls = calls + 1 end)
  bk.performMap(a, function(v) return v == 1 and 1 or v + 1 end)
  eq(calls, 0, "an unchanged position is not assigned")
  bk.performMap(a, function(v) return v + 1 end)
  eq(calls, 1)
  deepEq(listOf(a), { 2, 4, 5 })
end)

test("performMap on an observed set keeps its membership right", function()
  local s = bk.set { 1, 2, 3 }
  local news = {}
  bk.addObserverForKeyPath(s, 2, { "new" }, function(_, c) news[#news + 1] = c.new end)
  bk.performMap(s, function(v) return v * 10 end)
  deepEq(news, { 20 })
  ok(s:contains(20))
  ok(not s:contains(2))
  eq(s:count(), 3)
  bk.removeAllBlockObservers(s)
  deepEq(listOf(s), { 10, 20, 30 })
  eq(s:add(10), false)
  eq(s:add(2), true)
end)

test("a raising block leaves an observed list as it leaves an unobserved one", function()
  local function run(t)
    local calls = 0
    local okCall = pcall(bk.performReject, t, function(v)
      calls = calls + 1
      if calls == 3 then error("boom") end
      return v == 1
    end)
    eq(okCall, false)
    return t
  end
  local plain = run({ 1, 2, 3, 4 })
  local observed = { 1, 2, 3, 4 }
  local log = {}
  bk.addObserverForKeyPaths(observed, { 1, 4 }, function(_, kp) log[#log + 1] = kp end)
  run(observed)
  deepEq(listOf(observed), listOf(plain))
  eq(table.concat(log, " "), "1 4")
  bk.removeAllBlockObservers(observed)
  deepEq(observed, plain)
end)

test("a raising block's error reaches the caller of an in-place helper on an observed table", function()
  local t = { 1, 2 }
  observe(t, { 1 })
  raises("boom", bk.performMap, t, function() error("boom") end)
  raises("bad argument #2 to 'performMap' (function expected, got nil)", bk.performMap, t, nil)
  deepEq(listOf(t), { 1, 2 })
end)
