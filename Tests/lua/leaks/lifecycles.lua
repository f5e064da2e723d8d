-- One leak check, run in a child bklua by Tests/lua/test_leaks.lua:
--
--   bklua lifecycles.lua KIND COUNT
--
-- Runs WARMUP lifecycles of KIND (so tables reach their working size), measures Lua memory
-- (collectgarbage "count") and the process RSS, runs COUNT more lifecycles, collects, and prints
--   leaks KIND lua_kb=<growth> rss_kb=<growth> pending=<n>
-- (the parent judges the numbers against its tolerances).

local kind, count = arg[1], tonumber(arg[2]) or 1000000
local bk = require "bk"
-- As many as are measured: caches and tables sized by how many objects the collector lets pile up
-- between cycles (the identity cache of bridged objects) reach their working size first, so a
-- plateau is not taken for a leak while a leak still grows with the measured run.
local WARMUP = math.max(200000, count)

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
  -- The control: a lifecycle that does leak (keeps every cancelled handle), so the measurement
  -- is shown to see one.
  leakyControl = function()
    local handle = bk.performBlock(noop, 60)
    handle:cancel()
    KEPT[#KEPT + 1] = handle
  end,
}
KEPT = {}

PROTOCOL = bk.protocol("LeakCheckDelegate", { tableViewDidSelectRowAtIndexPath = {} })

local life = assert(lifecycles[kind], "unknown lifecycle " .. tostring(kind))
local function settle()
  bk.run(0)  -- let the loop drop what was cancelled
  collectgarbage()
  collectgarbage()
end

for _ = 1, WARMUP do life() end
settle()
local lua0, rss0 = collectgarbage("count"), rss()
for _ = 1, count do life() end
settle()
print(string.format("leaks %s lua_kb=%.1f rss_kb=%d pending=%d", kind,
  collectgarbage("count") - lua0, rss() - rss0, bk.pending()))
os.exit(0, true)
