-- Tasks: sequential async code on the event loop (bk.async, bk.await, bk.sleep, ...).
--
-- Lua, not Swift, so that bk.await and bk.sleep can yield: between a task's coroutine and the
-- yield there is no C or Swift frame. Loaded once per state by TasksLibrary.swift, which passes the
-- globals, the bk module and the Swift primitives (`native`); returns the functions for bk.
--
-- A task is a table with metatable Task; its state lives under private keys (tables only this
-- file holds). Waiting is a condition loop: whatever may have finished what a task waits on wakes
-- it (a spurious wake-up costs one resume), and the task checks again. Wake-ups go through one
-- queue, drained at the outermost level, so chains of tasks finishing never nest resumes.

local G, bk, native = ...

local coroutine, table = G.coroutine, G.table
local create, resume, yield, close = coroutine.create, coroutine.resume, coroutine.yield, coroutine.close
local running, costatus, isyieldable = coroutine.running, coroutine.status, coroutine.isyieldable
local xpcall, pcall, error, select, type, tostring = G.xpcall, G.pcall, G.error, G.select, G.type, G.tostring
local rawget, rawset, rawequal, setmetatable, next = G.rawget, G.rawset, G.rawequal, G.setmetatable, G.next
local unpack = table.unpack
local huge = G.math.huge

local performBlock, cancelBlock, now = bk.performBlock, bk.cancelBlock, bk.now
local runUntil, watchHandle, watchTimer = native.runUntil, native.watchHandle, native.watchTimer
local report, recordCoroutineTraceback, rawmetatable = native.report, native.recordCoroutineTraceback, native.getmetatable
local errorReport = native.errorReport
local isHandle, isTimer, finishHandle = native.isHandle, native.isTimer, native.finishHandle
-- The engine's own delayed calls (no handle object; see TaskPrimitives.swift).
local schedule, unschedule = native.schedule, native.unschedule

-- MARK: values and errors

-- bk.cancelled: the error a cancelled task's suspension point raises (made by TasksLibrary.swift).
local cancelled = native.cancelled

-- The name luaL_typeerror would give: a metatable's __name, else the type.
local function typeName(v)
  local mt = rawmetatable(v)
  local name = type(mt) == "table" and rawget(mt, "__name")
  if type(name) == "string" then return name end
  return type(v)
end

local function argError(position, name, message, level)
  error(("bad argument #%d to '%s' (%s)"):format(position, name, message), (level or 1) + 2)
end

-- A duration or timeout: a finite number >= 0 (level: where the caller's caller is).
local function checkDuration(v, position, name)
  if type(v) ~= "number" then argError(position, name, "number expected, got " .. typeName(v), 2) end
  if not (v >= 0 and v < huge) then argError(position, name, "duration must be a finite number >= 0", 2) end
end

-- MARK: tasks

-- A task is two tables: the object scripts hold (metatable Task, a single private key RECORD),
-- and its record, a plain table only this file reaches, where the engine keeps the task's state
-- with plain field access (no rawget/rawset calls, no metamethods): co, state, results, waiters,
-- cancelled, observed, queued, nested, woke, sleep, seq, traced, block, and object (the object).
-- Inside this file "task" is a record; the object is what bk.async returns.
local RECORD = {}

-- STATE values. A task is "running" from bk.async until its function returns or raises.
local RUNNING, DONE, FAILED = 1, 2, 3

-- What a task's coroutine yields to the scheduler when it waits (woken by what it waits on).
-- Anything else is a plain coroutine.yield. A task's coroutine runs its function itself (no
-- wrapper, no xpcall): a suspended task holds no frames but its own, and an error leaves the dead
-- coroutine's stack for its traceback.
local SUSPEND = {}

local Task = { __name = "bk.Task" }
local methods = {}

