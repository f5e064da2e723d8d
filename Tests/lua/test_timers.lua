-- Timers: scheduledTimerWithTimeInterval, timerWithTimeInterval + schedule, invalidate, fire.

test("a repeating timer fires about once per interval within a window", function()
  local count = 0
  local timer = bk.scheduledTimerWithTimeInterval(0.01, function() count = count + 1 end, true)
  bk.performBlock(function() timer:invalidate() end, 0.2)
  eq(bk.run(), true)
  -- 20 intervals in the window; a noisy machine may miss some (missed firings are skipped).
  ok(count >= 3 and count <= 21, "fired " .. count .. " times")
  eq(timer.isValid, false)
end)

test("a repeating timer keeps bk.run alive until it is invalidated", function()
  local count = 0
  bk.scheduledTimerWithTimeInterval(0.005, function(t)
    count = count + 1
    if count == 4 then t:invalidate() end
  end, true)
  eq(bk.pending(), 1)
  eq(bk.run(), true)
  eq(count, 4)
  eq(bk.pending(), 0)
end)

test("a non-repeating timer fires once, gets the timer, then is invalid", function()
  local count, got = 0, nil
  local timer = bk.scheduledTimerWithTimeInterval(0.01, function(t) count = count + 1; got = t end, false)
  eq(timer.isValid, true)
  eq(timer.repeats, false)
  eq(bk.run(), true)
  eq(count, 1)
  eq(got, timer)
  eq(timer.isValid, false)
end)

test("repeats defaults to false", function()
  local count = 0
  bk.scheduledTimerWithTimeInterval(0, function() count = count + 1 end)
  bk.run()
  eq(count, 1)
end)

test("timerWithTimeInterval does not start until schedule()", function()
  local count = 0
  local timer = bk.timerWithTimeInterval(0.001, function() count = count + 1 end, false)
  eq(timer.isValid, true)
  eq(bk.pending(), 0)
  eq(bk.run(), true)
  eq(count, 0)
  eq(timer:schedule(), timer)
  timer:schedule() -- already scheduled: nothing changes
  eq(bk.pending(), 1)
  bk.run()
  eq(count, 1)
  timer:schedule() -- invalid now: nothing happens
  eq(bk.pending(), 0)
end)

test("invalidate inside the timer's own callback stops it at once", function()
  local count = 0
  local timer
  timer = bk.scheduledTimerWithTimeInterval(0.001, function(t)
    count = count + 1
    t:invalidate()
    eq(t.isValid, false)
  end, true)
  eq(bk.run(), true)
  eq(count, 1)
  eq(timer.isValid, false)
end)

test("invalidate before firing: never fires; twice is harmless", function()
  local fired = false
  local timer = bk.scheduledTimerWithTimeInterval(0.01, function() fired = true end, true)
  timer:invalidate()
  timer:bk_invalidate()
  eq(bk.pending(), 0)
  bk.run()
  eq(fired, false)
end)

test("fire() runs the block now; a non-repeating timer is then invalid", function()
  local calls = {}
  local once = bk.timerWithTimeInterval(60, function(t) calls[#calls + 1] = t end, false)
  once:fire()
  eq(#calls, 1)
  eq(calls[1], once)
  eq(once.isValid, false)
  once:fire()
  eq(#calls, 1, "an invalid timer does not fire")
end)

test("fire() on a repeating timer keeps its schedule", function()
  local count = 0
  local timer = bk.scheduledTimerWithTimeInterval(0.02, function(t)
    count = count + 1
    if count == 3 then t:invalidate() end
  end, true)
  timer:fire()
  eq(count, 1)
  eq(timer.isValid, true)
  eq(bk.pending(), 1)
  bk.run()
  eq(count, 3)
end)

test("timeInterval is the interval, with NSTimer's 0.1 ms floor", function()
  local t = bk.timerWithTimeInterval(1.5, function() end, true)
  eq(t.timeInterval, 1.5)
  eq(bk.timerWithTimeInterval(-1, function() end).timeInterval, 0.0001)
  t:invalidate()
end)

test("an error in a timer callback is reported and the timer keeps firing", function()
  local messages, count = {}, 0
  local previous = bk.onError(function(m) messages[#messages + 1] = m end)
  bk.scheduledTimerWithTimeInterval(0.002, function(t)
    count = count + 1
    if count == 3 then t:invalidate() end
    error("tick " .. count)
  end, true)
  bk.run()
  bk.onError(previous)
  eq(count, 3)
  eq(#messages, 3)
  ok(messages[3]:find("tick 3", 1, true), messages[3])
end)

test("an invalidated timer releases its function", function()
  local weak = setmetatable({}, { __mode = "k" })
  local timer
  do
    local f = function() end
    weak[f] = true
    timer = bk.scheduledTimerWithTimeInterval(10, f, true)
  end
  collectgarbage()
  ok(next(weak) ~= nil, "a scheduled timer keeps its function")
  timer:invalidate()
  collectgarbage()
  collectgarbage()
  eq(next(weak), nil)
end)

test("a scheduled timer fires even when Lua drops every reference to it", function()
  local count = 0
  bk.scheduledTimerWithTimeInterval(0.005, function(t)
    count = count + 1
    if count == 2 then t:invalidate() end
  end, true)
  collectgarbage()
  collectgarbage()
  bk.run()
  eq(count, 2)
end)

test("timers and blocks interleave by due time", function()
  local trail = {}
  bk.scheduledTimerWithTimeInterval(0.02, function() trail[#trail + 1] = "timer" end)
  bk.performBlock(function() trail[#trail + 1] = "early" end, 0.005)
  bk.performBlock(function() trail[#trail + 1] = "late" end, 0.05)
  bk.run()
  deepEq(trail, { "early", "timer", "late" })
end)

test("huge finite intervals are clamped: the timer waits, the clock does not overflow", function()
  local fired = 0
  local a = bk.scheduledTimerWithTimeInterval(1e300, function() fired = fired + 1 end, true)
  local b = bk.scheduledTimerWithTimeInterval(2^63, function() fired = fired + 1 end)
  eq(a.timeInterval, 1e300)
  eq(bk.run(0.05), false)
  eq(fired, 0)
  a:invalidate()
  b:invalidate()
  eq(bk.pending(), 0)
end)

test("bad arguments raise Lua's standard errors", function()
  raises("bad argument #1 to 'scheduledTimerWithTimeInterval' (number expected, got function)",
    bk.scheduledTimerWithTimeInterval, function() end, 1)
  raises("bad argument #2 to 'timerWithTimeInterval' (function expected, got nil)", bk.timerWithTimeInterval, 1, nil)
  raises("bad argument #1 to 'scheduledTimerWithTimeInterval' (number is NaN)",
    bk.scheduledTimerWithTimeInterval, 0 / 0, function() end)
  raises("bad argument #1 to 'scheduledTimerWithTimeInterval' (interval must be a finite number)",
    bk.scheduledTimerWithTimeInterval, math.huge, function() end)
  raises("bad argument #1 to 'timerWithTimeInterval' (interval must be a finite number)",
    bk.timerWithTimeInterval, -math.huge, function() end, true)
  eq(bk.pending(), 0)
end)
