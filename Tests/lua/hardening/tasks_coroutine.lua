-- A task's coroutine in a script's hands. coroutine.resume of it while the engine has it suspended
-- gets nothing back (it got the engine's private value) and the task goes on waiting;
-- coroutine.close of it ends the task as cancelled and tells its awaiters (it stayed pending for ever).
local co
local t = bk.async(function() co = coroutine.running() bk.sleep(100) return "slept" end)
local awaiter = bk.async(function() return pcall(bk.await, t) end)
local results = table.pack(coroutine.resume(co))
print("resume", results.n, results[1], tostring(t))
print("close", coroutine.close(co), tostring(t), t.isFinished, t.isCancelled)
local ok, err = bk.await(awaiter, 1)
print("awaiter", ok, err == bk.cancelled)
print("await", pcall(bk.await, t, 1))

-- Closed while it awaits something with a timeout: the awaited thing forgets it, and the timeout
-- timer is dropped (nothing keeps the loop alive).
local handle = bk.performBlock(function() end, 100)
local co2
local t2 = bk.async(function() co2 = coroutine.running() bk.await(handle, 50) end)
coroutine.close(co2)
handle:cancel()
print("closed awaiting", tostring(t2), bk.pending())

-- Closed at a plain coroutine.yield: ends as cancelled at its wake-up.
local co3
local t3 = bk.async(function() co3 = coroutine.running() coroutine.yield() return "yielded" end)
coroutine.close(co3)
bk.run(1)
print("closed at yield", tostring(t3))

-- Resumed by a script, the task still ends as the engine runs it.
local co4
local t4 = bk.async(function() co4 = coroutine.running() bk.sleep(0.01) return "woke" end)
coroutine.resume(co4)
print("resumed", bk.await(t4, 1))
