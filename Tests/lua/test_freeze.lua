-- Frozen tables (bk.freeze, bk.isFrozen) and the pool's rule (bk.canParallelize): a block that
-- captures a frozen lookup runs on the pool, the lookup copied to each pool state once; a block
-- that stays in the caller says why on stderr, once per call site.
-- Runs under bklua and under stock lua5.4 loading bk.so.
-- luacheck: globals frozenSeen (a pool state's own global, kept between calls)

local bk = require "bk"

-- About 50-100 microseconds of pure Lua: heavy enough that parallelMap hands elements to the pool.
local function spin()
  local s = 0
  for i = 1, 20000 do s = s + i % 3 end
  return s
end

local function list(n)
  local t = {}
  for i = 1, n do t[i] = i end
  return t
end

-- MARK: the view

test("freeze: reads, nested tables, #, ipairs and pairs see the table; the same view every time", function()
  local t = { a = 1, list = { 10, 20, 30 }, inner = { deep = { x = "y" } } }
  local f = bk.freeze(t)
  eq(type(f), "table")
  eq(f.a, 1)
  eq(f.list[2], 20)
  eq(#f.list, 3)
  eq(f.inner.deep.x, "y")
  eq(f.missing, nil)
  eq(f.list, f.list)
  eq(bk.freeze(t), f)
  ok(bk.isFrozen(f) and bk.isFrozen(f.list) and bk.isFrozen(f.inner.deep))
  ok(not bk.isFrozen(t) and not bk.isFrozen(1) and not bk.isFrozen(nil))
  local sum = 0
  for i, v in ipairs(f.list) do sum = sum + i * v end
  eq(sum, 140)
  local keys = {}
  for k, v in pairs(f) do
    keys[#keys + 1] = k
    if type(v) == "table" then ok(bk.isFrozen(v), k) end
  end
  table.sort(keys)
  eq(table.concat(keys, ","), "a,inner,list")
  eq(table.concat(f.list, "+"), "10+20+30")
  eq(getmetatable(f), "bk.frozen")
end)

test("freeze: the toolbox's helpers read what a view shows, on every kind", function()
  local a = bk.freeze(bk.array({ 3, 1, 2 }))
  eq(table.concat(a:sorted(), ","), "1,2,3")
  eq(bk.sum(a), 6)
  eq(a:count(), 3)
  eq(bk.max(a), 3)
  local d = bk.freeze(bk.dictionary({ a = 1, b = 2 }))
  eq(#bk.keys(d), 2)
  eq(d:bk_count(), 2)
  local groups = bk.groupBy(bk.freeze({ 1, 2, 3 }), function(x) return x % 2 end)
  eq(#groups[1], 2)
  eq(table.concat(bk.flatten(bk.freeze({ { 1, 2 }, { 3 } })), ","), "1,2,3")
  local s = bk.freeze(bk.set({ 1, 2, 3 }))
  eq(#bk.union(s, bk.set({ 3, 4 })), 4)
  eq(#bk.intersection(s, bk.freeze(bk.set({ 2, 3, 9 }))), 2)
  ok(bk.isSubset(s, { 1, 2, 3, 4 }))
  eq(table.concat(bk.slice(bk.freeze({ 1, 2, 3, 4 }), 2, 3), ","), "2,3")
end)

test("freeze: every write raises, naming the key; nested tables too", function()
  local f = bk.freeze({ a = 1, list = { 1, 2 } })
  raises("attempt to modify a frozen table (key 'a')", function() f.a = 2 end)
  raises("attempt to modify a frozen table (key 'b')", function() f.b = 2 end)
  raises("attempt to modify a frozen table (key 3)", function() f.list[3] = 3 end)
  raises("attempt to modify a frozen table (key 1)", function() f.list[1] = nil end)
  raises("attempt to modify a frozen table (a boolean key)", function() f[true] = 1 end)
  raises("attempt to modify a frozen table", table.insert, f.list, 3)
  raises("attempt to modify a frozen table", table.sort, f.list, function(x, y) return x > y end)
  local err = raises("attempt to modify a frozen table", function() f.a = 2 end)
  ok(err:find("test_freeze.lua:%d+: attempt"), err)  -- the position of the write
  raises("cannot change a protected metatable", setmetatable, f, {})
  eq(f.a, 1)
  eq(f.list[1], 1)
end)

test("freeze: cycles and shared tables keep their identity through the view", function()
  local a = { name = "a" }
  local b = { name = "b", a = a }
  a.b = b
  a.self = a
  local f = bk.freeze(a)
  eq(f.self, f)
  eq(f.b.a, f)
  eq(f.b.a.b.name, "b")
end)

test("freeze: only data can be frozen; the reason names the place", function()
  raises("bad argument #1 to 'freeze' (table expected, got number)", bk.freeze, 1)
  raises("bad argument #1 to 'freeze' (field 'f' of the table is a function, which cannot be frozen", bk.freeze,
    { f = print })
  raises("bad argument #1 to 'freeze' (field 'out' of element [2] of the table is a userdata", bk.freeze,
    { 1, { out = io.stdout } })
  raises("bad argument #1 to 'freeze' (field 'co' of the table is a thread", bk.freeze,
    { co = coroutine.create(print) })
  raises("bad argument #1 to 'freeze' (a key of the table is a function", bk.freeze, { [print] = 1 })
  raises("bad argument #1 to 'freeze' (field 'obj' of the table has a metatable", bk.freeze,
    { obj = setmetatable({}, { __index = function() return 1 end }) })
  raises("bad argument #1 to 'freeze' (the table has a metatable", bk.freeze, setmetatable({}, {}))
  local deep = {}
  local at = deep
  for _ = 1, 300 do at.next = {} at = at.next end
  raises("is nested too deeply", bk.freeze, deep)
  -- Data that is fine: bk.null, bk's kinds, frozen tables inside.
  local inner = bk.freeze({ 1 })
  local f = bk.freeze({ bk.null, bk.array({ 1, 2 }), bk.dictionary({ k = "v" }), inner })
  eq(f[1], bk.null)
  eq(f[2][2], 2)
  eq(f[3].k, "v")
  eq(f[4], inner)
end)

test("freeze: a 2^40 border and many keys cost what the keys cost", function()
  local t = { 1, 2, 3 }
  t[2 ^ 40] = 4
  t[2 ^ 40 // 1] = 5
  local start = os.clock()
  local f = bk.freeze(t)
  ok(os.clock() - start < 1)
  local n = 0
  for _ in ipairs(f) do n = n + 1 end
  eq(n, 3)
  eq(#f, #t)
  eq(#bk.map(f, function(x) return x end), 3)
end)

test("freeze: rawset bypasses the view as it bypasses any metatable, and the view then refuses to cross", function()
  local f = bk.freeze({ a = 1 })
  rawset(f, "a", 2)
  eq(f.a, 2)
  local okCopy, why = bk.isTransferable(f)
  eq(okCopy, false)
  eq(why, "the value is a frozen table written to with rawset")
end)

test("freeze: bk's reading helpers read what the view shows; the in-place ones refuse it", function()
  local f = bk.freeze({ 3, 1, 2 })
  eq(bk.kind(f), "array")
  eq(table.concat(bk.map(f, function(x) return x * 2 end), ","), "6,2,4")
  eq(table.concat(bk.select(f, function(x) return x > 1 end), ","), "3,2")
  eq(bk.reduce(f, 0, function(acc, x) return acc + x end), 6)
  eq(bk.kind(bk.freeze({ k = 1 })), "dictionary")
  raises("bad argument #1 to 'performMap' (the table is frozen and cannot be changed)", bk.performMap, f,
    function(x) return x end)
  raises("bad argument #1 to 'performSelect' (the table is frozen and cannot be changed)", bk.performSelect, f,
    function() return false end)
  raises("bad argument #1 to 'array' (table already has a metatable)", bk.array, f)
  eq(table.concat(f, ","), "3,1,2")
  -- A frozen bk kind keeps its methods (a dictionary, only the bk_ names).
  local fa = bk.freeze(bk.array({ 1, 2 }))
  eq(table.concat(fa:map(function(x) return x + 1 end), ","), "2,3")
  local fd = bk.freeze(bk.dictionary({ k = 1 }))
  eq(fd.map, nil)
  eq(fd:bk_map(function(_, v) return v + 1 end).k, 2)
  -- contains reads: a frozen set answers it; add and remove write, and refuse.
  for _, make in ipairs({ bk.set, bk.orderedSet }) do
    local fs = bk.freeze(make({ "a", "b" }))
    eq(fs:contains("a"), true)
    eq(fs:contains("z"), false)
    raises("bad argument #1 to 'add' (the table is frozen and cannot be changed)", fs.add, fs, "c")
    raises("bad argument #1 to 'remove' (the table is frozen and cannot be changed)", fs.remove, fs, "a")
    eq(fs:contains("c"), false)
  end
  local fi = bk.freeze(bk.indexSet({ 1, 5 }))
  eq(fi:contains(5), true)
  eq(fi:contains(2), false)
end)

test("freeze: finalizers that freeze while a freeze collects", function()
  local made = {}
  local function garbage(n)
    for i = 1, n do
      setmetatable({}, { __gc = function() made[#made + 1] = bk.freeze({ i, { i } }) end })
    end
  end
  local old = collectgarbage("setpause", 10)
  for round = 1, 20 do
    garbage(50)
    local t = {}
    for i = 1, 2000 do t[i] = { i, tostring(i) } end
    local f = bk.freeze(t)
    eq(f[2000][2], "2000", "round " .. round)
  end
  collectgarbage("setpause", old)
  collectgarbage()
  ok(#made > 0)
  for _, f in ipairs(made) do eq(f[2][1], f[1]) end
end)

-- MARK: across states

test("freeze: a frozen table crosses to a worker and over a channel frozen", function()
  local f = bk.freeze({ a = 1, nested = { 2 } })
  local w = bk.worker(function(t)
    local okWrite, err = pcall(function() t.nested[1] = 3 end)
    return bk.isFrozen(t), bk.isFrozen(t.nested), t.nested[1], okWrite, err
  end, f)
  local frozen, nestedFrozen, v, okWrite, err = w:result()
  eq(frozen, true)
  eq(nestedFrozen, true)
  eq(v, 2)
  eq(okWrite, false)
  ok(tostring(err):find("attempt to modify a frozen table (key 1)", 1, true), tostring(err))
  local ch = bk.channel()
  ch:send(f)
  ch:send(f)
  local a, b = ch:receive(), ch:receive()
  ok(bk.isFrozen(a))
  eq(a.nested[1], 2)
  -- Back in its own state a frozen table comes back as the same view; sent twice, one copy.
  eq(a, f)
  eq(b, f)
  local back = bk.worker(function(t) return t end, f):result()
  eq(back, f)
end)

test("canParallelize: true, or false and the reason; a frozen table is fine", function()
  local lookup = { a = 1 }
  local frozen = bk.freeze(lookup)
  local okCall, why = bk.canParallelize(function(x) return lookup[x] end)
  eq(okCall, false)
  eq(why, "upvalue 'lookup' of the block is a table: bk.freeze it to share a read-only copy")
  eq(bk.canParallelize(function(x) return frozen[x] end), true)
  eq(bk.canParallelize(function(x) return x end), true)
  local co = coroutine.create(print)
  eq(select(2, bk.canParallelize(function() return co end)), "upvalue 'co' of the block is a coroutine")
  raises("bad argument #1 to 'canParallelize' (function expected, got table)", bk.canParallelize, {})
  -- isTransferable answers another question: whether a copy can be made (a worker's argument).
  eq(bk.isTransferable(function(x) return lookup[x] end), true)
end)

test("canParallelize: a block that assigns to an upvalue stays in the caller", function()
  local sum, calls = 0, 0
  local okCall, why = bk.canParallelize(function(x) sum = sum + x end)
  eq(okCall, false)
  eq(why, "the block assigns to upvalue 'sum' (a copy on the pool would assign to its own)")
  -- Reading an upvalue is fine; so is assigning to a local of the block's own.
  eq(bk.canParallelize(function(x) local s = sum; s = s + x; return s end), true)
  -- A global is fine: each pool state keeps globals of its own (the pool is warm).
  -- luacheck: globals bkTestTotal
  eq(bk.canParallelize(function(x) bkTestTotal = x end), true)
  -- A function nested in the block assigns to the block's upvalue: still the caller's variable.
  eq(select(2, bk.canParallelize(function(x)
    local bump = function() calls = calls + 1 end
    bump()
    return x
  end)), "the block assigns to upvalue 'calls' (a copy on the pool would assign to its own)")
  -- A nested function assigning to a local of the block is the block's own business.
  eq(bk.canParallelize(function(x)
    local n = 0
    local bump = function() n = n + 1 end
    bump()
    return n + x
  end), true)
  -- A helper the block calls assigns to its own upvalue: the path names it.
  local function add(x) sum = sum + x end
  eq(select(2, bk.canParallelize(function(x) add(x) end)),
    "upvalue 'add' of the block assigns to upvalue 'sum' (a copy on the pool would assign to its own)")
  -- A copy can still be made: a worker's argument is copied, not shared.
  eq(bk.isTransferable(function(x) sum = sum + x end), true)
end)

test("canParallelize: a block whose bytecode cannot be read is refused; stripped upvalues go by number", function()
  -- A binary chunk with 300 nested functions (more than the check reads), the innermost
  -- assigning to the outermost's upvalue through every level.
  local function abc(op, a, b, c) return op | (a << 7) | (b << 16) | (c << 24) end
  local function abx(op, a, bx) return op | (a << 7) | (bx << 15) end
  local function size(n)
    local t = { (n & 0x7f) | 0x80 }
    n = n >> 7
    while n > 0 do table.insert(t, 1, n & 0x7f); n = n >> 7 end
    return string.char(table.unpack(t))
  end
  local function code(ops)
    local out = {}
    for _, i in ipairs(ops) do out[#out + 1] = string.pack("<I4", i) end
    return size(#ops) .. table.concat(out)
  end
  local depth = 300
  local function level(n)  -- GETUPVAL, ADDI, MMBINI, SETUPVAL, RETURN0 / CLOSURE, CALL, RETURN0
    local body = n == depth and code { abc(9, 0, 0, 0), abc(21, 0, 0, 128), abc(47, 0, 128, 6), abc(10, 0, 0, 0), abc(71, 0, 1, 0) }
      or code { abx(79, 0, 0), abc(68, 0, 1, 1), abc(71, 0, 1, 0) }
    return "\x80\x80\x80\0\0\2" .. body .. size(0) .. size(1) .. (n == 0 and "\1\0\0" or "\0\0\0")
      .. (n == depth and size(0) or size(1) .. level(n + 1)) .. size(0) .. size(0) .. size(0) .. size(0)
  end
  local deep = assert(load(string.dump(function() end):sub(1, 31) .. "\1" .. level(0), "=deep", "b"))
  local count = 0
  debug.upvaluejoin(deep, 1, function() return count end, 1)
  deep()
  eq(count, 1)
  eq(select(2, bk.canParallelize(deep)), "the block could not be read for assignments to its upvalues")
  -- Stripped: Lua names its upvalues "(no name)".
  local sum = 0
  local function add(x) sum = sum + x end
  local stripped = load(string.dump(add, true), "=stripped", "b")
  debug.upvaluejoin(stripped, 1, add, 1)
  eq(select(2, bk.canParallelize(stripped)), "the block assigns to upvalue #1 (a copy on the pool would assign to its own)")
end)

test("canParallelize: a function a script stored in bk is checked as the script's own", function()
  -- In a run of its own: bk's well-known values are listed at the first check, and this one must
  -- be there by then (it used to count as bk's, unchecked, and fail on the pool as one it lacks).
  local path = tempFile([[
local total = 0
bk.tally = function() total = total + 1 end
local tally = bk.tally
print(select(2, bk.canParallelize(function(x) tally(x) end)))
local list = {}
for i = 1, 64 do list[i] = i end
bk.apply(list, function(x) local s = 0 for i = 1, 20000 do s = s + i % 3 end tally(x) end)
print(total)
]])
  local out = shell(os.getenv("BKLUA") .. " " .. path)  -- stdout, then stderr's line on apply
  eq(out:match("^[^\n]*"), "upvalue 'tally' of the block assigns to upvalue 'total' (a copy on the pool would assign to its own)")
  eq(out:match("(%d+)\n$"), "64")
end)

test("canParallelize: a plain table a script stored in bk is the script's own, and apply keeps it in the caller", function()
  -- It counted as one of bk's values (bk.cancelled is a table too): canParallelize said true, and
  -- apply failed on the pool, which has no such value.
  local path = tempFile([[
bk.acc = {}
local acc = bk.acc
print(select(2, bk.canParallelize(function(x) acc[x] = true end)))
local list = {}
for i = 1, 64 do list[i] = i end
bk.apply(list, function(x) local s = 0 for i = 1, 20000 do s = s + i % 3 end acc[x] = true end)
local n = 0
for i = 1, 64 do if acc[i] then n = n + 1 end end
print(n)
]])
  local out = shell(os.getenv("BKLUA") .. " " .. path)
  eq(out:match("^[^\n]*"), "upvalue 'acc' of the block is a table: bk.freeze it to share a read-only copy")
  eq(out:match("(%d+)\n$"), "64")
end)

test("parallelMap: a block capturing a frozen lookup runs on the pool and reads it there", function()
  local before = bk.workerCount()
  bk.setWorkerCount(2)
  local lookup = bk.freeze({ names = { "one", "two", "three" }, scale = 10 })
  local r = bk.parallelMap(list(60), function(x)
    spin()
    return { lookup.names[(x - 1) % 3 + 1], x * lookup.scale, bk.isWorker(),
             pcall(function() lookup.scale = 1 end) }
  end)
  bk.setWorkerCount(before)
  local onPool = 0
  for i = 1, 60 do
    eq(r[i][1], ({ "one", "two", "three" })[(i - 1) % 3 + 1])
    eq(r[i][2], i * 10)
    eq(r[i][4], false)
    if r[i][3] then onPool = onPool + 1 end
  end
  ok(onPool > 0, "no element ran on the pool")
end)

test("parallelMap: a frozen lookup is copied to each pool state once, then reused", function()
  local before = bk.workerCount()
  bk.setWorkerCount(2)
  local lookup = bk.freeze({ 1, 2, 3 })
  local seen = {}
  for _ = 1, 3 do
    local r = bk.parallelMap(list(40), function(x)
      spin()
      if not bk.isWorker() then return false end
      return tostring(lookup) .. "@" .. tostring(x > 0)
    end)
    for _, v in ipairs(r) do if v then seen[v] = true end end
  end
  bk.setWorkerCount(before)
  local distinct = 0
  for _ in pairs(seen) do distinct = distinct + 1 end
  ok(distinct >= 1 and distinct <= 2, "copies seen: " .. distinct)
end)

-- MARK: the note on stderr

local BKLUA = os.getenv("BKLUA")
local MODULE_DIR = os.getenv("BK_MODULE_DIR")
local LUA = os.getenv("LUA") or "lua5.4"

local NOTE_SCRIPT = [[
local bk = require "bk"
bk.setWorkerCount(2)
local lookup = { a = 1 }
local function heavy(x) local s = 0 for i = 1, 20000 do s = s + i % 3 end return lookup.a + x + s * 0 end
for _ = 1, 3 do bk.parallelMap({ 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20 }, heavy) end
bk.apply({ 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20 }, heavy)
bk.parallelMap({ 1, 2, 3 }, function(x) return lookup.a + x end)
io.stdout:write("done\n")
]]

local function scriptFile()
  return tempFile(NOTE_SCRIPT)
end

local function checkNote(out)
  ok(out:find("done", 1, true), out)
  local notes = {}
  for line in out:gmatch("[^\n]+") do
    if line:find("ran its block in the calling state", 1, true) then notes[#notes + 1] = line end
  end
  -- Once per call site: the loop's parallelMap (line 5) and apply (line 6); the cheap call says nothing.
  eq(#notes, 2, out)
  ok(notes[1]:find(":5: parallelMap ran its block in the calling state, in order: upvalue 'lookup' of "
    .. "the block is a table: bk.freeze it to share a read-only copy", 1, true), notes[1])
  ok(notes[2]:find(":6: apply ran its block in the calling state, in order: upvalue 'lookup'", 1, true), notes[2])
end

if BKLUA then
  test("parallelMap / apply: heavy work kept in the caller says why on stderr, once per call site (bklua)", function()
    local path = scriptFile()
    local out = shell(BKLUA .. " " .. path)
    os.remove(path)
    checkNote(out)
  end)
else
  print("SKIPPED test_freeze: the note under bklua (BKLUA not set)")
end

if MODULE_DIR then
  test("parallelMap / apply: heavy work kept in the caller says why on stderr, once per call site (lua5.4)", function()
    local path = scriptFile()
    local out = shell("LUA_CPATH='" .. MODULE_DIR .. "/?.so;;' " .. LUA .. " " .. path)
    os.remove(path)
    checkNote(out)
  end)
else
  print("SKIPPED test_freeze: the note under lua5.4 (BK_MODULE_DIR not set)")
end
