-- Issue [N] 5: a finalizer reads ch.count while ch:receive() copies a large value into this state
-- (and while ch:send() copies one out). The channel's lock (not recursive) was held over the copy,
-- whose allocations ran the finalizer: the process hung. Prints the sizes received.
local ch = bk.channel()
local function big(n)
  local t = {}
  for i = 1, n do t[i] = {i, tostring(i)} end
  return t
end
local seen = 0
-- Objects whose finalizers are due at the next cycle: kept through a full collection, then let go.
local function arm(k)
  local keep = {}  -- luacheck: ignore 241 (holds the objects until arm returns)
  for i = 1, k do
    keep[i] = setmetatable({}, {__gc = function()
      local n = ch.count
      if type(n) == "number" then seen = seen + 1 end
      local _ = tostring(ch)
    end})
  end
  collectgarbage()
  collectgarbage()
end
for round = 1, 3 do
  arm(200)
  ch:send(big(20000))
  arm(200)
  local v = ch:receive()
  print("received", round, #v, v[20000][2])
end
-- Armed waits (a task waiting on an empty channel): the waiter's references are made while
-- finalizers are pending.
if bk.async then
  local got
  local t = bk.async(function() got = ch:receive() end)  -- luacheck: ignore 211 (the task stays referenced while it waits)
  arm(200)
  collectgarbage("step")
  bk.performBlock(function() ch:send("late") end, 0.01)
  bk.run()
  print("task received", got)
end
collectgarbage()
print("finalizers saw the channel", seen > 0)
print("done")
