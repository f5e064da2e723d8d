-- A seeded random-program fuzzer for the bk functions (run in a child bklua by Tests/lua/test_fuzz.lua).
--
--   bklua fuzz.lua SEED PROGRAMS [LASTFILE]
--
-- Generates PROGRAMS random Lua programs from SEED. Each program is a few statements calling random
-- bk functions and methods of the objects earlier statements made, with random values and callbacks
-- that raise, cancel, invalidate, observe, re-enter bk, yield, collect garbage and stop the loop; then
-- it runs the loop for a bounded time. Every statement runs under pcall: errors are expected, a crash,
-- a hang or a broken state are not. Before running a program its text is written to LASTFILE, so
-- after a crash that file reproduces it (`bklua LASTFILE` after the same prelude). Ends with
-- "fuzz ok N programs" on success.
-- The generated programs run as separate chunks and reach these by name.
-- luacheck: globals BUDGET DISGUISED FORGED FUZZBK HOSTILE HUGE TASKS

local seed, programs, lastFile = tonumber(arg[1]) or 1, tonumber(arg[2]) or 100, arg[3]
local bk = require "bk"
math.randomseed(seed)
local random = math.random

-- Hostile callbacks (../badinput/hostile.lua): generated callbacks call HOSTILE.act(n) to rewrite
-- the slots and upvalues of the bk frames below them, drop a walk's userdata and yield, close the
-- running coroutine or make finalizers that call bk.
local here = (debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$")) or "."
local hostilePath = here .. "/../badinput/hostile.lua"
HOSTILE = assert(loadfile(hostilePath))(bk)

local disguises = {}  -- real metatables of bridge objects, for DISGUISED()
local reported = 0
bk.onError(function() reported = reported + 1 end)

-- Names to call: bk's functions (run only with a small time, see below) and every method name of
-- the objects the bridge makes (learnt from plausible calls, as the bad-input matrix does).
local functionNames, methodNames = {}, {}
local signatures = {}  -- bk function name -> list of argument kind lists that worked
for k, v in pairs(bk) do if type(v) == "function" then functionNames[#functionNames + 1] = k end end
table.sort(functionNames)
do
  local seen = {}
  local function learn(v)
    local mt = debug.getmetatable(v)
    if type(mt) ~= "table" then return end
    local index = rawget(mt, "__index")
    local listed = type(index) == "table" and index or rawget(mt, "methods")
    if type(listed) == "table" then
      for k, f in next, listed do
        if type(k) == "string" and type(f) == "function" and not k:match("^bk_") and not seen[k] then
          seen[k] = true
          methodNames[#methodNames + 1] = k
        end
      end
    end
  end
  local plausible = { { 1, 2, 3 }, function() return true end, 0.01, "x", true, { a = 1 } }
  local kinds = { "array", "function", "number", "string", "boolean", "dictionary" }
  local function try(name, ...)
    local results = table.pack(pcall(bk[name], ...))
    for i = 2, results.n do learn(results[i]) end
    if results[1] then
      local signature = {}
      for i = 1, select("#", ...) do
        for k, v in ipairs(plausible) do if v == select(i, ...) then signature[i] = kinds[k] end end
      end
      signatures[name] = signatures[name] or {}
      table.insert(signatures[name], signature)
    end
  end
  for _, name in ipairs(functionNames) do
    if name ~= "run" then
      for _, a in ipairs(plausible) do
        try(name, a)
        for _, b in ipairs(plausible) do
          try(name, a, b)
          for _, c in ipairs(plausible) do try(name, a, b, c) end
        end
      end
    end
  end
  for _, v in pairs(bk) do learn(v) end
  table.sort(methodNames)
  -- Real metatables of bridge objects, for DISGUISED().
  local handle = bk.performBlock(print, 100)
  bk.cancelBlock(handle)
  for _, v in ipairs({ bk.mainQueue, bk.timerWithTimeInterval(1, print), handle }) do
    disguises[#disguises + 1] = debug.getmetatable(v)
  end
  bk.onError(function() reported = reported + 1 end)
  bk.run(0.05)
end

local function pick(list) return list[random(#list)] end

-- The programs see `bk` through this table: the waiting task functions run as usual inside a task
-- that can suspend (bounded by the program's final bk.run); elsewhere they would run the loop for
-- as long as their random arguments say (bk.sleep(1e9)), so they run in a task cancelled at once
-- if it suspends (the cancellation path is fuzzed that way too).
FUZZBK = setmetatable({}, { __index = bk })
for _, name in ipairs({ "sleep", "await", "awaitAll", "awaitAny" }) do
  local f = bk[name]
  FUZZBK[name] = function(...)
    if bk.currentTask() and coroutine.isyieldable() then return f(...) end
    local task = bk.async(f, ...)
    if not task.isFinished then task:cancel() end
    return task:result()
  end
end

-- MARK: generating

local program     -- lines of the program being generated
local variables   -- how many locals v1..vN the program has so far

local literals = {
  "nil", "true", "false", "0", "1", "-1", "3", "1e9", "0.001", "0.5", "0/0", "math.huge", "math.mininteger",
  "'x'", "'new'", "'old'", "'initial'", "'prior'", "'a.b'", "'concurrent'", "''", "'delegate'",
  "{}", "{1, 2, 3}", "{a = 1, b = 2}", "{1, 2, x = {y = 3}}", "bk.mainQueue", "bk.backgroundQueue", "bk.null",
  "setmetatable({1, 2}, {__index = function() error('hostile') end, __newindex = function() error('hostile') end})",
  "setmetatable({}, {__len = function() error('hostile') end, __pairs = function() error('hostile') end})",
  "setmetatable({}, {__eq = function() coroutine.yield() end, __gc = function() error('in gc') end})",
  "coroutine.create(function() end)", "io.stdout", "print",
  -- Hostile values: a border of 2^40, NaN in a list, forged bridge markers (a table, and a FILE
  -- handle wearing a forged or a real bk metatable), an error value that is a table.
  "HUGE()", "{0/0, 1, 0/0}",
  "setmetatable({}, {__bkclass = true, __name = 'bk.Timer', __index = function() error('lies') end})",
  "FORGED()", "DISGUISED()", "setmetatable({}, {__tostring = function() return 'error object' end})",
}

-- Hostile values that need a statement to build (globals the programs call).
function HUGE()
  local t = { 1, 2, 3, 4, 5 }
  t[8] = 8; t[9] = 9
  for k = 4, 40 do t[1 << k] = 1 end
  return t
end
function FORGED()
  local f = io.tmpfile()
  if f then debug.setmetatable(f, { __bkclass = true, __name = 'bk.BlockHandle', __index = { cancel = print } }) end
  return f
end
function DISGUISED()
  local f = io.tmpfile()
  if f and #disguises > 0 then debug.setmetatable(f, disguises[random(#disguises)]) end
  return f
end

local value  -- forward: value(depth) returns an expression

-- A callback: one or two actions, then maybe a return value.
local function callback(depth)
  local body = {}
  for _ = 1, random(2) do
    local r = random(17)
    if r == 1 then body[#body + 1] = "error('raised in callback')"
    elseif r == 2 then body[#body + 1] = "error(setmetatable({}, {__tostring = function() error('bad tostring') end}))"
    elseif r == 3 and variables > 0 then body[#body + 1] = "pcall(bk.cancelBlock, v" .. random(variables) .. ")"
    elseif r == 4 and variables > 0 then
      body[#body + 1] = "pcall(function() v" .. random(variables) .. ":" .. pick({ "cancel", "invalidate", "fire" }) .. "() end)"
    elseif r == 5 and depth < 2 then
      -- Re-enter bk from inside a callback.
      body[#body + 1] = "pcall(bk." .. pick(functionNames) .. ", " .. value(depth + 1) .. ", " .. value(depth + 1) .. ", " .. value(depth + 1) .. ")"
    elseif r == 6 then body[#body + 1] = "pcall(coroutine.yield, 1)"
    elseif r == 7 then body[#body + 1] = "collectgarbage()"
    elseif r == 8 then body[#body + 1] = "bk.stop()"
    elseif r == 9 and variables > 0 then
      -- Write to an earlier value (observed tables notice; others may raise).
      body[#body + 1] = "pcall(function() v" .. random(variables) .. "." .. pick({ "x", "name", "target", "delegate" }) .. " = " .. value(depth + 1) .. " end)"
    elseif r == 10 and bk.addObserverForKeyPath and variables > 0 then
      body[#body + 1] = "pcall(bk.addObserverForKeyPath, v" .. random(variables) .. ", 'x', function() error('observer raised') end)"
    elseif r == 11 then body[#body + 1] = "pcall(bk.run, 0.001)"
    elseif r == 13 then
      -- A task that sleeps, awaits and may be cancelled by a later statement.
      body[#body + 1] = "TASKS[#TASKS + 1] = bk.async(function() bk.sleep(0.00" .. random(5) .. ") return pcall(bk.await, TASKS[#TASKS] or bk.async(print), 0.01) end)"
    elseif r >= 15 then body[#body + 1] = "HOSTILE.act(" .. random(#HOSTILE.callbacks) .. ")"
    elseif r == 12 then
      -- A coroutine that calls bk and is closed mid-way, a <close> variable calling bk as it goes.
      body[#body + 1] = "do local co = coroutine.create(function() "
        .. "local g <close> = setmetatable({}, {__close = function() pcall(bk.map, {1}, tostring) end}) "
        .. "pcall(bk.each, {1, 2}, function() coroutine.yield() end) coroutine.yield() end) "
        .. "coroutine.resume(co) coroutine.close(co) end"
    else body[#body + 1] = "local _ = ..." end
  end
  if random(2) == 1 then body[#body + 1] = "return " .. value(depth + 1) end
  return "function(...) BUDGET(); " .. table.concat(body, "; ") .. " end"
end

function value(depth)
  local r = random(10)
  if r <= 2 and variables > 0 then return "v" .. random(variables) end
  if r <= 4 and depth < 3 then return callback(depth) end
  return pick(literals)
end

-- A value of a kind that worked in discovery, usually; sometimes anything.
local function valueOfKind(kind)
  if random(8) == 1 then return value(1) end
  if kind == "function" then return callback(0) end
  if (kind == "array" or kind == "dictionary") and variables > 0 and random(3) == 1 then
    return "v" .. random(variables)
  end
  if kind == "array" then return pick({ "{1, 2, 3}", "{}", "{'a', 'b', 'a'}", "bk.array({5, 4})", "{1, 2, 2, 0/0}" }) end
  if kind == "dictionary" then return pick({ "{a = 1, b = 2}", "{x = {y = 1}}", "bk.dictionary({k = 'v'})" }) end
  if kind == "number" then return pick({ "0", "0.001", "0.01", "1", "2", "-1", "0/0" }) end
  if kind == "string" then return pick({ "'x'", "'a.b'", "'new'", "'concurrent'", "'delegate'" }) end
  if kind == "boolean" then return pick({ "true", "false" }) end
  return value(1)
end

local function argumentsFor(name, dropFirst)
  local args = {}
  local known = signatures[name]
  if known and random(5) > 1 then
    local signature = pick(known)
    for i = dropFirst and 2 or 1, #signature do args[#args + 1] = valueOfKind(signature[i]) end
  else
    for i = 1, random(0, 4) do args[i] = value(0) end
  end
  return args
end

local function statement()
  local r = random(10)
  local call, args
  if r <= 3 and variables > 0 and #methodNames > 0 then
    local receiver = "v" .. random(variables)
    local method = pick(methodNames)
    args = argumentsFor(method, true)
    if method == "result" then args = { "0.00" .. random(9) } end  -- a task's result: a bounded wait
    call = "function() return " .. receiver .. ":" .. method .. "(" .. table.concat(args, ", ") .. ") end"
  else
    local name = pick(functionNames)
    args = argumentsFor(name, false)
    if name == "run" then args = { "0.0" .. random(9) } end  -- never an unbounded run
    call = "function() return bk." .. name .. "(" .. table.concat(args, ", ") .. ") end"
  end
  variables = variables + 1
  -- Inside a coroutine half the time, so yields from callbacks and metamethods are tried.
  if random(2) == 1 then
    return "local v" .. variables .. " = select(2, pcall(" .. call .. "))"
  end
  return "local v" .. variables .. " = select(2, coroutine.resume(coroutine.create(" .. call .. ")))"
end

local function generate()
  program, variables = {}, 0
  for _ = 1, random(3, 10) do program[#program + 1] = statement() end
  program[#program + 1] = "pcall(bk.run, 0.0" .. random(5) .. ")"
  return table.concat(program, "\n")
end

-- MARK: running

local failedPrograms = 0

-- Callbacks that re-enter with branching (an error handler that fires a failing timer and runs
-- the loop) make exponentially many calls, as `function f() pcall(f) pcall(f) end` does in plain
-- Lua: a hang of the program, not of the bridge. Every generated callback starts with BUDGET(),
-- which raises once a program has made too many, so such trees are cut off.
local callbackCalls = 0
function BUDGET()
  callbackCalls = callbackCalls + 1
  if callbackCalls > 20000 then error("callback budget exhausted", 0) end
end

for i = 1, programs do
  local text = generate()
  if lastFile then
    local f = assert(io.open(lastFile, "w"))
    f:write("-- fuzz seed ", seed, " program ", i, "\nlocal bk = require 'bk'\nfunction BUDGET() end\nTASKS = {}\n",
      "HOSTILE = assert(loadfile(", string.format("%q", hostilePath), "))(bk)\n", text, "\n")
    f:close()
  end
  TASKS = {}
  local chunk, err = load(text, "=fuzz" .. i, "t", setmetatable({ bk = FUZZBK }, { __index = _G }))
  if not chunk then
    print("generator produced invalid Lua: " .. err .. "\n" .. text)
    os.exit(2)
  end
  callbackCalls = 0
  local ok = pcall(chunk)
  HOSTILE.restore()                                      -- upvalues the callbacks replaced
  if not ok then failedPrograms = failedPrograms + 1 end  -- statements are protected: rare, allowed
  bk.onError(function() reported = reported + 1 end)     -- a program may have replaced it
  -- The state must still work.
  assert(bk.map({ 1, 2 }, function(x) return x * 2 end)[2] == 4, "state broken after program " .. i)
  if i % 25 == 0 then collectgarbage() end
end
bk.run(0.05)
collectgarbage()
print(string.format("fuzz ok %d programs (seed %d), %d callback errors reported, %d programs raised",
  programs, seed, reported, failedPrograms))
os.exit(0, true)
