-- Observation: bk.addObserverForKeyPath and friends on Lua tables, the seeds' aliases.

local function recorder()
  local calls = {}
  local function task(...) calls[#calls + 1] = table.pack(...) end
  return calls, task
end

local function sortedKeys(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = tostring(k) end
  table.sort(keys)
  return table.concat(keys, ",")
end

-- Basic notifications ------------------------------------------------------------------------

test("no options: task(obj) on every set, even of an equal value", function()
  local t = { a = 1 }
  local calls, task = recorder()
  local id = bk.addObserverForKeyPath(t, "a", task)
  eq(type(id), "string")
  t.a = 2
  t.a = 2
  eq(#calls, 2)
  eq(calls[1].n, 1)
  eq(calls[1][1], t)
  eq(t.a, 2)
end)

test("other keys do not notify", function()
  local t = { a = 1, b = 1 }
  local calls, task = recorder()
  bk.addObserverForKeyPath(t, "a", task)
  t.b = 5
  t.c = 6
  eq(#calls, 0)
  eq(rawget(t, "b"), 5)
  eq(rawget(t, "c"), 6)
end)

test("rawset is not seen", function()
  local t = { a = 1 }
  local calls, task = recorder()
  bk.addObserverForKeyPath(t, "a", task)
  rawset(t, "a", 3)
  eq(#calls, 0)
end)

test("options new and old fill the change table", function()
  local t = { a = 1 }
  local calls, task = recorder()
  bk.addObserverForKeyPath(t, "a", { "new", "old" }, task)
  t.a = 2
  eq(#calls, 1)
  local change = calls[1][2]
  eq(change.kind, "setting")
  eq(change.new, 2)
  eq(change.old, 1)
  eq(change.prior, nil)
end)

test("only new / only old / empty options", function()
  local t = { a = 1 }
  local onlyNew, onlyOld, none = {}, {}, {}
  bk.addObserverForKeyPath(t, "a", { "new" }, function(_, c) onlyNew[#onlyNew + 1] = c end)
  bk.addObserverForKeyPath(t, "a", { "old" }, function(_, c) onlyOld[#onlyOld + 1] = c end)
  bk.addObserverForKeyPath(t, "a", {}, function(_, c) none[#none + 1] = c end)
  t.a = 7
  eq(onlyNew[1].new, 7); eq(onlyNew[1].old, nil)
  eq(onlyOld[1].old, 1); eq(onlyOld[1].new, nil)
  eq(none[1].kind, "setting"); eq(none[1].new, nil); eq(none[1].old, nil)
end)

test("initial calls the task at once with the current value", function()
  local t = { a = "x" }
  local calls, task = recorder()
  bk.addObserverForKeyPath(t, "a", { "initial", "new", "old" }, task)
  eq(#calls, 1)
  eq(calls[1][2].new, "x")
  eq(calls[1][2].old, nil)
  eq(calls[1][2].prior, nil)
  t.a = "y"
  eq(#calls, 2)
  eq(calls[2][2].new, "y")
  eq(calls[2][2].old, "x")
end)

test("prior: a notification before the set (old value still visible), then after", function()
  local t = { a = 1 }
  local log = {}
  bk.addObserverForKeyPath(t, "a", { "prior", "new", "old" }, function(o, c)
    log[#log + 1] = string.format("%s old=%s new=%s seen=%s", c.prior and "prior" or "post",
      tostring(c.old), tostring(c.new), tostring(o.a))
  end)
  t.a = 2
  eq(#log, 2)
  eq(log[1], "prior old=1 new=nil seen=1")
  eq(log[2], "post old=1 new=2 seen=2")
end)

test("prior notifications of all observers come before any post notification", function()
  local t = { a = 1 }
  local log = {}
  bk.addObserverForKeyPath(t, "a", { "prior" }, function(_, c) log[#log + 1] = c.prior and "1p" or "1" end)
  bk.addObserverForKeyPath(t, "a", { "prior" }, function(_, c) log[#log + 1] = c.prior and "2p" or "2" end)
  t.a = 2
  eq(table.concat(log, " "), "1p 2p 1 2")
end)

test("initial and prior together: initial first, never marked prior", function()
  local t = { a = 1 }
  local log = {}
  bk.addObserverForKeyPath(t, "a", { "initial", "prior", "new" }, function(_, c)
    log[#log + 1] = (c.prior and "prior:" or "post:") .. tostring(c.new)
  end)
  t.a = 2
  eq(table.concat(log, " "), "post:1 prior:nil post:2")
end)

test("distinct skips sets of an equal value", function()
  local t = { a = 1 }
  local calls, task = recorder()
  bk.addObserverForKeyPath(t, "a", { "distinct", "new" }, task)
  t.a = 1
  eq(#calls, 0)
  t.a = 2
  t.a = 2
  eq(#calls, 1)
  t.a = nil
  eq(#calls, 2)
  eq(calls[2][2].new, nil)
end)

test("options in the key form: {new = true, old = true} is {\"new\", \"old\"}; false leaves one off", function()
  local t = { a = 1 }
  local calls, task = recorder()
  bk.addObserverForKeyPath(t, "a", { new = true, old = true, prior = false }, task)
  t.a = 2
  eq(#calls, 1, "no prior call")
  eq(calls[1][2].new, 2)
  eq(calls[1][2].old, 1)
  local mixed = {}
  bk.addObserverForKeyPaths(mixed, { "x" }, { "new", initial = true, identifier = "m" }, task)
  eq(#calls, 2, "initial ran")
  eq(table.concat(bk.observers(mixed)[1].options, ","), "new,initial")
  eq(bk.observers(mixed)[1].identifier, "m")
  local eased, observer = { z = 1 }, {}
  bk.cc_easyObserve(observer, eased, "z", { old = true }, task)
  eased.z = 5
  eq(calls[3][2].old, 1)
  eq(calls[3][2].new, nil, "new not asked for")
end)

test("unknown or misspelled options are refused in both forms, for every options argument", function()
  raises("bad argument #3 to 'addObserverForKeyPath' (invalid option 'idenitfier'; expected",
    bk.addObserverForKeyPath, {}, "a", { idenitfier = "x" }, function() end)
  raises("identifier = ..., observer = ...",
    bk.addObserverForKeyPath, {}, "a", { neww = true }, function() end)
  raises("bad argument #3 to 'addObserverForKeyPaths' (invalid option 'neww'",
    bk.addObserverForKeyPaths, {}, { "a" }, { "neww" }, function() end)
  raises("bad argument #3 to 'addObserverForKeyPath' (option 'new' must be true or false (got number))",
    bk.addObserverForKeyPath, {}, "a", { new = 1 }, function() end)
  raises("bad argument #3 to 'addObserverForKeyPath' (invalid option [5]",
    bk.addObserverForKeyPath, {}, "a", { [5] = "new" }, function() end)
  -- cc_easyObserve's observer and identifier are its own: they are not options there.
  raises("bad argument #4 to 'cc_easyObserve' (invalid option 'identifier'",
    bk.cc_easyObserve, {}, {}, "a", { identifier = "x" }, function() end)
  raises("bad argument #4 to 'cc_easyObserve' (invalid option 'nwe'",
    bk.cc_easyObserve, {}, {}, "a", { nwe = true }, function() end)
end)

test("a string where options or the task go: 'table or function expected'", function()
  raises("bad argument #3 to 'addObserverForKeyPath' (table or function expected, got string)",
    bk.addObserverForKeyPath, {}, "a", "new", print)
  raises("bad argument #3 to 'addObserverForKeyPaths' (table or function expected, got string)",
    bk.addObserverForKeyPaths, {}, { "a" }, "new", print)
end)

test("invalid options are argument errors", function()
  raises("bad argument #3 to 'addObserverForKeyPath' (invalid option 'newest'; expected \"new\", \"old\"",
    bk.addObserverForKeyPath, {}, "a", { "newest" }, function() end)
  raises("bad argument #4 to 'addObserverForKeyPath' (function expected, got no value)",
    bk.addObserverForKeyPath, {}, "a", { "new" })
  raises("bad argument #3 to 'addObserverForKeyPath' (table or function expected, got no value)",
    bk.addObserverForKeyPath, {}, "a")
  raises("bad argument #1 to 'addObserverForKeyPath' (table expected, got number)",
    bk.addObserverForKeyPath, 5, "a", function() end)
  raises("bad argument #2 to 'addObserverForKeyPath' (invalid key path 'a..b')",
    bk.addObserverForKeyPath, {}, "a..b", function() end)
  raises("bad argument #2 to 'addObserverForKeyPaths' (table expected, got string)",
    bk.addObserverForKeyPaths, {}, "a", function() end)
  raises("bad argument #3 to 'removeObserverForKeyPath' (string expected, got no value)",
    bk.removeObserverForKeyPath, {}, "a")
  raises("bad argument #1 to 'observers' (table expected, got no value)", bk.observers)
end)

-- Several key paths ---------------------------------------------------------------------------

test("addObserverForKeyPaths: task(obj, keyPath) and task(obj, keyPath, change)", function()
  local t = { a = 1, b = 2 }
  local plain, task = recorder()
  local withChange, task2 = recorder()
  bk.addObserverForKeyPaths(t, { "a", "b" }, task)
  bk.addObserverForKeyPaths(t, { "a", "b" }, { "new", "initial" }, task2)
  eq(#withChange, 2)   -- initial, once per key path, in order
  eq(withChange[1][2], "a"); eq(withChange[1][3].new, 1)
  eq(withChange[2][2], "b"); eq(withChange[2][3].new, 2)
  t.b = 20
  t.a = 10
  eq(#plain, 2)
  eq(plain[1][2], "b"); eq(plain[1].n, 2)
  eq(plain[2][2], "a")
  eq(withChange[3][2], "b"); eq(withChange[3][3].new, 20)
  eq(#bk.observers(t), 2)
  eq(#bk.observers(t)[1].keyPaths, 2)
end)

-- Identifiers and removal ---------------------------------------------------------------------

test("an identifier given in options is returned, and adding it again replaces", function()
  local t = { a = 1 }
  local first, second = 0, 0
  eq(bk.addObserverForKeyPath(t, "a", { identifier = "mine" }, function() first = first + 1 end), "mine")
  eq(bk.addObserverForKeyPath(t, "a", { identifier = "mine" }, function() second = second + 1 end), "mine")
  t.a = 2
  eq(first, 0)
  eq(second, 1)
  eq(#bk.observers(t), 1)
end)

test("generated identifiers are distinct", function()
  local t = {}
  local a = bk.addObserverForKeyPath(t, "a", function() end)
  local b = bk.addObserverForKeyPath(t, "a", function() end)
  ok(a ~= b)
end)

test("removeObserverForKeyPath removes one key path of one identifier", function()
  local t = { a = 1, b = 1 }
  local calls, task = recorder()
  local id = bk.addObserverForKeyPaths(t, { "a", "b" }, task)
  bk.removeObserverForKeyPath(t, "a", id)
  t.a = 2
  eq(#calls, 0)
  t.b = 2
  eq(#calls, 1)
  eq(bk.observers(t)[1].keyPaths[1], "b")
  bk.removeObserverForKeyPath(t, "b", id)
  eq(#bk.observers(t), 0)
  eq(getmetatable(t), nil)
end)

test("removeObserversWithIdentifier leaves the others", function()
  local t = { a = 1 }
  local one, two = 0, 0
  local id1 = bk.addObserverForKeyPath(t, "a", function() one = one + 1 end)
  bk.addObserverForKeyPath(t, "a", function() two = two + 1 end)
  bk.removeObserversWithIdentifier(t, id1)
  t.a = 2
  eq(one, 0)
  eq(two, 1)
  bk.removeObserversWithIdentifier(t, "no such identifier")
  eq(#bk.observers(t), 1)
end)

test("removeAllBlockObservers removes everything", function()
  local t = { a = 1, b = 2 }
  local calls, task = recorder()
  bk.addObserverForKeyPath(t, "a", task)
  bk.addObserverForKeyPaths(t, { "a", "b" }, task)
  bk.removeAllBlockObservers(t)
  t.a, t.b = 3, 4
  eq(#calls, 0)
  eq(#bk.observers(t), 0)
  bk.removeAllBlockObservers({})   -- never observed: nothing to do
end)

test("observers lists identifier, keyPaths, options and observer", function()
  local t = {}
  local owner = {}
  bk.addObserverForKeyPath(t, "x.y", { "old", "new", identifier = "i1", observer = owner }, function() end)
  local list = bk.observers(t)
  eq(#list, 1)
  eq(list[1].identifier, "i1")
  eq(list[1].keyPaths[1], "x.y")
  eq(table.concat(list[1].options, ","), "new,old")
  eq(list[1].observer, owner)
  eq(#bk.observers({}), 0)
end)

-- The table keeps working, and is restored -------------------------------------------------------

test("pairs, next, ipairs and # see observed fields", function()
  local t = { 1, 2, 3, a = "x", b = "y" }
  bk.addObserverForKeyPath(t, "a", function() end)
  bk.addObserverForKeyPath(t, 2, function() end)
  eq(rawget(t, "a"), nil)          -- moved out so that writes are seen
  eq(t.a, "x")
  eq(sortedKeys(t), "1,2,3,a,b")
  local viaNext = {}
  for k, v in next, t do viaNext[#viaNext + 1] = tostring(k) .. "=" .. tostring(v) end
  table.sort(viaNext)
  eq(table.concat(viaNext, " "), "1=1 2=2 3=3 a=x b=y")
  local list = {}
  for i, v in ipairs(t) do list[i] = v end
  eq(table.concat(list, ","), "1,2,3")
  eq(#t, 3)
  eq(table.concat(t, ","), "1,2,3")
end)

test("next(t) on a table whose only fields are observed", function()
  local t = { a = 1 }
  bk.addObserverForKeyPath(t, "a", function() end)
  eq(next(t), "a")
  t.a = nil
  eq(next(t), nil)
  t.a = 2
  eq(select(2, next(t)), 2)
end)

test("# grows with observed integer keys; table.insert notifies", function()
  local t = {}
  local calls, task = recorder()
  bk.addObserverForKeyPath(t, 1, { "new" }, task)
  bk.addObserverForKeyPath(t, 2, { "new" }, task)
  table.insert(t, "a")
  table.insert(t, "b")
  table.insert(t, "c")
  eq(#t, 3)
  eq(#calls, 2)
  eq(calls[2][2].new, "b")
  eq(table.concat(t, ""), "abc")
end)

test("clearing an observed field during pairs is fine", function()
  local t = { a = 1, b = 2, c = 3 }
  bk.addObserverForKeyPath(t, "a", function() end)
  bk.addObserverForKeyPath(t, "b", function() end)
  for k in pairs(t) do t[k] = nil end
  eq(next(t), nil)
end)

test("removing the last observation restores fields and metatable", function()
  local t = { 1, 2, a = "x", b = { deep = true } }
  local before = {}
  for k, v in next, t do before[k] = v end
  bk.addObserverForKeyPath(t, "a", function() end)
  local id = bk.addObserverForKeyPaths(t, { "b", 1 }, function() end)
  ok(getmetatable(t) ~= nil)
  bk.removeObserversWithIdentifier(t, id)
  ok(getmetatable(t) ~= nil)
  bk.removeAllBlockObservers(t)
  eq(getmetatable(t), nil)
  deepEq(t, before)
  eq(rawget(t, "a"), "x")
end)

test("values set while observed are in the restored table", function()
  local t = { a = 1 }
  bk.addObserverForKeyPath(t, "a", function() end)
  bk.addObserverForKeyPath(t, "new", function() end)
  t.a = 2
  t.new = "n"
  t.other = "o"
  bk.removeAllBlockObservers(t)
  deepEq(t, { a = 2, new = "n", other = "o" })
end)

-- An existing metatable keeps its behaviour ------------------------------------------------------

test("class-style metatable: methods, __index chain, __call, __tostring, same metatable after", function()
  local Class = {}
  Class.__index = Class
  Class.__call = function(self, x) return "called " .. x end
  Class.__tostring = function(self) return "Obj(" .. tostring(self.name) .. ")" end
  function Class:greet() return "hi " .. self.name end
  Class.default = "from class"
  local obj = setmetatable({ name = "ada" }, Class)
  local calls, task = recorder()
  bk.addObserverForKeyPath(obj, "name", { "new" }, task)
  bk.addObserverForKeyPath(obj, "default", { "new" }, task)
  eq(getmetatable(obj), Class)          -- the proxy shows the original metatable
  eq(obj:greet(), "hi ada")
  eq(obj(1), "called 1")
  eq(tostring(obj), "Obj(ada)")
  eq(obj.default, "from class")         -- not a field: still inherited
  obj.name = "grace"
  eq(obj:greet(), "hi grace")
  obj.default = "own"
  eq(#calls, 2)
  eq(calls[2][2].new, "own")
  bk.removeAllBlockObservers(obj)
  eq(getmetatable(obj), Class)
  eq(rawget(obj, "name"), "grace")
  eq(rawget(obj, "default"), "own")
end)

test("__index function and __newindex of the original still run", function()
  local backing = { hidden = 1 }
  local writes = {}
  local meta = {
    __index = function(_, k) return backing[k] end,
    __newindex = function(_, k, v) writes[#writes + 1] = k backing[k] = v end,
  }
  local proxy = setmetatable({}, meta)
  local calls, task = recorder()
  bk.addObserverForKeyPath(proxy, "hidden", { "new", "old" }, task)
  eq(proxy.hidden, 1)
  proxy.hidden = 2
  eq(backing.hidden, 2)
  eq(rawget(proxy, "hidden"), nil)
  eq(#writes, 1)
  eq(calls[1][2].old, 1)
  eq(calls[1][2].new, 2)
  proxy.other = 5                      -- unobserved: the original __newindex
  eq(#writes, 2)
  bk.removeAllBlockObservers(proxy)
  eq(getmetatable(proxy), meta)
  eq(rawget(proxy, "hidden"), nil)
end)

test("a protected metatable stays protected and is restored", function()
  local meta = { __metatable = "locked", __index = { m = 1 } }
  local t = setmetatable({ a = 1 }, meta)
  bk.addObserverForKeyPath(t, "a", function() end)
  eq(getmetatable(t), "locked")
  eq(t.m, 1)
  bk.removeAllBlockObservers(t)
  eq(getmetatable(t), "locked")
  t.a = 3
  eq(rawget(t, "a"), 3)
end)

test("arithmetic and comparison metamethods still work", function()
  local V = {}
  V.__add = function(a, b) return a.x + b.x end
  V.__eq = function(a, b) return a.x == b.x end
  V.__len = function() return 42 end
  local a, b = setmetatable({ x = 1 }, V), setmetatable({ x = 1 }, V)
  bk.addObserverForKeyPath(a, "x", function() end)
  eq(a + b, 2)
  ok(a == b)
  eq(#a, 42)
end)

-- Key paths --------------------------------------------------------------------------------------

test("a key path notifies for the leaf and for replaced middle objects", function()
  local m = { owner = { address = { city = "A" } } }
  local calls, task = recorder()
  bk.addObserverForKeyPath(m, "owner.address.city", { "new", "old" }, task)
  m.owner.address.city = "B"
  eq(#calls, 1); eq(calls[1][2].old, "A"); eq(calls[1][2].new, "B")
  local oldAddress = m.owner.address
  m.owner.address = { city = "C" }
  eq(#calls, 2); eq(calls[2][2].old, "B"); eq(calls[2][2].new, "C")
  oldAddress.city = "stale"             -- the old chain is released
  eq(#calls, 2)
  eq(getmetatable(oldAddress), nil)
  m.owner = { address = { city = "D" } }
  eq(calls[3][2].new, "D")
  m.owner.address.city = "E"
  eq(calls[4][2].old, "D"); eq(calls[4][2].new, "E")
  m.owner = nil
  eq(calls[5][2].old, "E"); eq(calls[5][2].new, nil)
  m.owner = { address = { city = "F" } }   -- re-attached after a nil middle
  m.owner.address.city = "G"
  eq(calls[7][2].new, "G")
end)

test("a key path through a missing middle attaches when it appears", function()
  local t = {}
  local calls, task = recorder()
  bk.addObserverForKeyPath(t, "a.b", { "new" }, task)
  t.a = { b = 1 }
  eq(calls[1][2].new, 1)
  t.a.b = 2
  eq(calls[2][2].new, 2)
end)

test("removing a key path observation restores the middle objects", function()
  local inner = { b = 1 }
  local t = { a = inner }
  bk.addObserverForKeyPath(t, "a.b", function() end)
  ok(getmetatable(inner) ~= nil)
  bk.removeAllBlockObservers(t)
  eq(getmetatable(inner), nil)
  eq(rawget(inner, "b"), 1)
  eq(getmetatable(t), nil)
end)

test("the same inner table on two paths", function()
  local shared = { v = 1 }
  local t = { x = shared, y = shared }
  local calls, task = recorder()
  bk.addObserverForKeyPaths(t, { "x.v", "y.v" }, task)
  shared.v = 2
  eq(#calls, 2)
  t.x = {}
  shared.v = 3
  eq(#calls, 4)    -- x replaced (1), y.v still observed (1)
  bk.removeAllBlockObservers(t)
  eq(getmetatable(shared), nil)
  eq(rawget(shared, "v"), 3)
end)

-- Lifetimes --------------------------------------------------------------------------------------

test("observations never keep the observed table alive", function()
  local weak = setmetatable({}, { __mode = "v" })
  do
    local t = { a = 1 }
    bk.addObserverForKeyPath(t, "a", function(o) return o.a end)
    bk.addObserverForKeyPath(t, "a.b", { "new" }, function() return t end)
    weak[1] = t
  end
  collectgarbage()
  collectgarbage()
  eq(weak[1], nil)
end)

test("an inner object on a key path does not keep the outer one alive", function()
  local inner = { v = 1 }
  local weak = setmetatable({}, { __mode = "v" })
  do
    local outer = { inner = inner }
    bk.addObserverForKeyPath(outer, "inner.v", function() return outer end)
    weak[1] = outer
  end
  collectgarbage()
  collectgarbage()
  eq(weak[1], nil)
  inner.v = 2   -- nothing to notify, no error
end)

test("the observer option ends the observation when the observer is collected", function()
  local t = { a = 1 }
  local count = 0
  do
    local owner = { name = "owner" }
    -- The task refers to its owner: still collectable.
    bk.addObserverForKeyPath(t, "a", { observer = owner }, function() count = count + (owner and 1 or 0) end)
    t.a = 2
    eq(count, 1)
  end
  collectgarbage()
  collectgarbage()
  t.a = 3
  eq(count, 1)
  eq(#bk.observers(t), 0)
  eq(getmetatable(t), nil)
  eq(rawget(t, "a"), 3)
end)

test("a task removing its own observation during a notification", function()
  local t = { a = 1 }
  local log = {}
  local id
  id = bk.addObserverForKeyPath(t, "a", function()
    log[#log + 1] = "self-removing"
    bk.removeObserversWithIdentifier(t, id)
  end)
  bk.addObserverForKeyPath(t, "a", function() log[#log + 1] = "other" end)
  t.a = 2
  t.a = 3
  eq(table.concat(log, " "), "self-removing other other")
end)

test("a task removing every observation: the set still lands, table restored", function()
  local t = { a = 1 }
  local later = 0
  bk.addObserverForKeyPath(t, "a", function(o) bk.removeAllBlockObservers(o) end)
  bk.addObserverForKeyPath(t, "a", function() later = later + 1 end)
  t.a = 2
  eq(later, 0)          -- removed before its turn
  eq(rawget(t, "a"), 2)
  eq(getmetatable(t), nil)
end)

test("a prior task removing the observation: the write still happens", function()
  local t = { a = 1 }
  bk.addObserverForKeyPath(t, "a", { "prior" }, function(o, c)
    if c.prior then bk.removeAllBlockObservers(o) end
  end)
  t.a = 2
  eq(rawget(t, "a"), 2)
  eq(getmetatable(t), nil)
end)

test("a task adding another observation during a notification", function()
  local t = { a = 1 }
  local added = 0
  local once = false
  bk.addObserverForKeyPath(t, "a", function()
    if not once then
      once = true
      bk.addObserverForKeyPath(t, "a", function() added = added + 1 end)
    end
  end)
  t.a = 2
  eq(added, 0)    -- not called for the set in progress
  t.a = 3
  eq(added, 1)
end)

test("a task error is reported and the other observers still run", function()
  local t = { a = 1 }
  local ran = 0
  bk.addObserverForKeyPath(t, "a", function() error("boom") end)
  bk.addObserverForKeyPath(t, "a", function() ran = ran + 1 end)
  local output = shell(string.format("%q -e %q", os.getenv("BKLUA") or (arg and arg[-1]) or "bklua", [[
    local t = { a = 1 }
    bk.addObserverForKeyPath(t, "a", function() error("boom") end)
    bk.addObserverForKeyPath(t, "a", function() print("second ran") end)
    t.a = 2
    print("after", t.a)
  ]]))
  ok(output:find("bklua: ", 1, true), output)
  ok(output:find("boom", 1, true), output)
  ok(output:find("traceback", 1, true), output)
  ok(output:find("second ran", 1, true), output)
  ok(output:find("after\t2", 1, true), output)
  if bk.onError then
    local errors = {}
    bk.onError(function(message) errors[#errors + 1] = message end)
    t.a = 2
    bk.onError(nil)
    eq(#errors, 1)
    ok(errors[1]:find("boom", 1, true))
    eq(ran, 1)
  end
end)

-- Seed compatibility -----------------------------------------------------------------------------

test("cc_easyObserve(observer, observee, keyPath, options, f(object, change))", function()
  local view = { backgroundColor = "white" }
  local controller = {}
  local seen = {}
  bk.cc_easyObserve(controller, view, "backgroundColor", { "new" }, function(object, change)
    seen[#seen + 1] = change.new
    eq(object, view)
  end)
  view.backgroundColor = "red"
  eq(seen[1], "red")
  eq(bk.observers(view)[1].observer, controller)
  bk_cc_easyObserve(controller, { x = 1 }, "x", nil, function() end)
  bk.cc_easyRemoveAllKVO(controller)
  view.backgroundColor = "blue"
  eq(#seen, 1)
  eq(getmetatable(view), nil)
end)

test("cc_easyObserve ends when the observer is collected", function()
  local view = { color = 1 }
  local n = 0
  do
    local controller = {}
    bk.cc_easyObserve(controller, view, "color", { "new" }, function() n = n + 1 end)
    view.color = 2
  end
  collectgarbage()
  collectgarbage()
  view.color = 3
  eq(n, 1)
end)

test("sj_addObserver(obj, observer, keys, f(obj, key, old, new)) and the seed's removals", function()
  local model = { number = 0, color = "red" }
  local vc = {}
  local log = {}
  bk.sj_addObserver(model, vc, { "number", "color" }, function(obj, key, old, new)
    eq(obj, model)
    log[#log + 1] = key .. ":" .. tostring(old) .. "->" .. tostring(new)
  end)
  model.number = 42
  model.color = "blue"
  eq(table.concat(log, " "), "number:0->42 color:red->blue")
  local list = bk.sj_listAllObservers(model)
  eq(#list, 1)
  eq(list[1].observer, vc)
  eq(table.concat(list[1].keyPaths, ","), "number,color")
  bk.sj_removeObserver(model, vc, "number")
  model.number = 1
  model.color = "green"
  eq(#log, 3)
  eq(table.concat(bk.sj_listAllObservers(model)[1].keyPaths, ","), "color")
  bk.sj_removeObserver(model, vc, { "number", "color" })
  eq(#bk.sj_listAllObservers(model), 0)
  eq(getmetatable(model), nil)
end)

test("sj_addObserver twice for the same observer and key replaces; sj_removeAllObservers", function()
  local model = { number = 0 }
  local vc1, vc2 = {}, {}
  local a, b, c = 0, 0, 0
  bk.sj_addObserver(model, vc1, "number", function() a = a + 1 end)
  bk.sj_addObserver(model, vc1, "number", function() b = b + 1 end)
  bk.sj_addObserver(model, vc2, "number", function() c = c + 1 end)
  model.number = 1
  eq(a, 0); eq(b, 1); eq(c, 1)
  eq(#bk.sj_listAllObservers(model), 2)
  bk.sj_removeObserver(model, vc2)
  model.number = 2
  eq(c, 1)
  bk.sj_removeAllObservers(model)
  model.number = 3
  eq(b, 2)
  eq(#bk.sj_listAllObservers(model), 0)
  raises("bad argument #2 to 'sj_addObserver' (observer expected, got nil)",
    bk.sj_addObserver, model, nil, "number", function() end)
  raises("bad argument #2 to 'sj_addObserver' (observer expected, got no value)", bk.sj_addObserver, model)
  raises("bad argument #1 to 'cc_easyRemoveAllKVO' (observer expected, got nil)", bk.cc_easyRemoveAllKVO, nil)
  raises("bad argument #1 to 'cc_easyRemoveAllKVO' (observer expected, got no value)", bk.cc_easyRemoveAllKVO)
end)

-- More combinations --------------------------------------------------------------------------------

test("distinct with prior: neither notification for an equal value", function()
  local t = { a = 1 }
  local log = {}
  bk.addObserverForKeyPath(t, "a", { "distinct", "prior", "old", "new" }, function(_, c)
    log[#log + 1] = (c.prior and "prior " or "post ") .. tostring(c.old) .. ">" .. tostring(c.new)
  end)
  t.a = 1
  eq(#log, 0)
  t.a = 2
  eq(table.concat(log, ", "), "prior 1>nil, post 1>2")
end)

test("several key paths with prior and old: each key path notifies on its own", function()
  local t = { a = 1, b = { c = 2 } }
  local log = {}
  bk.addObserverForKeyPaths(t, { "a", "b.c" }, { "prior", "old", "new" }, function(_, kp, c)
    log[#log + 1] = kp .. (c.prior and "?" or "!") .. tostring(c.old) .. ">" .. tostring(c.new)
  end)
  t.b.c = 3
  t.a = 4
  t.b = { c = 5 }
  eq(table.concat(log, " "), "b.c?2>nil b.c!2>3 a?1>nil a!1>4 b.c?3>nil b.c!3>5")
end)

test("the observer option with several key paths, and cc_easyRemoveAllKVO for it", function()
  local t = { a = 1, b = 1 }
  local owner = {}
  local n = 0
  bk.addObserverForKeyPaths(t, { "a", "b" }, { observer = owner }, function() n = n + 1 end)
  t.a, t.b = 2, 2
  eq(n, 2)
  eq(bk.observers(t)[1].observer, owner)
  bk.cc_easyRemoveAllKVO(owner)
  t.a = 3
  eq(n, 2)
  eq(getmetatable(t), nil)
end)

test("replacing by identifier switches key paths and options", function()
  local t = { a = 1, b = 1 }
  local calls, task = recorder()
  bk.addObserverForKeyPaths(t, { "a", "b" }, { identifier = "x" }, task)
  bk.addObserverForKeyPath(t, "b", { "new", identifier = "x" }, task)
  t.a = 2
  eq(#calls, 0)
  t.b = 3
  eq(#calls, 1)
  eq(calls[1][2].new, 3)
  eq(rawget(t, "a"), 2)   -- no longer observed: back in the table
end)

test("an observed table's __gc still runs", function()
  local finalized = false
  do
    local t = setmetatable({ a = 1 }, { __gc = function() finalized = true end })
    bk.addObserverForKeyPath(t, "a", function() end)
  end
  collectgarbage()
  collectgarbage()
  ok(finalized)
end)

test("weak tables stay weak while observed", function()
  local cache = setmetatable({}, { __mode = "v" })
  cache.keep = "string"
  bk.addObserverForKeyPath(cache, "keep", function() end)
  cache.item = {}
  collectgarbage()
  eq(rawget(cache, "item"), nil)
  eq(cache.keep, "string")
end)

test("next keeps its errors for non-tables", function()
  local t = {}
  bk.addObserverForKeyPath(t, "a", function() end)   -- the global next is now observation-aware
  raises("bad argument #1 to 'next' (table expected, got number)", next, 5)
  raises("bad argument #1 to 'next' (table expected, got nil)", next, nil)
  raises("bad argument #1 to 'next' (table expected, got no value)", next)
  eq(next({}), nil)
  eq(next({ 7 }), 1)
end)

test("ipairs stops at the first nil, observed or not", function()
  local t = { 1, 2, 3, 4 }
  bk.addObserverForKeyPath(t, 3, function() end)
  t[3] = nil
  local n = 0
  for _ in ipairs(t) do n = n + 1 end
  eq(n, 2)
  t[3] = "back"
  eq(#t, 4)
end)

test("digits in a key path are integer keys", function()
  local t = { items = { { name = "a" }, { name = "b" } } }
  local calls, task = recorder()
  bk.addObserverForKeyPath(t, "items.2.name", { "new" }, task)
  t.items[2].name = "B"
  eq(calls[1][2].new, "B")
  t.items["2"] = "a string key"
  eq(#calls, 1)
  t.items[2] = { name = "C" }
  eq(calls[2][2].new, "C")
end)

test("an observation added by a prior task is not notified for the set in progress", function()
  local t = { a = 1 }
  local late = 0
  bk.addObserverForKeyPath(t, "a", { "prior" }, function(_, c)
    if c.prior and late == 0 then
      bk.addObserverForKeyPath(t, "a", function() late = late + 1 end)
    end
  end)
  t.a = 2
  eq(late, 0)
  t.a = 3
  eq(late, 1)
end)

test("observing never marks a table for finalization that was not (a __gc added later)", function()
  local finalized = 0
  do
    local mt = {}
    local a = setmetatable({ x = 1 }, mt)
    local b = setmetatable({ x = 1 }, mt)
    mt.__gc = function() finalized = finalized + 1 end   -- after setmetatable: a, b are not marked
    bk.addObserverForKeyPath(a, "x", function() end)
    bk.addObserverForKeyPath(b, "x", function() end)
    bk.removeAllBlockObservers(b)                         -- restored with the original metatable
    eq(getmetatable(b), mt)
  end
  collectgarbage()
  collectgarbage()
  eq(finalized, 0)
end)

test("a key path listed twice is observed once, and removal restores the table", function()
  local t = { a = 1 }
  local calls, task = recorder()
  bk.addObserverForKeyPaths(t, { "a", "a" }, task)
  t.a = 2
  eq(#calls, 1)
  eq(#bk.observers(t)[1].keyPaths, 1)
  bk.removeAllBlockObservers(t)
  eq(getmetatable(t), nil)
  eq(rawget(t, "a"), 2)
end)

-- The engine's own file -------------------------------------------------------------------------

test("the engine's frames in a traceback name its file, bk/ObservationEngine.lua", function()
  local t = {}
  local trace
  -- With options: the engine's Lua delivers it (one plain observer is called from C).
  bk.addObserverForKeyPath(t, "a", { "new" }, function() trace = debug.traceback("here", 1) end)
  t.a = 1
  ok(trace, "the observer ran")
  ok(trace:find("bk/ObservationEngine.lua:%d+:"), trace)
end)
