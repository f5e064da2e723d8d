-- GC storm (issue [N], nets): the collector runs almost all the time (tiny pause) and finalizers,
-- re-arming themselves, call bk functions (channels, workers, tasks) while this state copies
-- values in and out: worker arguments and results, channel messages, bk.parallelMap's chunks, a
-- task's armed channel wait. A finalizer must never re-enter a copy half-way or wait for a lock
-- the copy holds. Prints "storm done" and what the finalizers did; a crash or hang fails.
local ch = bk.channel()
local side = bk.channel()
local done = bk.worker(function() return {1, 2, 3}, "x" end)
local spinning = bk.worker(function() while true do end end)
local calls, errors, storming = 0, 0, true
local last = {}

local actions = {
  function() return ch.count + side.count end,
  function() return tostring(ch), side.isClosed end,
  function() side:send({calls, {calls}}) end,
  function() return side:receive(0) end,
  function() return ch:receive(0) end,         -- may take a message: the main code tolerates it
  function() return done:result() end,
  function() return done.isFinished, spinning.isFinished end,
  function() spinning:cancel() end,
  function() if calls % 256 == 0 then return bk.worker(function(t) return #t end, {1, 2}) end end,
  function() return bk.map({1, 2, 3}, function(x) return x * 2 end) end,
  function() collectgarbage("step") end,         -- inside a finalizer Lua takes no step: harmless
}

local function arm()
  setmetatable({}, {__gc = function()
    if not storming then return end
    calls = calls + 1
    local action = actions[calls % #actions + 1]
    local ok, e = pcall(action)
    if not ok then errors = errors + 1 last[#last + 1] = tostring(e) end
    arm()
  end})
end
for _ = 1, 20 do arm() end  -- a constant population: each re-arms one
collectgarbage("incremental", 10, 400)   -- a new cycle soon after one ends

local function big(n, tag)
  local t = {tag = tag}
  for i = 1, n do t[i] = {i, tostring(i)} end
  return t
end

local wrong = 0
for round = 1, 3 do
  -- Worker argument in, result out.
  local w = bk.worker(function(t) local r = {} for i = 1, #t do r[i] = {t[i][1] * 2} end return r, #t end, big(1500))
  local r, n = w:result()
  if n ~= 1500 or r[1500][1] ~= 3000 then wrong = wrong + 1 end
  -- Channel in and out (a finalizer may receive it first: then it is gone, not corrupted).
  ch:send(big(1500, round))
  local v = ch:receive(0)
  if v ~= nil and (v.tag ~= round or #v ~= 1500 or v[1500][2] ~= "1500") then wrong = wrong + 1 end
  -- The pool's copies.
  local m = bk.parallelMap(big(1000), function(e) return e[1] + 1 end)
  if #m ~= 1000 or m[1000] ~= 1001 then wrong = wrong + 1 end
end

-- A task waiting on an empty channel (its waiter is armed while finalizers are due).
if bk.async then
  local got
  local quiet = bk.channel()
  bk.async(function() got = quiet:receive() end)
  bk.performBlock(function() quiet:send("late") end, 0.02)
  bk.run(5)
  if got ~= "late" then wrong = wrong + 1 end
end

storming = false
spinning:cancel()
collectgarbage("generational")
collectgarbage()
print("finalizer calls", calls > 100, "errors", errors)
for i = 1, math.min(#last, 3) do print("error", last[i]) end
print("wrong", wrong)
print("storm done")