-- The record of a task object; nil for anything else (only task objects hold the private key;
-- no metatable read: await's hot path).
local function recordOf(v)
  if type(v) == "table" then return rawget(v, RECORD) end
  return nil
end

local function isTask(v)
  return recordOf(v) ~= nil
end

local current = nil        -- the task whose coroutine runs now (nil: none)
local sequence = 0         -- orders task endings, for awaitAll / awaitAny "first in time"

-- The running task: the current task when the running coroutine is its own (a plain coroutine
-- inside a task, a delayed block, the main chunk: none).
local function runningTask()
  local t = current
  if t ~= nil and t.co == running() then return t end
  return nil
end

-- The ready queue: tasks to resume, drained at the outermost level.
local ready, head, tail = {}, 1, 0
local draining = false

local settle, runBlock, starting, cancelWork  -- forward
local internal = {}  -- the engine's own loop callbacks (runBlock calls them directly)

local function restore(previous, ...)
  current = previous
  return ...
end

-- Resumes `task` (its coroutine suspended) with `...`; current is the task meanwhile.
local function step(task, ...)
  local previous = current
  current = task
  return settle(task, restore(previous, resume(task.co, ...)))
end

local function drain()
  while head <= tail do
    local task = ready[head]
    ready[head] = nil
    head = head + 1
    task.queued = nil
    local co = task.co
    if co ~= nil and costatus(co) == "suspended" then step(task) end
  end
end

-- Wakes a task waiting on something (it checks again what it waits for).
local function wake(task)
  if task.co == nil or task.queued then return end
  task.queued = true
  tail = tail + 1
  ready[tail] = task
  if draining then return end
  draining = true
  local ok, err = pcall(drain)
  draining = false
  if not ok then error(err, 0) end
end

-- A waiter is a task (woken) or a cell of a loop run outside any task (marked).
local function notify(waiter)
  if waiter.state ~= nil then wake(waiter) else rawset(waiter, 1, true) end
end

-- A cancelled task's nested loop (see wait) must end too.
local function notifyTask(task)
  local cell = task.nested
  if cell ~= nil then rawset(cell, 1, true) end
  wake(task)
end

local function reportIfUnobserved(task)
  if not task.observed then
    task.observed = true
    report(task.results[1], task.traced)
  end
end

-- Records how a task ended and wakes its waiters. `resumed, ...` are resume's results.
function settle(task, resumed, ...)
  local co = task.co
  if resumed and costatus(co) == "suspended" then
    if ... == SUSPEND then return end
    -- A plain coroutine.yield in a task: it gives the loop a turn and resumes with no values.
    schedule(wake, task, 0)
    return
  end
  local ok, results = resumed, nil
  if resumed then
    results = { n = select("#", ...), ... }
  else
    -- Raised out of the task's function: the traceback from where it was raised (the dead
    -- coroutine's stack), then its pending <close> variables run, as an xpcall would have.
    local err = ...
    recordCoroutineTraceback(co, err)
    local _, closeErr = close(co)
    if closeErr ~= nil then err = closeErr end
    results = { err }
  end
  sequence = sequence + 1
  task.seq = sequence
  task.co = nil
  task.nested = nil
  task.sleep = nil
  task.results = results
  task.state = ok and DONE or FAILED
  local waiters = task.waiters
  task.waiters = nil
  local block = task.block
  if block ~= nil then
    -- A delayed or timer block that ran as a task. Ended at once: runBlock raises its error for
    -- the loop to report. Ended after suspending: reported now; its handle is finished.
    if task ~= starting then
      if block ~= false then finishHandle(block) end
      if not ok and not rawequal(results[1], cancelled) and (waiters == nil or next(waiters) == nil) then
        task.observed = true
        report(results[1], errorReport(results[1]))
      end
    end
  elseif not ok and not rawequal(results[1], cancelled) then
    -- Reported on the next turn of the loop unless someone awaits it by then.
    if waiters ~= nil and next(waiters) ~= nil then task.observed = true
    else
      -- The report now: the traceback recorded where it was raised is gone by the next turn.
      task.traced = errorReport(results[1])
      schedule(reportIfUnobserved, task, 0)
    end
  end
  if waiters ~= nil then
    for i = 1, #waiters do notify(waiters[i]) end
  end
end

-- A new task table. The nil fields only size it (a constructor sizes the table for every field it
-- names): the keys a task gets as it sleeps and ends then never make it grow, and each growth is a
-- rehash.
local function newTask(f, block)
  local task = { co = create(f), state = RUNNING, block = block, object = false,
    sleep = nil, woke = nil, seq = nil, results = nil }
  task.object = setmetatable({ [RECORD] = task }, Task)
  return task
end

local function async(f, ...)
  if type(f) ~= "function" then argError(1, "async", "function expected, got " .. typeName(f)) end
  local task = newTask(f)
  step(task, ...)
  return task.object
end

-- A delayed block (its handle's identity, a light userdata) or timer block (false) run by the loop
-- as a task of its own, so that it may suspend. Returns true when it suspended (it ends later);
-- raises its error when it failed at once (the loop reports it with the traceback recorded where
-- it was raised).
function runBlock(handle, f, ...)
  -- The engine's own callbacks (a sleep ending, a wake-up) never suspend: called directly.
  if internal[f] then
    f(...)
    return false
  end
  local task = newTask(f, handle or false)
  local previous = starting
  starting = task
  step(task, ...)
  starting = previous
  local state = task.state
  if state == RUNNING then return true end
  task.observed = true
  if state == FAILED then error(task.results[1], 0) end
  return false
end

local function cancel(task)
  if task.co == nil or task.cancelled then return end
  task.cancelled = true
  local sleeping = task.sleep
  if sleeping ~= nil then
    task.sleep = nil
    unschedule(sleeping)
  end
  notifyTask(task)
end

-- MARK: awaitables

-- An awaitable kind: test(x); begin(x) -> token; poll(x, token) -> nil (pending) or an outcome
-- { ok, n = count, ... } ({ false, err } for a failure); attach(x, waiter, token): waiter is
-- notified when x may be done; detach(x, waiter) (may be a no-op: spurious wake-ups are fine);
-- optional cancel(x): what Ctrl-C at the prompt does to x while a wait on it is interrupted.
-- Other families add kinds (kinds[#kinds + 1] = kind) from their extension, run when the engine
-- loads (TasksLibrary.swift).
local kinds = {}

local OK_EMPTY = { true, n = 0 }
local CANCELLED_OUTCOME = { false, cancelled }

local taskKind = {
  test = isTask,
  begin = function() return nil end,
  poll = function(object)
    local t = rawget(object, RECORD)
    local state = t.state
    if state == RUNNING then return nil end
    t.observed = true
    if t.cancelled then return CANCELLED_OUTCOME end
    local results = t.results
    if state == DONE then return { true, n = results.n, unpack(results, 1, results.n) } end
    return { false, results[1] }
  end,
  attach = function(object, waiter)
    local t = rawget(object, RECORD)
    local waiters = t.waiters
    if waiters == nil then
      waiters = {}
      t.waiters = waiters
    end
    for i = 1, #waiters do if waiters[i] == waiter then return end end
    waiters[#waiters + 1] = waiter
  end,
  detach = function(object, waiter)
    local waiters = rawget(object, RECORD).waiters
    if waiters == nil then return end
    for i = #waiters, 1, -1 do
      if waiters[i] == waiter then table.remove(waiters, i) end
    end
  end,
  sequence = function(object) return rawget(object, RECORD).seq end,
}

local handleKind = {
  test = isHandle,
  begin = function() return nil end,
  poll = function(h)
    local status = watchHandle(h)
    if status == "finished" then return OK_EMPTY end
    if status == "cancelled" then return CANCELLED_OUTCOME end
    return nil
  end,
  attach = function(h, waiter) watchHandle(h, notify, waiter) end,
  detach = function() end,
}

-- A timer is done at its next firing after the await began; invalidated first: cancelled. One
-- that is invalid already is done (returns at once) when it ever fired.
local timerKind = {
  test = isTimer,
  begin = function(t)
    local firings, valid = watchTimer(t)
    if not valid then return firings > 0 and -1 or -2 end
    return firings
  end,
  poll = function(t, token)
    if token == -1 then return OK_EMPTY end
    if token == -2 then return CANCELLED_OUTCOME end
    local firings, valid = watchTimer(t)
    if firings > token then return OK_EMPTY end
    if not valid then return CANCELLED_OUTCOME end
    return nil
  end,
  attach = function(t, waiter) watchTimer(t, notify, waiter) end,
  detach = function() end,
}

-- Swift async work started by an async closure registered with `register` (SwiftAsyncCall).
local pollSwiftCall = native.pollSwiftCall
local function swiftOutcome(state, ...)
  if state == "pending" then return nil end
  if state == "done" then return { true, n = select("#", ...), ... } end
  return { false, (...) }
end
local swiftCallKind = {
  test = native.isSwiftCall,
  begin = function() return nil end,
  poll = function(c) return swiftOutcome(pollSwiftCall(c)) end,
  attach = function(c, waiter) pollSwiftCall(c, notify, waiter) end,
  detach = function() end,
}

kinds[1], kinds[2], kinds[3], kinds[4] = taskKind, handleKind, timerKind, swiftCallKind

local function kindOf(x)
  for i = 1, #kinds do
    local kind = kinds[i]
    if kind.test(x) then return kind end
  end
  return nil
end

-- MARK: waiting

-- The loop run of a wait outside a task: returns how it ended ("done", "cancelled", "timeout",
-- "stopped", "idle", "interrupted" or runUntil's error message).
local function runNested(cell, task, check, deadline)
  while true do
    local left = deadline and deadline - now()
    if left ~= nil and left < 0 then left = 0 end
    local ok, how = pcall(runUntil, cell, left)
    if not ok then return how end
    if task ~= nil and task.cancelled then return "cancelled" end
    if check() then return "done" end
    if how ~= "done" then return how end
    rawset(cell, 1, nil)
  end
end

local function timeoutFired(cell)
  rawset(cell, 2, true)  -- timed out
  notify(rawget(cell, 1))
end

-- Waits until check() is true: suspends the running task, or runs the loop outside any task (and
-- in a task whose caller cannot yield: a block called by a C helper). attach(waiter) /
-- detach(waiter) register the waiter with what it waits on. Raises bk.cancelled when the task is
-- cancelled, "timed out" after `timeout` seconds (level: the user's call, from wait's caller);
-- `quiet`: returns false on timeout instead (true when done).
local function wait(check, attach, detach, timeout, level, interrupt, quiet)
  local task = runningTask()
  if task ~= nil and task.cancelled then error(cancelled) end
  if check() then return true end
  if task ~= nil and isyieldable() then
    attach(task)
    -- Done meanwhile (by another thread) is seen now: its waiter may not be notified.
    if check() then
      detach(task)
      return true
    end
    local timer, timerCell
    if timeout ~= nil then
      timerCell = { task }
      timer = schedule(timeoutFired, timerCell, timeout)
    end
    while true do
      yield(SUSPEND)
      local outcome
      if task.cancelled then outcome = "cancelled"
      elseif check() then outcome = "done"
      elseif timerCell ~= nil and rawget(timerCell, 2) then outcome = "timed out" end
      if outcome ~= nil then
        detach(task)
        if timer ~= nil then unschedule(timer) end
        if outcome == "cancelled" then error(cancelled) end
        if outcome == "timed out" then
          if quiet then return false end
          error("timed out", level + 1)
        end
        return true
      end
    end
  end
  -- Outside a task: run the loop until it is done. Wake-ups queued meanwhile are drained by the
  -- nested loop's callbacks, not by whoever is draining further out.
  local cell = {}
  attach(cell)
  if check() then
    detach(cell)
    return true
  end
  if task ~= nil then task.nested = cell end
  local saved = draining
  draining = false
  -- Protected: Ctrl-C at bklua's prompt raises "interrupted!" from a hook just after runUntil
  -- returns; the cleanup below must still run (runUntil left its outcome in the cell).
  local ran, outcome = pcall(runNested, cell, task, check, timeout and now() + timeout)
  draining = saved
  detach(cell)
  if task ~= nil then task.nested = nil end
  if not ran then
    if rawget(cell, "outcome") == "interrupted" and interrupt ~= nil then interrupt() end
    error(outcome, 0)
  end
  if outcome == "done" then return true end
  if outcome == "cancelled" then error(cancelled) end
  if outcome == "timeout" then
    if quiet then return false end
    error("timed out", level + 1)
  end
  if outcome == "stopped" then error("stopped by bk.stop() before it was done", level + 1) end
  if outcome == "idle" then error("would wait forever: nothing pending on the loop can finish it", level + 1) end
  if outcome == "interrupted" then
    -- Ctrl-C at bklua's prompt: what the prompt was waiting for is cancelled too.
    if interrupt ~= nil then interrupt() end
    error("interrupted", level + 1)
  end
  -- runUntil's own error (refused on another queue's thread), or the "interrupted!" of bklua's
  -- Ctrl-C hook, raised as runUntil returned "interrupted".
  if rawget(cell, "outcome") == "interrupted" and interrupt ~= nil then interrupt() end
  error(outcome, 0)
end

-- Cancels what an interrupted wait was waiting for: a task, a handle, a Swift call, or another
-- family's awaitable whose kind has `cancel`; anything else is left as it is.
function cancelWork(x)
  if isTask(x) then cancel(recordOf(x)) elseif isHandle(x) then cancelBlock(x) elseif swiftCallKind.test(x) then x:cancel()
  else
    local kind = kindOf(x)
    if kind ~= nil and kind.cancel ~= nil then kind.cancel(x) end
  end
end

-- For other families' waits (channels): waits as bk.await does until check() is true; returns
-- true, or false once `timeout` seconds have passed. `level`: the user's call, from the caller.
local function waitFor(check, attach, detach, timeout, level)
  return wait(check, attach, detach, timeout, level + 2, nil, true)
end

local function results(outcome)
  if outcome[1] then return unpack(outcome, 2, outcome.n + 1) end
  error(outcome[2], 0)
end

local function await(x, timeout)
  -- A task that already finished: no kinds to try, no waiting, no closures.
  local done = timeout == nil and recordOf(x)
  if done and done.state == DONE and not done.cancelled and (current == nil or not current.cancelled) then
    done.observed = true
    local r = done.results
    return unpack(r, 1, r.n)
  end
  local kind = kindOf(x)
  if kind == nil then argError(1, "await", "task expected, got " .. typeName(x)) end
  if timeout ~= nil then checkDuration(timeout, 2, "await") end
  local token = kind.begin(x)
  local outcome
  wait(function()
    outcome = kind.poll(x, token)
    return outcome ~= nil
  end, function(waiter) kind.attach(x, waiter, token) end, function(waiter) kind.detach(x, waiter) end,
  timeout, 2, function() cancelWork(x) end)
  return results(outcome)
end

local function sleepDone(task)
  task.woke = true
  task.sleep = nil
  wake(task)
end

-- A sleep outside any task: a block marks the cell and notifies the wait's own waiter.
local function sleepCellDone(cell)
  rawset(cell, 1, true)
  local waiter = rawget(cell, 2)
  if waiter ~= nil then notify(waiter) end
end

local function sleep(seconds)
  checkDuration(seconds, 1, "sleep")
  local task = runningTask()
  if task ~= nil and task.cancelled then error(cancelled) end
  if task ~= nil and isyieldable() then
    task.woke = nil
    task.sleep = schedule(sleepDone, task, seconds)
    repeat
      yield(SUSPEND)
      if task.cancelled then error(cancelled) end
    until task.woke
    task.woke = nil
    return
  end
  local cell = {}
  local token = schedule(sleepCellDone, cell, seconds)
  local ok, err = pcall(wait, function() return rawget(cell, 1) == true end,
    function(waiter) rawset(cell, 2, waiter) end, function() rawset(cell, 2, nil) end, nil, 3)
  if not ok then
    unschedule(token)
    error(err, 0)
  end
end

-- Items of a list argument, raw, up to the first nil, each with its kind and token.
local function listItems(list, name)
  if type(list) ~= "table" then argError(1, name, "table expected, got " .. typeName(list), 2) end
  local items = {}
  local i = 1
  while true do
    local x = rawget(list, i)
    if x == nil then break end
    local kind = kindOf(x)
    if kind == nil then
      argError(1, name, ("item %d is not awaitable (task expected, got %s)"):format(i, typeName(x)), 2)
    end
    items[i] = { x, kind, kind.begin(x) }
    i = i + 1
  end
  return items
end

local function cancelAll(items)
  return function() for i = 1, #items do cancelWork(items[i][1]) end end
end

local function attachAll(items)
  return function(waiter) for i = 1, #items do local it = items[i] it[2].attach(it[1], waiter, it[3]) end end,
    function(waiter) for i = 1, #items do local it = items[i] it[2].detach(it[1], waiter) end end
end

-- When an item's outcome was first seen, for "first in time": a task's end, else the poll.
local function whenSeen(item, order)
  local seq = item[2].sequence and item[2].sequence(item[1])
  return seq or order
end

local function awaitAll(list, timeout)
  local items = listItems(list, "awaitAll")
  if timeout ~= nil then checkDuration(timeout, 2, "awaitAll") end
  local outcomes, seen = {}, {}
  local failed
  local attach, detach = attachAll(items)
  wait(function()
    local all = true
    for i = 1, #items do
      if outcomes[i] == nil then
        local it = items[i]
        local outcome = it[2].poll(it[1], it[3])
        if outcome == nil then all = false
        else
          outcomes[i] = outcome
          seen[i] = whenSeen(it, sequence + 0.5)
          if not outcome[1] and (failed == nil or seen[i] < seen[failed]) then failed = i end
        end
      end
    end
    return all or failed ~= nil
  end, attach, detach, timeout, 2, cancelAll(items))
  if failed ~= nil then error(outcomes[failed][2], 0) end
  local list = {}
  for i = 1, #items do
    local o = outcomes[i]
    list[i] = { n = o.n, unpack(o, 2, o.n + 1) }
  end
  return list
end

local function awaitAny(list, timeout)
  local items = listItems(list, "awaitAny")
  if #items == 0 then argError(1, "awaitAny", "non-empty list expected") end
  if timeout ~= nil then checkDuration(timeout, 2, "awaitAny") end
  local first, firstOutcome
  local attach, detach = attachAll(items)
  wait(function()
    local best
    for i = 1, #items do
      local it = items[i]
      local outcome = it[2].poll(it[1], it[3])
      if outcome ~= nil then
        local seq = whenSeen(it, huge)
        if best == nil or seq < best then best, first, firstOutcome = seq, i, outcome end
      end
    end
    return first ~= nil
  end, attach, detach, timeout, 2, cancelAll(items))
  return first, results(firstOutcome)
end

-- MARK: the Task class

local function checkTask(t, name)
  if not isTask(t) then
    error(("calling '%s' on bad self (bk.Task expected, got %s)"):format(name, typeName(t)), 3)
  end
end

function methods.cancel(t)
  checkTask(t, "cancel")
  cancel(rawget(t, RECORD))
end

function methods.result(t, timeout)
  checkTask(t, "result")
  if timeout ~= nil then checkDuration(timeout, 2, "result") end
  return await(t, timeout)
end

methods.bk_cancel, methods.bk_result = methods.cancel, methods.result

function Task.__index(object, k)
  local t = recordOf(object)
  if t == nil then return nil end
  if k == "isFinished" then return t.state ~= RUNNING end
  if k == "isCancelled" then return t.cancelled == true end
  return methods[k]
end

function Task.__newindex(t, k)
  error(("cannot set field '%s' of bk.Task"):format(tostring(k)), 2)
end

function Task.__tostring(object)
  local t = recordOf(object)
  if t == nil then return "bk.Task(?)" end
  local state = t.state
  local text = t.cancelled and "cancelled" or state == RUNNING and "pending"
    or state == DONE and "finished" or state == FAILED and "failed" or "?"
  return "bk.Task(" .. text .. ")"
end

Task.methods = methods
Task.__metatable = "bk.Task"


-- MARK: debounce and throttle

-- Private keys of bk.Debounced / bk.Throttled objects.
local FN, INTERVAL, PENDING, ARGS = {}, {}, {}, {}

local function pack(...) return { n = select("#", ...), ... } end

local function limiterClass(name)
  local class = { __name = name, __metatable = name }
  local methods = {}
  class.methods = methods
  function class.__index(_, k) return methods[k] end
  function class.__newindex(_, k) error(("cannot set field '%s' of %s"):format(tostring(k), name), 2) end
  function class.__tostring(o)
    return name .. "(" .. (rawget(o, ARGS) ~= nil and "pending" or "idle") .. ")"  -- a call is kept
  end
  local function check(o, method)
    if type(o) ~= "table" or rawmetatable(o) ~= class or rawget(o, FN) == nil then
      error(("calling '%s' on bad self (%s expected, got %s)"):format(method, name, typeName(o)), 3)
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
  if type(f) ~= "function" then argError(1, "debounce", "function expected, got " .. typeName(f)) end
  checkDuration(delay, 2, "debounce")
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
  if type(f) ~= "function" then argError(1, "throttle", "function expected, got " .. typeName(f)) end
  checkDuration(interval, 2, "throttle")
  return setmetatable({ [FN] = f, [INTERVAL] = interval }, Throttled)
end

debouncedMethods.bk_cancel, debouncedMethods.bk_flush = debouncedMethods.cancel, debouncedMethods.flush
throttledMethods.bk_cancel, throttledMethods.bk_flush = throttledMethods.cancel, throttledMethods.flush

internal[wake] = true
internal[notify] = true
internal[sleepDone] = true
internal[sleepCellDone] = true
internal[timeoutFired] = true
internal[reportIfUnobserved] = true

local function currentTask()
  local task = runningTask()
  if task == nil then return nil end
  return task.object
end

-- Functions for bk, and the engine's own table (kinds, for other families' awaitables).
return {
  async = async,
  await = await,
  sleep = sleep,
  awaitAll = awaitAll,
  awaitAny = awaitAny,
  currentTask = currentTask,
  debounce = debounce,
  throttle = throttle,
}, {
  runBlock = runBlock,
  isFinished = function(object)
    local t = recordOf(object)
    return t == nil or t.state ~= RUNNING
  end,
  kinds = kinds,
  notify = notify,
  waitFor = waitFor,
  isTask = isTask,
  cancel = function(object)
    local t = recordOf(object)
    if t ~= nil then cancel(t) end
  end,
  Task = Task,
}
