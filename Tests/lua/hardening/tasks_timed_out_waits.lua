-- Timed-out awaits of one awaitable kind leave nothing behind: 100,000 `pcall(bk.await, x, 0)`
-- outside a task, then 2,000 inside one, on something that never finishes (the awaitable stays
-- pending throughout). Before, each wait left its waiter on the awaitable: ~12 MB per 100,000 for
-- handles, timers and workers; a task's waiters were a list scanned on every attach and detach,
-- so waits beside 20,000 permanent awaiters were quadratic.
-- Usage: tasks_timed_out_waits.lua handle|timer|worker|task. Prints "<kind> grew <KB> <outcomes>".
local kind = arg and arg[1] or "handle"
local x, release
if kind == "handle" then
  x = bk.performBlock(function() end, 1e6)
  release = function() bk.cancelBlock(x) end
elseif kind == "timer" then
  x = bk.scheduledTimerWithTimeInterval(1e6, function() end)
  release = function() x:invalidate() end
elseif kind == "worker" then
  local ch = bk.channel()
  x = bk.worker(function(c) return c:receive() end, ch)
  release = function() ch:send(1) bk.await(x) end
elseif kind == "task" then
  x = bk.async(function() bk.sleep(1e6) end)
  -- 20,000 permanent awaiters: each timed-out wait below attaches and detaches beside them.
  for _ = 1, 20000 do bk.async(function() pcall(bk.await, x) end) end
  release = function() x:cancel() end
end

local timedOut = 0
local function waitOnce()
  local ok, err = pcall(bk.await, x, 0)
  if not ok and tostring(err):find("timed out", 1, true) then timedOut = timedOut + 1 end
end
waitOnce()  -- the engine is loaded now: it does not count as growth
collectgarbage() collectgarbage()
local before = collectgarbage("count")
for _ = 1, 100000 do waitOnce() end
local inTask = bk.async(function() for _ = 1, 2000 do waitOnce() end end)
bk.await(inTask)
collectgarbage() collectgarbage()
local grew = collectgarbage("count") - before
print(kind, "grew", math.floor(grew), "timedOut", timedOut)
release()
bk.run()
