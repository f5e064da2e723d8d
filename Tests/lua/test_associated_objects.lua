-- Associated objects: values on tables, userdata, functions and coroutines; lifetimes; copies.

local function full() collectgarbage(); collectgarbage() end

-- Counts live objects whose __gc has not yet run.
local function tracked()
  local box = { alive = 0 }
  function box.new()
    box.alive = box.alive + 1
    return setmetatable({}, { __gc = function() box.alive = box.alive - 1 end })
  end
  return box
end

test("associate and read back on every kind of object", function()
  local objects = { {}, io.stdout, print, function() end, coroutine.create(function() end), bk.set() }
  for i, obj in ipairs(objects) do
    bk.associateValue(obj, "k", i)
    eq(bk.associatedValueForKey(obj, "k"), i, type(obj))
    eq(bk.associatedValueForKey(obj, "other"), nil)
  end
  for _, obj in ipairs(objects) do bk.removeAllAssociatedObjects(obj) end
end)

test("associations are per object and per key, any non-nil key", function()
  local a, b, keyTable = {}, {}, {}
  bk.associateValue(a, "x", 1)
  bk.associateValue(b, "x", 2)
  bk.associateValue(a, keyTable, "by table")
  bk.associateValue(a, 3, "by number")
  eq(bk.associatedValueForKey(a, "x"), 1)
  eq(bk.associatedValueForKey(b, "x"), 2)
  eq(bk.associatedValueForKey(a, keyTable), "by table")
  eq(bk.associatedValueForKey(a, 3), "by number")
  eq(bk.associatedValueForKey(a, 3.0), "by number")
end)

test("the object itself is not changed", function()
  local t = {}
  bk.associateValue(t, "hidden", 1)
  eq(next(t), nil)
  eq(getmetatable(t), nil)
end)

test("nil removes one association; removeAllAssociatedObjects removes them all", function()
  local t = {}
  bk.associateValue(t, "a", 1)
  bk.associateValue(t, "b", 2)
  bk.associateValue(t, "a", nil)
  eq(bk.associatedValueForKey(t, "a"), nil)
  eq(bk.associatedValueForKey(t, "b"), 2)
  bk.removeAllAssociatedObjects(t)
  eq(bk.associatedValueForKey(t, "b"), nil)
  bk.removeAllAssociatedObjects(t)  -- twice is fine
  bk.removeAllAssociatedObjects({})  -- never associated is fine
end)

test("atomically variants behave like the plain ones", function()
  local t = {}
  bk.atomicallyAssociateValue(t, "k", "v")
  eq(bk.associatedValueForKey(t, "k"), "v")
  local value = { 1 }
  bk.atomicallyAssociateCopyOfValue(t, "c", value)
  local copy = bk.associatedValueForKey(t, "c")
  ok(copy ~= value)
  eq(copy[1], 1)
end)

test("copy variants shallow-copy tables", function()
  local inner = {}
  local value = setmetatable({ 1, 2, name = "x", inner = inner }, { tag = "meta" })
  local t = {}
  bk.associateCopyOfValue(t, "k", value)
  local copy = bk.associatedValueForKey(t, "k")
  ok(copy ~= value)
  eq(copy[1], 1); eq(copy[2], 2); eq(copy.name, "x")
  eq(copy.inner, inner)  -- shallow
  eq(getmetatable(copy), getmetatable(value))
  value.name = "changed"
  eq(copy.name, "x")
  bk.associateCopyOfValue(t, "s", "strings are values")
  eq(bk.associatedValueForKey(t, "s"), "strings are values")
end)

test("a copied set is independent of the original", function()
  local s = bk.set { 1, 2 }
  local t = {}
  bk.associateCopyOfValue(t, "k", s)
  local copy = bk.associatedValueForKey(t, "k")
  eq(bk.kind(copy), "set")
  s:add(3)
  ok(not copy:contains(3))
  eq(copy:add(3), true)
  ok(copy:contains(1))
end)

test("associations never keep the object alive", function()
  local box = tracked()
  do
    local obj = box.new()
    bk.associateValue(obj, "k", "v")
    bk.associateValue(obj, "self", obj)  -- even a value referring back to the object
  end
  eq(box.alive, 1)
  full()
  eq(box.alive, 0)
end)

test("associated values die with their object", function()
  local box = tracked()
  local values = setmetatable({}, { __mode = "v" })
  do
    local obj = {}
    local value = box.new()
    values[1] = value
    bk.associateValue(obj, "k", value)
  end
  full()
  eq(values[1], nil)
  eq(box.alive, 0)
end)

test("strong associations keep the value alive", function()
  local obj = {}
  local values = setmetatable({}, { __mode = "v" })
  do
    local value = {}
    values[1] = value
    bk.associateValue(obj, "k", value)
  end
  full()
  ok(values[1] ~= nil)
  eq(bk.associatedValueForKey(obj, "k"), values[1])
end)

test("weak associations read nil once the value is collected", function()
  local obj = {}
  local keep = {}
  bk.weaklyAssociateValue(obj, "k", keep)
  full()
  eq(bk.associatedValueForKey(obj, "k"), keep)
  do
    local value = {}
    bk.weaklyAssociateValue(obj, "gone", value)
    eq(bk.associatedValueForKey(obj, "gone"), value)
  end
  full()
  eq(bk.associatedValueForKey(obj, "gone"), nil)
  eq(bk.associatedValueForKey(obj, "k"), keep)
  bk.weaklyAssociateValue(obj, "n", 42)  -- non-collectable values stay
  full()
  eq(bk.associatedValueForKey(obj, "n"), 42)
end)

test("a weakly associated table value is returned as itself, not a box", function()
  local obj, value = {}, { 1 }
  bk.weaklyAssociateValue(obj, "k", value)
  eq(rawequal(bk.associatedValueForKey(obj, "k"), value), true)
end)

test("bad arguments", function()
  raises("bad argument #1 to 'associateValue' (table, userdata, function or thread expected, got string)",
    bk.associateValue, "s", "k", 1)
  raises("bad argument #1 to 'associatedValueForKey' (table, userdata, function or thread expected, got nil)",
    bk.associatedValueForKey, nil, "k")
  raises("bad argument #1 to 'removeAllAssociatedObjects' (table, userdata, function or thread expected, got number)",
    bk.removeAllAssociatedObjects, 1)
  raises("bad argument #2 to 'associateValue' (key must not be nil)", bk.associateValue, {}, nil, 1)
  raises("bad argument #2 to 'weaklyAssociateValue' (key must not be NaN)", bk.weaklyAssociateValue, {}, 0 / 0, 1)
  raises("bad argument #2 to 'associatedValueForKey' (value expected)", bk.associatedValueForKey, {})
  raises("bad argument #1 to 'associateCopyOfValue' (table, userdata, function or thread expected, got boolean)",
    bk.associateCopyOfValue, true, "k", {})
  raises("bad argument #1 to 'atomicallyAssociateValue' (table, userdata, function or thread expected, got no value)",
    bk.atomicallyAssociateValue)
end)

test("many objects: associations are reclaimed", function()
  full()
  local before = collectgarbage("count")
  for i = 1, 20000 do bk.associateValue({}, "k", { i }) end
  full()
  ok(collectgarbage("count") < before + 200, "memory stays flat: " .. (collectgarbage("count") - before))
end)
