-- 100,000 tasks await one task: attaching and detaching a waiter is O(1) (it was a scan of the
-- whole waiter list: quadratic, 10,000 awaiters took 2.4 s and 100,000 did not finish in 30 s).
-- Usage: tasks_awaiters.lua [count]. Prints "awaiters <count> <woken>".
local count = tonumber(arg and arg[1]) or 100000
local target = bk.async(function() bk.sleep(0) return 42 end)
local woken = 0
for _ = 1, count do
  bk.async(function()
    if bk.await(target) == 42 then woken = woken + 1 end
  end)
end
bk.run()
print("awaiters", count, woken)
