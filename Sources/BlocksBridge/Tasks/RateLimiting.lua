-- Rate limiting: bk.debounce and bk.throttle, plain Lua objects (bk.Debounced, bk.Throttled) on
-- the loop's delayed blocks (bk.performBlock, bk.cancelBlock).
--
-- Loaded with the tasks engine (TasksLibrary.swift: pushFunctions), with the globals, the bk
-- module, the engine's natives (TaskPrimitives.swift: closing, getmetatable) and the engine's own
-- table, whose `checks` are the engine's argument checks, so that both word their errors alike;
-- returns the functions for bk.

---@type table, table, bk.TaskNatives, table
local G, bk, native, engine = ...

local error, select, type, tostring = G.error, G.select, G.type, G.tostring
local rawget, rawset, setmetatable = G.rawget, G.rawset, G.setmetatable
local unpack = G.table.unpack

local performBlock, cancelBlock = bk.performBlock, bk.cancelBlock
local closing, rawmetatable = native.closing, native.getmetatable
local checks = engine.checks
-- Error levels as the engine counts them (TaskEngine.lua: SCRIPT, the script's call from an entry).
local SCRIPT = checks.SCRIPT
local argError, checkDuration, typeName, gotName, atClose = checks.argError, checks.checkDuration,
  checks.typeName, checks.gotName, checks.atClose

-- Private keys of bk.Debounced / bk.Throttled objects.
local FN, INTERVAL, PENDING, ARGS = {}, {}, {}, {}

local function pack(...) return { n = select("#", ...), ... } end

local function limiterClass(name)
  local class = { __name = name, __metatable = name }
  local methods = {}
  class.methods = methods
  function class.__index(_, k) return methods[k] end
  function class.__newindex(_, k)
    error(("cannot set field '%s' of %s"):format(tostring(k), name), SCRIPT)  -- the VM calls it from the script
  end
  function class.__tostring(o)
    return name .. "(" .. (rawget(o, ARGS) ~= nil and "pending" or "idle") .. ")"  -- a call is kept
  end
  -- Called by the methods: the script's call is one frame further out.
  local function check(o, method)
    if closing() then atClose(method) end
    if type(o) ~= "table" or rawmetatable(o) ~= class or rawget(o, FN) == nil then
      error(("calling '%s' on bad self (%s expected, got %s)"):format(method, name, gotName(o, name)), SCRIPT + 1)
    end
  end
  return class, methods, check
end

local Debounced, debouncedMethods, checkDebounced = limiterClass("bk.Debounced")

local function debounceFire(d)
  rawset(d, PENDING, nil)
  local args = rawget(d, ARGS)
  rawset(d, ARGS, nil)
  return rawget(d, FN)(unpack(args, 1, args.n))
end

function Debounced.__call(d, ...)
  if closing() then atClose("bk.Debounced") end
  local pending = rawget(d, PENDING)
  if pending ~= nil then cancelBlock(pending) end
  rawset(d, ARGS, pack(...))
  rawset(d, PENDING, performBlock(d, debounceFire, rawget(d, INTERVAL)))
end

function debouncedMethods.cancel(d)
  checkDebounced(d, "cancel")
  local pending = rawget(d, PENDING)
  if pending ~= nil then cancelBlock(pending) end
  rawset(d, PENDING, nil)
  rawset(d, ARGS, nil)
end

function debouncedMethods.flush(d)
  checkDebounced(d, "flush")
  local pending = rawget(d, PENDING)
  if pending == nil then return end
  cancelBlock(pending)
  return debounceFire(d)
end

local function debounce(f, delay)
  if closing() then atClose("debounce") end
  if type(f) ~= "function" then argError(1, "debounce", "function expected, got " .. typeName(f), SCRIPT + 1) end
  checkDuration(delay, 2, "debounce", SCRIPT + 1)
  return setmetatable({ [FN] = f, [INTERVAL] = delay }, Debounced)
end

local Throttled, throttledMethods, checkThrottled = limiterClass("bk.Throttled")
local throttleEnd

-- The interval's window: it keeps the loop alive only while it holds a call to run at its end
-- (an idle window must not keep bklua or bk.run() waiting).
local function openWindow(t)
  local window = performBlock(t, throttleEnd, rawget(t, INTERVAL))
  window:unref()
  rawset(t, PENDING, window)
end

-- The interval since the last run is over: run the trailing call (and start a new interval).
function throttleEnd(t)
  local args = rawget(t, ARGS)
  if args == nil then
    rawset(t, PENDING, nil)
    return
  end
  rawset(t, ARGS, nil)
  openWindow(t)
  return rawget(t, FN)(unpack(args, 1, args.n))
end

function Throttled.__call(t, ...)
  if closing() then atClose("bk.Throttled") end
  local window = rawget(t, PENDING)
  if window ~= nil then
    rawset(t, ARGS, pack(...))  -- the latest call, run when the interval ends
    window:ref()
    return
  end
  openWindow(t)
  return rawget(t, FN)(...)
end

function throttledMethods.cancel(t)
  checkThrottled(t, "cancel")
  local pending = rawget(t, PENDING)
  if pending ~= nil then cancelBlock(pending) end
  rawset(t, PENDING, nil)
  rawset(t, ARGS, nil)
end

function throttledMethods.flush(t)
  checkThrottled(t, "flush")
  local args = rawget(t, ARGS)
  if args == nil then return end
  local pending = rawget(t, PENDING)
  if pending ~= nil then cancelBlock(pending) end
  return throttleEnd(t)
end

local function throttle(f, interval)
  if closing() then atClose("throttle") end
  if type(f) ~= "function" then argError(1, "throttle", "function expected, got " .. typeName(f), SCRIPT + 1) end
  checkDuration(interval, 2, "throttle", SCRIPT + 1)
  return setmetatable({ [FN] = f, [INTERVAL] = interval }, Throttled)
end

debouncedMethods.bk_cancel, debouncedMethods.bk_flush = debouncedMethods.cancel, debouncedMethods.flush
throttledMethods.bk_cancel, throttledMethods.bk_flush = throttledMethods.cancel, throttledMethods.flush

-- The classes, in the engine's table: where bklua's help finds their methods (help(d.flush)).
engine.Debounced, engine.Throttled = Debounced, Throttled

return { debounce = debounce, throttle = throttle }
