-- One leak check, run in a child bklua by Tests/lua/test_leaks.lua:
--
--   bklua lifecycles.lua KIND COUNT
--
-- Runs WARMUP lifecycles of KIND (so tables reach their working size), measures Lua memory
-- (collectgarbage "count") and the process RSS, runs COUNT more lifecycles, collects, and prints
--   leaks KIND lua_kb=<growth> rss_kb=<growth> pending=<n>
-- (the parent judges the numbers against its tolerances).
-- The lifecycles run as separate chunks (and in workers) and reach these by name.
-- luacheck: globals CHANNEL ECHO KEPT POOL_BLOCK POOL_INPUT PROTOCOL RECEIVE_IN_TASK
-- luacheck: globals RECEIVE_TIMING_OUT REPLIES REQUESTS SLEEP_BRIEFLY TASK_CHANNEL

local kind, count = arg[1], tonumber(arg[2]) or 1000000
local bk = require "bk"
-- As many as are measured: caches and tables sized by how many objects the collector lets pile up
-- between cycles (the identity cache of bridged objects) reach their working size first, so a
-- plateau is not taken for a leak while a leak still grows with the measured run.
-- A third argument sets it (lifecycles that cost milliseconds, such as a whole worker).
local WARMUP = tonumber(arg[3]) or math.max(200000, count)

local function rss()
  local f = assert(io.open("/proc/self/statm"))
  local _, resident = f:read("n", "n")
  f:close()
  return resident * 4  -- pages of 4 KiB
end

local noop = function() end
local lifecycles = {
  -- A delayed block scheduled and cancelled before it runs (far in the future, so only cancel
  -- can release it).
  performBlock = function()
    local handle = bk.performBlock(noop, 60)
    handle:cancel()
  end,
  -- The same with an object argument and a background queue.
  performBlockWithObject = function()
    local handle = bk.performBlock({}, noop, 60, bk.backgroundQueue)
    bk.cancelBlock(handle)
  end,
  -- A repeating timer put on the loop, then invalidated.
  timer = function()
    local timer = bk.scheduledTimerWithTimeInterval(60, noop, true)
    timer:invalidate()
  end,
  -- A timer made, scheduled, invalidated.
  unscheduledTimer = function()
    local timer = bk.timerWithTimeInterval(60, noop, false)
    timer:schedule()
    timer:invalidate()
  end,
  -- An observation added to a table and removed.
  observe = function()
    local t = { x = 1 }
    local id = bk.addObserverForKeyPath(t, "x", noop)
    t.x = 2
    bk.removeObserverForKeyPath(t, "x", id)
  end,
  -- An observation dropped with its object (never removed).
  observeAndDrop = function()
    local t = { x = 1 }
    bk.addObserverForKeyPath(t, "x", noop)
    t.x = 2
  end,
  -- A dynamic delegate made for a fresh object, given a block, called, then dropped.
  dynamicDelegate = function()
    local dd = bk.dynamicDelegateForProtocol({}, PROTOCOL)
    dd:implementMethod("tableViewDidSelectRowAtIndexPath", noop)
    dd:tableViewDidSelectRowAtIndexPath(1, 2)
  end,
  -- A worker started, its result taken, dropped (its state and thread must go).
  worker = function()
    local w = bk.worker(function(x) return { x } end, 1)
    w:result()
  end,
  -- A message through a channel, in and out in the same state.
  channelMessage = function()
    CHANNEL:send(1.5)
    CHANNEL:receive()
  end,
  -- A table there and back through a worker that echoes it (a call on a warm worker).
  workerRoundTrip = function()
    REQUESTS:send({ 1, "two" })
    REPLIES:receive()
  end,
  -- A task suspended on an empty channel, woken by a send (an armed wait, notified once).
  taskChannelWait = function()
    local task = bk.async(RECEIVE_IN_TASK)
    TASK_CHANNEL:send(1)
    bk.await(task)
  end,
  -- A task whose channel wait times out (the armed wait dropped unnotified).
  taskChannelTimeout = function()
    bk.await(bk.async(RECEIVE_TIMING_OUT))
  end,
  -- A task sleeping on the loop (the engine's own delayed call, no handle object).
  taskSleep = function()
    bk.await(bk.async(SLEEP_BRIEFLY))
  end,
  -- A parallelMap heavy enough for the pool: chunks handed out, results copied back.
  poolChunks = function()
    bk.parallelMap(POOL_INPUT, POOL_BLOCK)
  end,
  -- The control: a lifecycle that does leak (keeps every cancelled handle), so the measurement
  -- is shown to see one.
  leakyControl = function()
    local handle = bk.performBlock(noop, 60)
    handle:cancel()
    KEPT[#KEPT + 1] = handle
  end,
}
KEPT = {}
CHANNEL = bk.channel()
REQUESTS, REPLIES = bk.channel(), bk.channel()
if kind == "workerRoundTrip" then
  ECHO = bk.worker(function(inbox, outbox)
    while true do
      local v = inbox:receive()
      if v == nil then return end
      outbox:send(v)
    end
  end, REQUESTS, REPLIES)
end

TASK_CHANNEL = bk.channel()
RECEIVE_IN_TASK = function() return TASK_CHANNEL:receive() end
RECEIVE_TIMING_OUT = function() return TASK_CHANNEL:receive(0.000001) end
SLEEP_BRIEFLY = function() bk.sleep(0) end
POOL_INPUT = { 1, 2, 3, 4, 5, 6, 7, 8 }
-- About 50 microseconds of pure Lua per element: the 8 go to the pool.
POOL_BLOCK = function(x) local s = 0 for i = 1, 5000 do s = s + i % 3 end return s + x end

PROTOCOL = bk.protocol("LeakCheckDelegate", { tableViewDidSelectRowAtIndexPath = {} })

local life = assert(lifecycles[kind], "unknown lifecycle " .. tostring(kind))
local alwaysPending = bk.pending()  -- what the set-up above keeps running (ECHO)
local function settle()
  bk.run(0)  -- let the loop drop what was cancelled
  -- A finished worker stops counting just after its waiters are woken (its thread ends then):
  -- give the last one that moment. Work that never ends is still pending after it.
  local deadline = bk.now() + 5
  while bk.pending() > alwaysPending and bk.now() < deadline do bk.sleep(0.01) end
  collectgarbage()
  collectgarbage()
end

for _ = 1, WARMUP do life() end
settle()
local lua0, rss0 = collectgarbage("count"), rss()
for _ = 1, count do life() end
settle()
if ECHO then
  REQUESTS:close()
  ECHO:result()
  alwaysPending = 0  -- ECHO has ended: nothing may be left
  settle()
end
print(string.format("leaks %s lua_kb=%.1f rss_kb=%d pending=%d", kind,
  collectgarbage("count") - lua0, rss() - rss0, bk.pending()))
os.exit(0, true)
