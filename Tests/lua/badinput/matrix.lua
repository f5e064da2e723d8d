-- The bad-input matrix, run in a child bklua per function or class (by Tests/lua/test_bad_input.lua)
-- so that a crash is a failed test, not a dead runner.
--
--   bklua matrix.lua discover          prints "function NAME" / "class NAME" lines
--   bklua matrix.lua function NAME     calls bk.NAME with every bad value in every position
--   bklua matrix.lua class NAME        calls every method of objects of that class the same way
--
-- Every call must return or raise an error (string, or the error value a callback raised); a
-- "bad argument" error must name the function called, and no message may read "X expected, got X".
-- Ends with "matrix ok N calls" (exit 0) or "matrix FAILED" lines (exit 1).

local mode, target = ...
local bk = require "bk"
local unpack = table.unpack
local here = (debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$")) or "."
local hostile = assert(loadfile(here .. "/hostile.lua"))(bk)

local failures = {}
local calls = 0
local function fail(text)
  failures[#failures + 1] = text
  if #failures <= 20 then io.stderr:write("FAIL ", text, "\n") end
end

-- Callback errors have no caller: count them, keep stderr quiet.
local reported = 0
local function silence() bk.onError(function() reported = reported + 1 end) end
silence()

-- MARK: the values

local SENTINEL = setmetatable({}, { __name = "matrix.sentinel", __tostring = function() return "sentinel error" end })
local HOSTILE = "hostile raise"

local function raiser() error(HOSTILE, 0) end
local function yielder(...) coroutine.yield(...) return ... end
-- An error object whose __tostring itself raises: reporting it must not crash.
local BADERROR = setmetatable({}, { __tostring = function() error("tostring raised") end })

local values = {}   -- { name, value } in a fixed order
local function add(name, value) values[#values + 1] = { name, value } end

add("nil", nil)
add("true", true)
add("false", false)
for _, n in ipairs({ 0, -1, 1, 2, 0.5, -0.0, 1e308, math.huge, -math.huge, 0 / 0, math.maxinteger,
                     math.mininteger, 2 ^ 63, 1e-300 }) do
  add("number " .. tostring(n), n)
end
for _, s in ipairs({ "", "x", "new", "initial", "concurrent", "delegate", "a.b.c", "..", "\0",
                     "%s%n", ("a"):rep(10000) }) do
  add("string " .. (#s > 20 and ("#" .. #s) or string.format("%q", s)), s)
end
add("table empty", {})
add("table array", { 1, 2, 3 })
add("table dictionary", { a = 1, b = "two" })
add("table mixed", { 1, 2, x = 3, [2.5] = 4, [true] = 5 })
add("table holes", { 1, nil, 3, nil, 5 })
local cyclic = { 1 }
cyclic[2] = cyclic
cyclic.self = cyclic
add("table cyclic", cyclic)
local deep = {}
do local t = deep for _ = 1, 200 do t[1] = {} t = t[1] end end
add("table deep", deep)
add("table of functions", { raiser, yielder, print })
add("function returning args", function(...) return ... end)
add("function returning nothing", function() end)
add("function raising", raiser)
add("function raising a table", function() error(SENTINEL) end)
add("function raising a bad error object", function() error(BADERROR) end)
add("function yielding", yielder)
add("function collecting garbage", function(...) collectgarbage() return ... end)
add("function returning a table", function() return { 1, 2 } end)
-- Hostile callbacks (hostile.lua): they rewrite the slots and upvalues of the bk frames below
-- them, drop a walk's userdata and yield (the harness collects before resuming), close the running
-- coroutine, make finalizers that call bk.
for _, c in ipairs(hostile.callbacks) do add("function " .. c[1], c[2]) end
add("C function", rawequal)
add("userdata FILE*", io.stdout)
for k, v in pairs(bk) do
  if type(v) == "userdata" then add("userdata bk." .. k, v) end
end
add("coroutine suspended", coroutine.create(function() coroutine.yield() end))
-- Workers' objects in their end states: a closed channel, a cancelled worker (an endless loop).
if bk.channel then
  local closed = bk.channel()
  closed:close()
  add("userdata closed channel", closed)
end
if bk.worker then
  local cancelled = bk.worker(function() while true do end end)
  cancelled:cancel()
  add("userdata cancelled worker", cancelled)
end
local dead = coroutine.create(function() end)
coroutine.resume(dead)
add("coroutine dead", dead)
add("coroutine running", coroutine.running())

-- Hostile tables: one metamethod that raises or yields, on a table with array and hash parts.
local metamethods = { "__index", "__newindex", "__len", "__pairs", "__eq", "__gc", "__call", "__tostring",
                      "__lt", "__le", "__concat", "__close", "__mode", "__name", "__metatable" }
for _, mm in ipairs(metamethods) do
  for _, how in ipairs({ "raises", "yields" }) do
    local mt = {}
    if mm == "__mode" then mt[mm] = how == "raises" and "kv" or "weird"
    elseif mm == "__name" then mt[mm] = how == "raises" and {} or 42
    elseif mm == "__metatable" then mt[mm] = how == "raises" and false or "locked"
    else mt[mm] = how == "raises" and raiser or yielder end
    add("hostile " .. mm .. " " .. how, setmetatable({ 1, 2, 3, a = 1, [4] = "four" }, mt))
  end
end
-- Sizes: a table whose border (#t) is 2^40 while only 1..5 exist; a list holding NaN.
local huge = { 1, 2, 3, 4, 5 }
huge[8] = 8; huge[9] = 9
for k = 4, 40 do huge[1 << k] = 1 end
add("table border 2^40", huge)
add("table with NaN", { 0 / 0, 1, 0 / 0 })
-- Forged class markers: a table and a FILE handle whose metatables claim to be bridge objects.
add("table forged bk class", setmetatable({}, { __bkclass = true, __name = "bk.Timer", __index = raiser }))
local forgedFile = io.tmpfile()
if forgedFile then
  debug.setmetatable(forgedFile, { __bkclass = true, __name = "bk.BlockHandle", __index = { cancel = raiser } })
  add("userdata FILE* forged bk class", forgedFile)
end
-- Coroutines closed in the middle of a bk call: a block runs bk inside a coroutine that yields (or
-- fails to) and is closed, with a <close> variable calling bk as it goes.
add("function closing a coroutine mid-call", function(...)
  local co = coroutine.create(function()
    local guard <close> = setmetatable({}, { __close = function() bk.map({ 1 }, tostring) end })  -- luacheck: ignore 211 (closed when the coroutine is)
    bk.each({ 1, 2 }, function() coroutine.yield() end)
    coroutine.yield()
  end)
  coroutine.resume(co)
  coroutine.close(co)
  return ...
end)
-- With a memory cap (MATRIX_MEMORY_CAP, set by the harness with bklua --memory-limit): a block
-- whose allocation trips the cap inside the helper.
if os.getenv("MATRIX_MEMORY_CAP") then
  add("function tripping the memory cap", function() return string.rep("x", 1 << 30) end)
end

-- A table whose __index chains to a raising proxy, and one whose __index is a table of raisers.
add("hostile __index chain", setmetatable({}, { __index = setmetatable({}, { __index = raiser }) }))
add("hostile all metamethods", setmetatable({ 1 }, {
  __index = raiser, __newindex = raiser, __len = raiser, __pairs = raiser, __eq = raiser,
  __call = raiser, __tostring = raiser, __lt = raiser, __le = raiser, __concat = raiser }))

-- MARK: calling

local function isAcceptableError(err)
  if type(err) == "string" then return true end
  -- A callback's own error value, unchanged; bk.cancelled from a cancelled task.
  return err == SENTINEL or err == BADERROR or err == nil or rawequal(err, bk.cancelled)
end

local distinct = {}  -- MATRIX_VERBOSE=1 lists the distinct error messages seen
local function checkName(err, name, label)
  if type(err) ~= "string" then return end
  if os.getenv("MATRIX_VERBOSE") then
    local short = err:gsub("\nstack traceback:.*", ""):gsub("0x%x+", "0x"):sub(1, 160)
    if not distinct[short] then distinct[short] = true print("error: " .. short) end
  end
  -- "X expected, got X" (table expected, got table) says nothing of what is wrong.
  for expected, got in err:gmatch("([%w%._%*]+) expected[^,()]*, got ([%w%._%*]+)") do
    if expected == got then fail(label .. ": the message reads '" .. expected .. " expected, got " .. got .. "': " .. err) end
  end
  local named = err:match("bad argument #%d+ to '([^']*)'") or err:match("calling '([^']*)' on bad self")
  if named and named ~= name and named ~= "bk_" .. name and named ~= "?" then
    fail(label .. ": error names '" .. named .. "' instead of '" .. name .. "': " .. err)
  end
end

local function describeArgs(args, n)
  local parts = {}
  for i = 1, n do parts[i] = args[i] == nil and "nil" or tostring(args.names and args.names[i] or type(args[i])) end
  return "(" .. table.concat(parts, ", ") .. ")"
end

-- Calls f(unpack(args, 1, n)) directly and inside a coroutine (resumed while it yields; with a
-- hostile callback among the arguments, the collector runs before each resume).
local function try(f, name, args, n, label)
  calls = calls + 1
  local collects = false
  for i = 1, n do if hostile.isHostile[args[i]] then collects = true end end
  local ok, err = pcall(f, unpack(args, 1, n))
  hostile.restore()
  if not ok then
    if not isAcceptableError(err) then
      fail(label .. " " .. describeArgs(args, n) .. ": error value is a " .. type(err))
    end
    checkName(err, name, label)
  end
  local co = coroutine.create(f)
  local okResume, errResume = coroutine.resume(co, unpack(args, 1, n))
  local resumes = 0
  while okResume and coroutine.status(co) == "suspended" and resumes < 5 do
    resumes = resumes + 1
    if collects then collectgarbage() end
    okResume, errResume = coroutine.resume(co)
  end
  hostile.restore()
  if not okResume then
    if not isAcceptableError(errResume) then
      fail(label .. " in a coroutine " .. describeArgs(args, n) .. ": error value is a " .. type(errResume))
    end
    checkName(errResume, name, label)
  end
end

-- Plausible arguments, used to find a call that works (the baseline the bad values replace).
local plausible = { { 1, 2, 3 }, function() return true end, 0.01, "x", true, { a = 1 } }

local function each3(pool1, pool2, pool3, visit)
  for _, a in ipairs(pool1) do visit({ a }, 1) end
  for _, a in ipairs(pool1) do for _, b in ipairs(pool2) do visit({ a, b }, 2) end end
  for _, a in ipairs(pool1) do
    for _, b in ipairs(pool2) do
      for _, c in ipairs(pool3) do visit({ a, b, c }, 3) end
    end
  end
end

local extraPool = {}  -- objects of every class, for function mode

local function baselines(f)
  local found, seen = { {} }, {}
  local pool = {}
  for _, v in ipairs(plausible) do pool[#pool + 1] = v end
  for _, v in ipairs(extraPool) do pool[#pool + 1] = v end
  each3(pool, pool, plausible, function(args, n)
    if pcall(f, unpack(args, 1, n)) then
      local key = n .. ":" .. describeArgs(args, n)
      if not seen[key] then
        seen[key] = true
        found[#found + 1] = { n = n, unpack(args, 1, n) }
      end
    end
  end)
  -- Keep a few: the empty one, the shortest and the longest that worked.
  local keep = { found[1] }
  if #found > 1 then keep[#keep + 1] = found[2] end
  if #found > 2 then keep[#keep + 1] = found[#found] end
  return keep
end

local MAX_ARITY = 4

-- Every bad value in every position of every baseline, then missing and extra arguments.
local function matrix(f, name, label, self)
  local offset = self ~= nil and 1 or 0
  for _, base in ipairs(baselines(self ~= nil and function(...) return f(self, ...) end or f)) do
    local n = math.max(base.n or 0, MAX_ARITY)
    for position = 1, n do
      for _, entry in ipairs(values) do
        local args = { n = n + offset }
        if self ~= nil then args[1] = self end
        for i = 1, n do args[i + offset] = base[i] end
        args[position + offset] = entry[2]
        try(f, name, args, n + offset, label .. " arg " .. position .. " = " .. entry[1])
      end
    end
    -- Missing arguments: every prefix of the baseline.
    for k = 0, (base.n or 0) do
      local args = {}
      if self ~= nil then args[1] = self end
      for i = 1, k do args[i + offset] = base[i] end
      try(f, name, args, k + offset, label .. " with " .. k .. " arguments")
    end
    -- Extra arguments.
    local args = {}
    if self ~= nil then args[1] = self end
    for i = 1, (base.n or 0) do args[i + offset] = base[i] end
    local k = (base.n or 0) + offset
    for _, entry in ipairs({ values[2], values[20], values[#values] }) do
      k = k + 1
      args[k] = entry[2]
    end
    try(f, name, args, k, label .. " with extra arguments")
  end
  -- Hostile callbacks where they are called: in each position, the others filled with a list, a
  -- dictionary, or a list then numbers (reduce's initial value), whatever the baselines found.
  -- Once per function (not again in the run under a memory cap).
  if self == nil and not os.getenv("MATRIX_MEMORY_CAP") then
    for position = 1, 3 do
      for pattern = 1, 3 do
        for _, c in ipairs(hostile.callbacks) do
          local args = { n = 3 }
          for i = 1, 3 do
            args[i] = pattern == 1 and { 1, 2, 3 } or pattern == 2 and { a = 1, b = 2 } or (i == 1 and { 1, 2, 3 } or 0)
          end
          args[position] = c[2]
          try(f, name, args, 3, label .. " arg " .. position .. " = function " .. c[1] .. " (pattern " .. pattern .. ")")
        end
      end
    end
  end
end

-- Functions that run the loop must not see pending work with an unbounded time: they get their own
-- child and never run while discovering objects.
-- Channel and worker waits are unbounded too (a full channel's send, a receive with a timeout of
-- 1e308, a worker's result): test_workers.lua gives them their bad-input cases with bounded waits.
-- The task functions that wait (outside a task they run the loop until done, e.g. bk.sleep(1e308))
-- are called inside a task instead, cancelled at once if it suspends.
local blocking = { run = true, send = true, receive = true, result = true,
                   await = true, sleep = true, awaitAll = true, awaitAny = true }
local waitsInTask = { await = true, sleep = true, awaitAll = true, awaitAny = true }

local function inTask(f)
  return function(...)
    local task = bk.async(f, ...)
    if not task.isFinished then task:cancel() end
    return task:result()
  end
end

local function functionNames()
  local names = {}
  for k, v in pairs(bk) do if type(v) == "function" then names[#names + 1] = k end end
  table.sort(names)
  return names
end

local function classOf(v)
  local mt = debug.getmetatable(v)
  if type(mt) ~= "table" then return nil end
  local name = rawget(mt, "__name")
  if type(name) ~= "string" then
    if type(v) ~= "table" then return nil end
    local ok, kind = pcall(bk.kind, v)
    name = "table " .. (ok and tostring(kind) or "?")
  end
  -- Methods: the metatable's method table if there is one, and whatever bk function names the
  -- object answers with a function (objects whose __index is a function).
  local methods = {}
  local index = rawget(mt, "__index")
  local listed = type(index) == "table" and index or rawget(mt, "methods")
  if type(listed) == "table" then
    for k, f in next, listed do if type(k) == "string" and type(f) == "function" then methods[k] = f end end
  end
  if type(index) == "function" then
    for _, k in ipairs(functionNames()) do
      local ok, f = pcall(function() return v[k] end)
      if ok and type(f) == "function" then methods[k] = f end
    end
  end
  return name, methods
end

-- Objects the bridge makes: results of plausible calls of every non-blocking function (a second
-- round also passes the objects of the first), and bk's own values.
-- Returns { [className] = { object = o, methods = t } } and the list of one object per class.
local function discoverObjects()
  local classes, objects = {}, {}
  local function note(v)
    if type(v) ~= "userdata" and type(v) ~= "table" then return end
    local name, methods = classOf(v)
    if name and not classes[name] then
      classes[name] = { object = v, methods = methods }
      objects[#objects + 1] = v
    end
  end
  -- In name order: pairs order changes between processes, and the class runs are separate processes.
  local valueNames = {}
  for k in pairs(bk) do valueNames[#valueNames + 1] = k end
  table.sort(valueNames)
  for _, k in ipairs(valueNames) do note(bk[k]) end
  for round = 1, 2 do
    local pool = {}
    for _, v in ipairs(plausible) do pool[#pool + 1] = v end
    if round == 2 then for _, v in ipairs(objects) do pool[#pool + 1] = v end end
    for _, name in ipairs(functionNames()) do
      if not blocking[name] then
        local f = bk[name]
        local function collect(ok, ...)
          for i = 1, select("#", ...) do note((select(i, ...))) end
        end
        if round == 1 then collect(pcall(f)) end  -- no arguments (bk.channel())
        each3(pool, pool, round == 1 and plausible or {}, function(args, n) collect(pcall(f, unpack(args, 1, n))) end)
      end
    end
  end
  silence()
  return classes, objects
end

local function finish()
  -- Let what was scheduled run (callbacks raising, yielding, re-entering), for a bounded time.
  silence()
  pcall(bk.run, 0.2)
  collectgarbage()
  collectgarbage()
  if #failures > 0 then
    print("matrix FAILED: " .. #failures .. " of " .. calls .. " calls")
    for i = 1, math.min(#failures, 50) do print("  " .. failures[i]) end
    os.exit(1, true)
  end
  print("matrix ok " .. calls .. " calls, " .. reported .. " callback errors reported")
  -- Finalizers that call every bk function, run while the state closes.
  for _, name in ipairs(functionNames()) do
    if name ~= "run" then
      setmetatable({}, { __gc = function()
        pcall(bk[name], { 1, 2 }, function() return true end, 0)
        pcall(bk[name], function() end, 0)
      end })
    end
  end
  io.stdout:flush()
  os.exit(0, true)  -- closing the state runs every finalizer
end

if mode == "discover" then
  for _, name in ipairs(functionNames()) do print("function " .. name) end
  local names = {}
  for name in pairs(discoverObjects()) do names[#names + 1] = name end
  table.sort(names)
  for _, name in ipairs(names) do print("class " .. name) end
  os.exit(0, true)
elseif mode == "function" then
  local f = bk[target]
  assert(type(f) == "function", "no function bk." .. tostring(target))
  if not blocking[target] then
    local _, objects = discoverObjects()
    extraPool = objects
    for _, o in ipairs(objects) do add("object " .. tostring(classOf(o)), o) end
  end
  if waitsInTask[target] then f = inTask(f) end
  matrix(f, target, "bk." .. target)
  finish()
elseif mode == "class" then
  local class = discoverObjects()[target]
  assert(class, "no object of class " .. tostring(target) .. " found")
  local methodNames = {}
  for k, v in pairs(class.methods) do
    if type(k) == "string" and type(v) == "function" and not k:match("^bk_") then methodNames[#methodNames + 1] = k end
  end
  table.sort(methodNames)
  -- A FILE handle wearing this class's own metatable: must never be taken for one of its objects.
  local disguised = io.tmpfile()
  if disguised and type(class.object) == "userdata" then
    debug.setmetatable(disguised, debug.getmetatable(class.object))
    add("userdata FILE* disguised as " .. target, disguised)
  end
  for _, name in ipairs(methodNames) do
    local f = class.methods[name]
    -- On the right object with bad arguments, and on every bad value as self.
    if not blocking[name] then matrix(f, name, target .. ":" .. name, class.object) end
    for _, entry in ipairs(values) do
      try(f, name, { entry[2] }, 1, target .. ":" .. name .. " self = " .. entry[1])
    end
  end
  -- Properties: read and write candidate names with every bad value.
  local properties = { "isCancelled", "isFinished", "target", "isValid", "timeInterval", "realDelegate",
                       "delegate", "count", "label", "name", "value", "x", 1, true }
  for _, key in ipairs(properties) do
    try(function(o, k) return o[k] end, "__index", { class.object, key }, 2, target .. "." .. tostring(key))
    for _, entry in ipairs(values) do
      try(function(o, k, v) o[k] = v end, "__newindex", { class.object, key, entry[2] }, 3,
        target .. "." .. tostring(key) .. " = " .. entry[1])
    end
  end
  finish()
else
  error("usage: matrix.lua discover | function NAME | class NAME")
end
