-- While the state closes (os.exit(0, true) here; a host's close the same), every entry of the tasks
-- engine refuses, naming the function the script called (they named the engine's natives:
-- 'schedule', 'runUntil', 'unschedule', 'performBlock'; bk.async did not refuse at all).
-- luacheck: globals FINALIZER (a global, so that it lives until the state closes)
local T = bk.async(function() bk.sleep(100) end)
local D = bk.debounce(function() end, 1)
local TH = bk.throttle(function() end, 1)
local calls = {
  { "async", function() bk.async(function() end) end },
  { "await", function() bk.await(T) end },
  { "await", function() bk.await(T, 1) end },
  { "sleep", function() bk.sleep(0) end },
  { "awaitAll", function() bk.awaitAll({ T }) end },
  { "awaitAny", function() bk.awaitAny({ T }) end },
  { "currentTask", function() bk.currentTask() end },
  { "cancel", function() T:cancel() end },
  { "result", function() T:result() end },
  { "debounce", function() bk.debounce(print, 1) end },
  { "bk.Debounced", function() D(1) end },
  { "cancel", function() D:cancel() end },
  { "flush", function() D:flush() end },
  { "throttle", function() bk.throttle(print, 1) end },
  { "bk.Throttled", function() TH(1) end },
  { "flush", function() TH:flush() end },
}
FINALIZER = setmetatable({}, { __gc = function()
  local wrong = 0
  for _, call in ipairs(calls) do
    local ok, err = pcall(call[2])
    local expected = "cannot call '" .. call[1] .. "' while the Lua state is closing"
    if ok or err ~= expected then
      wrong = wrong + 1
      print("wrong", call[1], ok, err)
    end
  end
  print("closing", #calls, "wrong", wrong)
end })
os.exit(0, true)
