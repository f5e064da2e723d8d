-- A task cancelled while it is suspended inside an observer or an event handler ends there,
-- silently: the cancellation is not reported (it was, through bk.onError) and the task's code after
-- the write or the send does not run (it did: the observer's or handler's error was swallowed).
local reports = {}
bk.onError(function(message) reports[#reports + 1] = message end)
local after = {}

local observed = {}
bk.addObserverForKeyPath(observed, "x", function() bk.sleep(10) after[#after + 1] = "observer" end)
local observing = {}  -- two observers of one key: the general (Lua) path, not the C fast path
bk.addObserverForKeyPath(observing, "y", function() bk.sleep(10) after[#after + 1] = "observer2" end)
bk.addObserverForKeyPath(observing, "y", function() end)
local target = {}
bk.addEventHandler(target, function() bk.sleep(10) after[#after + 1] = "handler" end, "valueChanged")

local tasks = {
  bk.async(function() observed.x = 1 after[#after + 1] = "task after write" end),
  bk.async(function() observing.y = 1 after[#after + 1] = "task after write 2" end),
  bk.async(function() bk.sendActionsForControlEvents(target, "valueChanged") after[#after + 1] = "task after send" end),
}
-- A failure that is not a cancellation is still reported, and the task goes on.
bk.addObserverForKeyPath(observed, "z", function() error("observer failed", 0) end)
local goesOn = bk.async(function() observed.z = 1 return "went on" end)
bk.performBlock(function() for _, t in ipairs(tasks) do t:cancel() end end, 0.05)
bk.run(2)
local states = {}
for i, t in ipairs(tasks) do states[i] = tostring(t) end
print("states", table.concat(states, " "))
print("after", #after, table.concat(after, ","))
print("reports", #reports, reports[1] and reports[1]:match("^[^\n]*") or "")
print("goesOn", bk.await(goesOn))
