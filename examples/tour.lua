-- A tour of BlocksBridge: BlocksKit's block helpers for Lua 5.4, implemented in Swift.
-- Run it with: scripts/bklua examples/tour.lua
-- Each section shows one family; it grows as the bridge does.

local bk = require "bk"
print("BlocksBridge " .. bk.version() .. " on " .. _VERSION)

-- 1. The module: every bk.NAME is also the global bk_NAME in bklua.
print("require 'bk' is the bk global:", require("bk") == bk)
print("bk_version is bk.version:", bk_version == bk.version)

-- 2. Mistakes give Lua's standard messages, never a crash.
local ok, err = pcall(bk.installGlobals, 42)
print("bad argument ->", err)

-- 3. The helpers can be installed into any environment, e.g. a sandbox for a plugin.
local env = bk.installGlobals({ print = print })
print("installed into a plugin environment:", env.bk_version ~= nil)

-- 4. Block execution and timers: delayed blocks, queues and timers run by the event loop, which
--    bklua runs after the script until nothing is pending (bk.run() runs it from inside a script).
local handle = bk.performBlock(function() print("never printed: cancelled") end, 0.05)
handle:cancel()
print("cancelled:", handle.isCancelled)
bk.performBlock({ name = "window" }, function(obj) print("0.02 s later, with", obj.name) end, 0.02)
local queue = bk.queue("tour")
for i = 1, 3 do bk.performBlock(function() io.write("serial ", i, "\n") end, 0, queue) end
local ticks = 0
bk.scheduledTimerWithTimeInterval(0.01, function(timer)
  ticks = ticks + 1
  if ticks == 3 then
    print("timer fired 3 times; invalidating it from its own block")
    timer:invalidate()
  end
end, true)
local previous = bk.onError(function(message) print("reported:", message:match("^[^\n]*")) end)
bk.performBlock(function() error("a failing block does not stop the loop") end, 0.03)
print("bk.run() ->", bk.run(), "pending:", bk.pending())
bk.onError(previous)
