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

-- The natives (TaskPrimitives.swift): the runtime this file is built on, as async.nvim's is three
-- documented functions. Every value Lua compares with what they answer comes from here too
-- (PENDING ..., ran.*), never a copy of a Swift name.
-- luacheck: push ignore 631 (LuaLS reads each field on one line)
---@class bk.TaskNatives
---@field runUntil fun(cell: table, seconds: number?): string runs the loop until cell[1] is set (the waiter a wait attached sets it), `seconds` at most; how the run ended (one of `ran`'s values), also left in cell.outcome. Raises "cannot wait on the loop from a block of another queue", and the sandbox's error when its limits stopped the script.
---@field ran table<string, string> how a runUntil ended: ran.done, .timeout, .stopped, .interrupted (Ctrl-C at the prompt), .idle (nothing left that could set the cell), .limited
---@field isAwaitable fun(x: any): boolean whether x is an awaitable Swift object (a block handle, a timer, a worker, an async Swift call)
---@field poll fun(x: any, notify?: fun(waiter: any), waiter?: any): integer, integer?, integer, ... where x stands: state (PENDING, DONE, FAILED or CANCELLED), registration (while pending, when notify was given: notify(waiter) runs on the loop once x may be done, until unwatch drops it), events (how many times x came due: a timer's firings, a one-shot's 1 once it ended), then its results (DONE) or its error (FAILED)
---@field unwatch fun(x: any, registration: integer) the wait ended otherwise (timed out, cancelled): x drops the waiter poll kept (O(1))
---@field cancel fun(x: any) what an interrupted wait (Ctrl-C at the prompt) does to x: cancels a handle, a worker or a Swift call; leaves a timer running
---@field PENDING integer
---@field DONE integer
---@field FAILED integer
---@field CANCELLED integer
---@field schedule fun(f: function, arg: any, seconds: number): lightuserdata f(arg) on the main queue after `seconds` (the engine's own delayed calls: a sleep's end, a timeout); the token unschedule takes
---@field unschedule fun(token: lightuserdata) cancels a scheduled call until it ran
---@field finishHandle fun(identity: lightuserdata) a delayed block that suspended (the identity the loop passed to runBlock) has ended
---@field closing fun(): boolean whether the state is closing (C: never raises, cheap on every entry)
---@field report fun(err: any, message?: string) reports err to bk.onError, with `message` when given (made by errorReport), else made now
---@field errorReport fun(err: any): string what a report of err says, with the traceback recorded where it was raised
---@field recordCoroutineTraceback fun(co: thread, err: any) records the traceback of the dead coroutine's stack for err
---@field recordAwaitedTraceback fun(err: any, traced: string) records, for err raised again by an await, the traceback where it was raised (traced, its report) followed by the await's
---@field getmetatable fun(v: any): table? the raw metatable (ignores __metatable)
---@field cancelled table bk.cancelled, the error a cancelled task's suspension point raises
---@field taskObserver? fun(event: string, co: thread, x: any): boolean? the attached debugger's watcher of tasks (nil with none)

-- luacheck: pop
---@type table, table, bk.TaskNatives
local G, bk, native = ...

local coroutine, table = G.coroutine, G.table
local create, resume, yield, close = coroutine.create, coroutine.resume, coroutine.yield, coroutine.close
local running, costatus, isyieldable = coroutine.running, coroutine.status, coroutine.isyieldable
local pcall, error, select, type, tostring, next = G.pcall, G.error, G.select, G.type, G.tostring, G.next
local rawget, rawset, rawequal, setmetatable = G.rawget, G.rawset, G.rawequal, G.setmetatable
local unpack = table.unpack
local huge = G.math.huge

local now = bk.now
local runUntil, RAN = native.runUntil, native.ran
local report, rawmetatable = native.report, native.getmetatable
local recordCoroutineTraceback = native.recordCoroutineTraceback
local recordAwaitedTraceback = native.recordAwaitedTraceback
local errorReport = native.errorReport
local closing = native.closing
local finishHandle = native.finishHandle
-- The engine's own delayed calls (no handle object; see TaskPrimitives.swift).
local schedule, unschedule = native.schedule, native.unschedule
local isAwaitable, poll, unwatch, cancelAwaitable = native.isAwaitable, native.poll, native.unwatch, native.cancel
-- poll's states (LuaAwaitState); CANCELLED is whatever else poll answers.
local AWAIT_PENDING, AWAIT_DONE, AWAIT_FAILED = native.PENDING, native.DONE, native.FAILED

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

-- What a bad self "got": typeName(v), or for a value posing as the expected class (that __name,
-- not that make), its type: never "X expected, got X".
local function gotName(v, expected)
  local name = typeName(v)
  if name == expected then return ("a %s named %s that is not one"):format(type(v), expected) end
  return name
end

-- Error positions. Every `level` in this file is error()'s level of the script's call, counted
-- from the function that takes it (1: that function, 2: its caller): a function that raises calls
-- error(message, level), one that hands it on adds one for each frame in between (so such a call
-- is never a tail call, which leaves no frame: `return (f(...))`). A bk entry
-- (async, await, a Task method, ...) finds the script at SCRIPT: scripts call it directly, and
-- the stubs that load the engine (TasksLibrary.swift) tail-call it, leaving no frame between.
local SCRIPT = 2

local function argError(position, name, message, level)
  error(("bad argument #%d to '%s' (%s)"):format(position, name, message), level)
end

-- A duration or timeout: a finite number >= 0.
local function checkDuration(v, position, name, level)
  if type(v) ~= "number" then argError(position, name, "number expected, got " .. typeName(v), level + 1) end
  if not (v >= 0 and v < huge) then
    argError(position, name, "duration must be a finite number >= 0", level + 1)
  end
end

-- While the state closes (finalizers, os.exit(code, true)) every entry refuses, naming itself, as
-- bk's Swift functions do (DEVELOPERS.md, rule 10): the loop is gone, and the natives an entry
-- uses would name themselves instead. Called first by each entry: `if closing() then atClose(name) end`.
local function atClose(name)
  error(("cannot call '%s' while the Lua state is closing"):format(name), 0)
end

-- MARK: tasks

-- A task is two tables: the object scripts hold (metatable Task, a single private key RECORD),
-- and its record, a plain table only this file reaches, where the engine keeps the task's state
-- with plain field access (no rawget/rawset calls; its metatable has only __close, see parkedClose):
-- co, state, results, waiters, cancelled, observed, queued, nested, woke, sleep, seq, traced, block,
-- parked, undo, undoTimer, and object (the object). Inside this file "task" is a record; the object
-- is what bk.async returns.
local RECORD = {}
local Record = {}

-- STATE values. A task is "running" from bk.async until its function returns or raises.
local RUNNING, DONE, FAILED = 1, 2, 3

-- A task suspended by the engine (woken by what it waits on) has `parked` set; any other yield is
-- a plain coroutine.yield. The yield hands nothing out: a script that resumes the coroutine itself
-- gets nothing back, and the task stays suspended (see suspend). A task's coroutine runs its
-- function itself (no wrapper, no xpcall): a suspended task holds no frames but its own, and an
-- error leaves the dead coroutine's stack for its traceback.

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
-- The coroutines of cancelled tasks (weak): an observer or event handler that gets bk.cancelled
-- there raises it on instead of reporting it (TaskEngine.raisesCancellation, Swift).
local cancelledThreads = setmetatable({}, { __mode = "k" })
-- Every task's coroutine (weak): the profiler labels a stack sampled in one as the task's.
local taskThreads = setmetatable({}, { __mode = "k" })
-- A debugger watching tasks (DebugAgent.lua's onTask): told observer("start", co, f) as a task is
-- made, ("error", co, err) as its function raises (its stack not yet unwound) and ("end", co) as it
-- ends; a call that answers false lets go of it. nil while no debugger is attached: nothing runs.
local observer = native.taskObserver

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

local settle, runBlock, starting, cancelWork, endClosed  -- forward
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
    if co ~= nil then
      local status = costatus(co)
      if status == "suspended" then step(task)
      elseif status == "dead" then endClosed(task) end  -- closed (coroutine.close) at a plain yield
    end
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

-- Suspends the running task at one of the engine's suspension points, until the engine resumes it
-- (step sets current first). A resume by anyone else (a script's coroutine.resume) gets nothing
-- back and leaves the task suspended where it was.
local function suspend(task)
  task.parked = true
  repeat yield() until current == task
  task.parked = nil
end

-- MARK: a task's waiters

-- An ordered set: entries 1 .. n in the order they came (false once removed) and waiter -> its
-- position, so adding and removing one are O(1) and waiters are told in order. Compacted when half
-- its entries are holes (amortized O(1)): waits that time out again and again leave nothing.
local function addWaiter(task, waiter)
  local list = task.waiters
  if list == nil then
    list = { n = 0, holes = 0 }
    task.waiters = list
  elseif list[waiter] ~= nil then
    return
  end
  local n = list.n + 1
  list.n = n
  list[n] = waiter
  list[waiter] = n
end

local function removeWaiter(task, waiter)
  local list = task.waiters
  if list == nil then return end
  local i = list[waiter]
  if i == nil then return end
  list[waiter] = nil
  list[i] = false
  local n, holes = list.n, list.holes + 1
  if holes * 2 < n then
    list.holes = holes
    return
  end
  local kept = 0
  for k = 1, n do
    local w = list[k]
    list[k] = nil
    if w then
      kept = kept + 1
      list[kept] = w
      list[w] = kept
    end
  end
  list.n, list.holes = kept, 0
end

local function hasWaiters(list)
  return list ~= nil and list.n > list.holes
end

-- A cancelled task's nested loop (see wait) must end too.
local function notifyTask(task)
  local cell = task.nested
  if cell ~= nil then rawset(cell, 1, true) end
  wake(task)
end

-- MARK: failures no one awaited
--
-- A failed task no one awaited is reported when it is collected, or when the state closes, unless
-- someone awaited it by then (as Python's "Task exception was never retrieved"): a script may
-- await it later, inside pcall, and handle the error itself. Such a task's record holds a guard
-- whose finalizer reports it; `unawaited` (weak) lists them for the report at close.
local unawaited = setmetatable({}, { __mode = "k" })

local function reportIfUnobserved(task)
  if not task.observed then
    task.observed = true
    unawaited[task] = nil
    report(task.results[1], task.traced)
  end
end

-- The guard's finalizer. While the state closes the natives refuse: the host reported what was
-- left before it began to close (reportUnawaited). A disarmed guard (awaited) holds nothing.
local Unawaited = { __gc = function(guard)
  local task = rawget(guard, 1)
  if task == nil or closing() then return end
  reportIfUnobserved(task)
end }

local function awaitLater(task)
  unawaited[task] = true
  task.guard = setmetatable({ task }, Unawaited)
end

-- Someone awaited the task: never reported. The guard lets go of the record at once, or its
-- finalizer would keep the record (and its results) alive a cycle longer, into the old generation,
-- and `unawaited` would grow with every task awaited late.
local function claim(task)
  task.observed = true
  local guard = task.guard
  if guard ~= nil then
    task.guard = nil
    rawset(guard, 1, nil)
    unawaited[task] = nil
  end
end

-- The state closes: every failure still unawaited is reported, in the order the tasks failed.
local function reportUnawaited()
  local list = {}
  for task in next, unawaited do
    if not task.observed then list[#list + 1] = task end
  end
  table.sort(list, function(a, b) return a.seq < b.seq end)
  for i = 1, #list do reportIfUnobserved(list[i]) end
end

local finish  -- forward

-- Records how a task ended and wakes its waiters. `resumed, ...` are resume's results.
function settle(task, resumed, ...)
  local co = task.co
  if resumed and costatus(co) == "suspended" then
    if task.parked then return end
    -- A plain coroutine.yield in a task: it gives the loop a turn and resumes with no values.
    schedule(wake, task, 0)
    return
  end
  local ok, results = resumed
  if resumed then
    results = { n = select("#", ...), ... }
  else
    -- Raised out of the task's function: the traceback from where it was raised (the dead
    -- coroutine's stack), then its pending <close> variables run, as an xpcall would have.
    local err = ...
    recordCoroutineTraceback(co, err)
    if observer ~= nil and not rawequal(err, cancelled) and observer("error", co, err) == false then
      observer = nil
    end
    local _, closeErr = close(co)
    if closeErr ~= nil then err = closeErr end
    results = { err }
  end
  finish(task, ok, results)
end

-- Ends a task: its results (ok: returned; else results[1] is its error), then its waiters are told.
function finish(task, ok, results)
  local co = task.co
  if co ~= nil then cancelledThreads[co] = nil end
  if observer ~= nil and co ~= nil and observer("end", co) == false then observer = nil end
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
      if not ok and not rawequal(results[1], cancelled) and not hasWaiters(waiters) then
        task.observed = true
        report(results[1], errorReport(results[1]))
      end
    end
  elseif not ok and not rawequal(results[1], cancelled) then
    -- Its report now, while the traceback recorded where it was raised is there: an await raises
    -- the error again with it. Reported when collected or at close unless awaited by then.
    task.traced = errorReport(results[1])
    if hasWaiters(waiters) then task.observed = true
    else awaitLater(task) end
  end
  if waiters ~= nil then
    for i = 1, waiters.n do
      local waiter = waiters[i]
      if waiter then notify(waiter) end
    end
  end
end

-- A task whose coroutine a script closed (coroutine.close) ends as cancelled, and its waiters are
-- told; what it waited on forgets it. Closed while the engine had it suspended: the __close of its
-- record (a to-be-closed variable of the suspension point) runs this at once; at a plain yield: at
-- its wake-up (drain).
function endClosed(task)
  local undo, timer, sleeping = task.undo, task.undoTimer, task.sleep
  task.parked, task.undo, task.undoTimer, task.sleep = nil, nil, nil, nil
  if undo ~= nil then undo(task) end
  if timer ~= nil then unschedule(timer) end
  if sleeping ~= nil then unschedule(sleeping) end
  task.cancelled = true
  finish(task, false, { cancelled })
end

-- The record's __close: a to-be-closed variable of each suspension point (wait, sleep). It runs
-- whenever the suspension point is left; only a close of the coroutine while it is suspended there
-- (then its own coroutine runs the close, and the task is still parked) ends the task.
function Record.__close(task)
  if task.parked and task.co ~= nil and running() == task.co and current ~= task then endClosed(task) end
end

-- A new task table. The nil fields only size it (a constructor sizes the table for every field it
-- names): the keys a task gets as it sleeps and ends then never make it grow, and each growth is a
-- rehash.
local function newTask(f, block)
  local task = setmetatable({ co = create(f), state = RUNNING, block = block, object = false,
    sleep = nil, woke = nil, seq = nil, results = nil, parked = nil }, Record)
  task.object = setmetatable({ [RECORD] = task }, Task)
  taskThreads[task.co] = true
  if observer ~= nil and observer("start", task.co, f) == false then observer = nil end
  return task
end

local function async(f, ...)
  if closing() then atClose("async") end
  if type(f) ~= "function" then argError(1, "async", "function expected, got " .. typeName(f), SCRIPT + 1) end
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
  cancelledThreads[task.co] = true
  local sleeping = task.sleep
  if sleeping ~= nil then
    task.sleep = nil
    unschedule(sleeping)
  end
  notifyTask(task)
end

-- MARK: awaitables

-- An awaitable kind: test(x); begin(x) -> token; poll(x, token) -> nil (pending) or an outcome
-- { ok, n = count, ... } ({ false, err } for a failure); attach(x, waiter, token) -> registration:
-- waiter is notified when x may be done; detach(x, waiter, registration): the wait ended (done,
-- timed out, cancelled), and x forgets the waiter at once, in O(1) (a wait that times out again
-- and again must leave nothing behind); a spurious wake-up is fine. Optional cancel(x): what
-- Ctrl-C at the prompt does to x while a wait on it is interrupted.
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
    claim(t)
    if t.cancelled then return CANCELLED_OUTCOME end
    local results = t.results
    if state == DONE then return { true, n = results.n, unpack(results, 1, results.n) } end
    return { false, results[1], traced = t.traced }
  end,
  attach = function(object, waiter) addWaiter(rawget(object, RECORD), waiter) end,
  detach = function(object, waiter) removeWaiter(rawget(object, RECORD), waiter) end,
  sequence = function(object) return rawget(object, RECORD).seq end,
}

-- The awaitables of Swift (handles, timers, workers, async Swift calls: LuaAwaitable), one kind
-- polled with native.poll. A wait is done at the first event after it began (a timer's next
-- firing; a one-shot's end, with its outcome). Ended before the wait began: its outcome now (a
-- timer that ever fired is done; one that never did, cancelled). Ended since with no event: a
-- timer invalidated first, cancelled. `since`, the token: the events when the wait began, or
-- false when x had ended by then.
local function nativeOutcome(since, state, _, events, ...)
  if state == AWAIT_PENDING then
    if since and events > since then return OK_EMPTY end
    return nil
  end
  if since and events == since then return CANCELLED_OUTCOME end
  if state == AWAIT_DONE then
    local n = select("#", ...)
    if n == 0 then return OK_EMPTY end
    return { true, n = n, ... }
  end
  if state == AWAIT_FAILED then return { false, (...) } end
  return CANCELLED_OUTCOME
end

local nativeKind = {
  test = isAwaitable,
  begin = function(x)
    local state, _, events = poll(x)
    return state == AWAIT_PENDING and events
  end,
  poll = function(x, since) return nativeOutcome(since, poll(x)) end,
  attach = function(x, waiter)
    local _, registration = poll(x, notify, waiter)
    return registration
  end,
  detach = function(x, _, registration) if registration ~= nil then unwatch(x, registration) end end,
  cancel = cancelAwaitable,
}

kinds[1], kinds[2] = taskKind, nativeKind

local function kindOf(x)
  for i = 1, #kinds do
    local kind = kinds[i]
    if kind.test(x) then return kind end
  end
  return nil
end

-- MARK: waiting

-- The loop run of a wait outside a task: returns how it ended (one of RAN's values, "cancelled",
-- or runUntil's error message).
local function runNested(cell, task, check, deadline)
  while true do
    local left = deadline and deadline - now()
    if left ~= nil and left < 0 then left = 0 end
    local ok, how = pcall(runUntil, cell, left)
    if not ok then return how end
    if task ~= nil and task.cancelled then return "cancelled" end
    if check() then return RAN.done end
    if how ~= RAN.done then return how end
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
-- cancelled, "timed out" after `timeout` seconds (at `level`, the script's call from here);
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
    -- What closing the coroutine here must undo (endClosed, from the record's __close).
    task.undo, task.undoTimer = detach, timer
    local _ <close> = task
    while true do
      suspend(task)
      local outcome
      if task.cancelled then outcome = "cancelled"
      elseif check() then outcome = "done"
      elseif timerCell ~= nil and rawget(timerCell, 2) then outcome = "timed out" end
      if outcome ~= nil then
        task.undo, task.undoTimer = nil, nil
        detach(task)
        if timer ~= nil then unschedule(timer) end
        if outcome == "cancelled" then error(cancelled) end
        if outcome == "timed out" then
          if quiet then return false end
          error("timed out", level)
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
    if rawget(cell, "outcome") == RAN.interrupted and interrupt ~= nil then interrupt() end
    error(outcome, 0)
  end
  if outcome == RAN.done then return true end
  if outcome == "cancelled" then error(cancelled) end
  if outcome == RAN.timeout then
    if quiet then return false end
    error("timed out", level)
  end
  if outcome == RAN.stopped then error("stopped by bk.stop() before it was done", level) end
  if outcome == RAN.idle then error("would wait forever: nothing pending on the loop can finish it", level) end
  if outcome == RAN.interrupted then
    -- Ctrl-C at bklua's prompt: what the prompt was waiting for is cancelled too.
    if interrupt ~= nil then interrupt() end
    error("interrupted", level)
  end
  -- runUntil's own error (refused on another queue's thread), or the "interrupted!" of bklua's
  -- Ctrl-C hook, raised as runUntil returned RAN.interrupted.
  if rawget(cell, "outcome") == RAN.interrupted and interrupt ~= nil then interrupt() end
  error(outcome, 0)
end

-- Cancels what an interrupted wait was waiting for: a task, an awaitable of Swift (native.cancel),
-- or another family's awaitable whose kind has `cancel`; anything else is left as it is.
function cancelWork(x)
  if isTask(x) then cancel(recordOf(x))
  else
    local kind = kindOf(x)
    if kind ~= nil and kind.cancel ~= nil then kind.cancel(x) end
  end
end

-- For other families' waits (channels): waits as bk.await does until check() is true; returns
-- true, or false once `timeout` seconds have passed. `level`: the script's call, from waitFor.
local function waitFor(check, attach, detach, timeout, level)
  return (wait(check, attach, detach, timeout, level + 1, nil, true))  -- not a tail call: a frame, as counted
end

-- Raises a failed outcome's error unchanged; a task's keeps where it was raised for its report.
local function raiseOutcome(outcome)
  local traced = outcome.traced
  if traced ~= nil then recordAwaitedTraceback(outcome[2], traced) end
  error(outcome[2], 0)
end

local function results(outcome)
  if outcome[1] then return unpack(outcome, 2, outcome.n + 1) end
  raiseOutcome(outcome)
end

local function await(x, timeout)
  if closing() then atClose("await") end
  -- A task that already finished: no kinds to try, no waiting, no closures.
  local done = timeout == nil and recordOf(x)
  if done and done.state == DONE and not done.cancelled and (current == nil or not current.cancelled) then
    done.observed = true
    local r = done.results
    return unpack(r, 1, r.n)
  end
  local kind = kindOf(x)
  if kind == nil then argError(1, "await", "task expected, got " .. typeName(x), SCRIPT + 1) end
  if timeout ~= nil then checkDuration(timeout, 2, "await", SCRIPT + 1) end
  local token = kind.begin(x)
  local outcome, registration
  wait(function()
    outcome = kind.poll(x, token)
    return outcome ~= nil
  end, function(waiter) registration = kind.attach(x, waiter, token) end, function(waiter)
    kind.detach(x, waiter, registration)
    registration = nil
  end, timeout, SCRIPT + 1, function() cancelWork(x) end)
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
  if closing() then atClose("sleep") end
  checkDuration(seconds, 1, "sleep", SCRIPT + 1)
  local task = runningTask()
  if task ~= nil and task.cancelled then error(cancelled) end
  if task ~= nil and isyieldable() then
    task.woke = nil
    task.sleep = schedule(sleepDone, task, seconds)
    local _ <close> = task  -- closing the coroutine here ends the task (endClosed)
    repeat
      suspend(task)
      if task.cancelled then error(cancelled) end
    until task.woke
    task.woke = nil
    return
  end
  local cell = {}
  local token = schedule(sleepCellDone, cell, seconds)
  local ok, err = pcall(wait, function() return rawget(cell, 1) == true end,
    function(waiter) rawset(cell, 2, waiter) end, function() rawset(cell, 2, nil) end, nil,
    SCRIPT + 2)  -- wait's frame, then pcall's
  if not ok then
    unschedule(token)
    error(err, 0)
  end
end

-- Items of a list argument, raw, up to the first nil, each with its kind and token.
local function listItems(list, name, level)
  if type(list) ~= "table" then argError(1, name, "table expected, got " .. typeName(list), level + 1) end
  -- A single task (braces forgotten) or a table with keys but no item 1 is not a list: refused,
  -- rather than waiting for nothing.
  if kindOf(list) ~= nil then
    argError(1, name, ("list of awaitables expected, got %s (write {x} for one)"):format(typeName(list)), level + 1)
  end
  local key = nil
  if rawget(list, 1) == nil then key = next(list) end
  if key ~= nil then
    argError(1, name, ("list of awaitables expected, got a table with key %s"):format(
      type(key) == "string" and ("'" .. key .. "'") or typeName(key)), level + 1)
  end
  local items = {}
  local i = 1
  while true do
    local x = rawget(list, i)
    if x == nil then break end
    local kind = kindOf(x)
    if kind == nil then
      argError(1, name, ("item %d is not awaitable (task expected, got %s)"):format(i, typeName(x)), level + 1)
    end
    items[i] = { x, kind, kind.begin(x) }
    i = i + 1
  end
  return items
end

local function cancelAll(items)
  return function() for i = 1, #items do cancelWork(items[i][1]) end end
end

-- Item i is { x, kind, token, registration }.
local function attachAll(items)
  return function(waiter)
    for i = 1, #items do
      local it = items[i]
      it[4] = it[2].attach(it[1], waiter, it[3])
    end
  end, function(waiter)
    for i = 1, #items do
      local it = items[i]
      it[2].detach(it[1], waiter, it[4])
      it[4] = nil
    end
  end
end

-- When an item's outcome was first seen, for "first in time": a task's end, else the poll.
local function whenSeen(item, order)
  local seq = item[2].sequence and item[2].sequence(item[1])
  return seq or order
end

local function awaitAll(list, timeout)
  if closing() then atClose("awaitAll") end
  local items = listItems(list, "awaitAll", SCRIPT + 1)
  if timeout ~= nil then checkDuration(timeout, 2, "awaitAll", SCRIPT + 1) end
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
  end, attach, detach, timeout, SCRIPT + 1, cancelAll(items))
  if failed ~= nil then raiseOutcome(outcomes[failed]) end
  local values = {}
  for i = 1, #items do
    local o = outcomes[i]
    values[i] = { n = o.n, unpack(o, 2, o.n + 1) }
  end
  return values
end

local function awaitAny(list, timeout)
  if closing() then atClose("awaitAny") end
  local items = listItems(list, "awaitAny", SCRIPT + 1)
  if #items == 0 then argError(1, "awaitAny", "non-empty list expected", SCRIPT + 1) end
  if timeout ~= nil then checkDuration(timeout, 2, "awaitAny", SCRIPT + 1) end
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
  end, attach, detach, timeout, SCRIPT + 1, cancelAll(items))
  return first, results(firstOutcome)
end

-- MARK: the Task class

local function checkTask(t, name, level)
  if not isTask(t) then
    error(("calling '%s' on bad self (bk.Task expected, got %s)"):format(name, gotName(t, "bk.Task")), level)
  end
end

function methods.cancel(t)
  if closing() then atClose("cancel") end
  checkTask(t, "cancel", SCRIPT + 1)
  cancel(rawget(t, RECORD))
end

function methods.result(t, timeout)
  if closing() then atClose("result") end
  checkTask(t, "result", SCRIPT + 1)
  if timeout ~= nil then checkDuration(timeout, 2, "result", SCRIPT + 1) end
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
  error(("cannot set field '%s' of bk.Task"):format(tostring(k)), SCRIPT)  -- the VM calls it from the script
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


internal[wake] = true
internal[notify] = true
internal[sleepDone] = true
internal[sleepCellDone] = true
internal[timeoutFired] = true

local function currentTask()
  if closing() then atClose("currentTask") end
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
}, {
  runBlock = runBlock,
  isFinished = function(object)
    local t = recordOf(object)
    return t == nil or t.state ~= RUNNING
  end,
  kinds = kinds,
  notify = notify,
  reportUnawaited = reportUnawaited,
  waitFor = waitFor,
  isTask = isTask,
  cancelledThreads = cancelledThreads,
  taskThreads = taskThreads,
  observe = function(f) observer = f end,  -- a debugger attached after the engine loaded
  cancel = function(object)
    local t = recordOf(object)
    if t ~= nil then cancel(t) end
  end,
  Task = Task,
  -- For RateLimiting.lua: the entries' checks, as this file makes them.
  checks = { SCRIPT = SCRIPT, argError = argError, checkDuration = checkDuration, typeName = typeName,
    gotName = gotName, atClose = atClose },
}
