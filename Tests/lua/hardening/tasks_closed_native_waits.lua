-- Tasks awaiting the awaitables of Swift (handles, timers, workers), each alone and in awaitAny,
-- closed from outside with coroutine.close while they wait: each task ends as cancelled, its
-- awaiters are told, and the handles, timers and workers it waited on drop its waiters (nothing
-- keeps counting once the timers are invalidated).
local bk = require "bk"
local timers, tasks, cos = {}, {}, {}
for i = 1, 50 do
  local handle = bk.performBlock(function() end, 0.02)
  local timer = bk.scheduledTimerWithTimeInterval(0.01, function() end, true)
  timers[i] = timer
  local worker = bk.worker(function() require("bk").sleep(0.03) return 7 end)
  tasks[#tasks + 1] = bk.async(function()
    cos[#cos + 1] = coroutine.running()
    return bk.awaitAny({ handle, timer, worker }, 1)
  end)
  tasks[#tasks + 1] = bk.async(function() cos[#cos + 1] = coroutine.running() return bk.await(worker) end)
end
local closed = 0
for _, co in ipairs(cos) do
  if coroutine.status(co) == "suspended" and coroutine.close(co) then closed = closed + 1 end
end
print("closed", closed)
local cancelled, other = 0, 0
bk.async(function()
  for _, t in ipairs(tasks) do
    local ok, err = pcall(bk.await, t, 2)
    if not ok and err == bk.cancelled then cancelled = cancelled + 1 else other = other + 1 end
  end
end)
bk.run(1)
for _, timer in ipairs(timers) do timer:invalidate() end
collectgarbage()
collectgarbage()
bk.run(0.1)
print("outcomes", cancelled, other, bk.pending())
