-- Block execution: performBlock, cancellation, queues, the loop (bk.run/stop/pending), bk.onError.

local function collected(make)
  -- make() returns a function to track; true when it is garbage once `make`'s caller drops it.
  local weak = setmetatable({}, { __mode = "k" })
  make(weak)
  collectgarbage()
  collectgarbage()
  return next(weak) == nil
end

-- Runs `f` with bk.onError collecting messages; returns them.
local function capturingErrors(f)
  local messages = {}
  local previous = bk.onError(function(m) messages[#messages + 1] = m end)
  local okRun, err = pcall(f)
  bk.onError(previous)
  assert(okRun, err)
  return messages
end

test("blocks run in delay order; equal delays keep submission order", function()
  local order = {}
  bk.performBlock(function() order[#order + 1] = "c" end, 0.03)
  bk.performBlock(function() order[#order + 1] = "a1" end, 0.01)
  bk.performBlock(function() order[#order + 1] = "now" end, 0)
  bk.performBlock(function() order[#order + 1] = "b" end, 0.02)
  bk.performBlock(function() order[#order + 1] = "a2" end, 0.01)
  for i = 1, 20 do bk.performBlock(function() order[#order + 1] = i end, 0) end
  eq(bk.run(), true)
  local expected = { "now" }
  for i = 1, 20 do expected[#expected + 1] = i end
  for _, v in ipairs { "a1", "a2", "b", "c" } do expected[#expected + 1] = v end
  deepEq(order, expected)
end)

test("a block does not run before its delay", function()
  local start = bk.now()
  local ranAt
  bk.performBlock(function() ranAt = bk.now() end, 0.05)
  bk.run()
  ok(ranAt - start >= 0.049, "ran after " .. (ranAt - start))
end)

test("performBlock(obj, f, delay) calls f(obj); f alone gets no arguments", function()
  local obj = { name = "target" }
  local got, count
  bk.performBlock(obj, function(o) got = o end, 0)
  bk.performBlock(function(...) count = select("#", ...) end, 0)
  bk.run()
  eq(got, obj)
  eq(count, 0)
end)

test("a function can be the object: performBlock(g, f, delay) calls f(g)", function()
  local function g() end
  local got
  bk.performBlock(g, function(o) got = o end, 0)
  bk.run()
  eq(got, g)
end)

test("cancel before the block runs: it never runs", function()
  local ran = false
  local h = bk.performBlock(function() ran = true end, 0.01)
  eq(h.isCancelled, false)
  eq(h.isFinished, false)
  h:cancel()
  eq(h.isCancelled, true)
  eq(bk.pending(), 0)
  bk.run()
  eq(ran, false)
  eq(h.isFinished, false)
end)

test("cancelBlock(handle) and handle:bk_cancel() cancel too; cancelling twice does nothing", function()
  local ran = 0
  local h1 = bk.performBlock(function() ran = ran + 1 end, 0)
  local h2 = bk.performBlock(function() ran = ran + 1 end, 0)
  bk.cancelBlock(h1)
  bk.cancelBlock(h1)
  h2:bk_cancel()
  h2:cancel()
  bk_cancelBlock(h2)
  bk.run()
  eq(ran, 0)
  ok(h1.isCancelled and h2.isCancelled)
end)

test("cancel after the block ran does nothing; isFinished is true", function()
  local ran = 0
  local h = bk.performBlock(function() ran = ran + 1 end, 0)
  bk.run()
  eq(h.isFinished, true)
  h:cancel()
  eq(h.isCancelled, false)
  eq(h.isFinished, true)
  eq(ran, 1)
end)

test("a block can cancel a later block due in the same turn", function()
  local ran = {}
  local second
  bk.performBlock(function() ran[#ran + 1] = 1; second:cancel() end, 0)
  second = bk.performBlock(function() ran[#ran + 1] = 2 end, 0)
  bk.run()
  deepEq(ran, { 1 })
end)

test("isFinished is false while the block runs", function()
  local h
  local during
  h = bk.performBlock(function() during = h.isFinished end, 0)
  bk.run()
  eq(during, false)
  eq(h.isFinished, true)
end)

test("a cancelled block releases its function at once", function()
  local handles = {}
  ok(collected(function(weak)
    local big = {}
    local f = function() return big end
    weak[f] = true
    handles[1] = bk.performBlock(f, 10)
    handles[1]:cancel()
  end), "function still referenced after cancel")
  eq(bk.pending(), 0)
end)

test("a finished block releases its function and object", function()
  local handle
  ok(collected(function(weak)
    local obj = {}
    local f = function() end
    weak[f] = true
    weak[obj] = true
    handle = bk.performBlock(obj, f, 0)
  end) == false, "still scheduled: kept alive")
  bk.run()
  collectgarbage()
  collectgarbage()
  ok(handle.isFinished)
end)

test("finished blocks leave nothing behind in the registry", function()
  local before
  for round = 1, 2 do
    for i = 1, 2000 do
      local h = bk.performBlock({}, function() end, 0)
      if i % 2 == 0 then h:cancel() end
    end
    bk.run()
    collectgarbage()
    collectgarbage()
    local size = 0
    for _ in pairs(debug.getregistry()) do size = size + 1 end
    if round == 1 then before = size else ok(size <= before + 5, "registry grew from " .. before .. " to " .. size) end
  end
end)

test("blocks scheduled by blocks run in the same bk.run", function()
  local trail = {}
  bk.performBlock(function()
    trail[#trail + 1] = 1
    bk.performBlock(function()
      trail[#trail + 1] = 2
      bk.performBlock(function() trail[#trail + 1] = 3 end, 0.01)
    end, 0)
  end, 0)
  eq(bk.run(), true)
  deepEq(trail, { 1, 2, 3 })
end)

test("bk.pending counts scheduled blocks", function()
  eq(bk.pending(), 0)
  local a = bk.performBlock(function() end, 5)
  local b = bk.performBlock(function() end, 5)
  eq(bk.pending(), 2)
  a:cancel()
  eq(bk.pending(), 1)
  b:cancel()
  eq(bk.pending(), 0)
end)

test("bk.run(seconds) returns false at the deadline while work is pending", function()
  local h = bk.performBlock(function() end, 30)
  local start = bk.now()
  eq(bk.run(0.05), false)
  local elapsed = bk.now() - start
  ok(elapsed >= 0.045 and elapsed < 5, "returned after " .. elapsed)
  eq(bk.pending(), 1)
  h:cancel()
  eq(bk.run(0), true)
end)

test("bk.stop ends a running bk.run, which returns false; the rest runs later", function()
  local ran = {}
  bk.performBlock(function() ran[#ran + 1] = "first"; bk.stop() end, 0)
  bk.performBlock(function() ran[#ran + 1] = "later" end, 0.02)
  eq(bk.run(), false)
  deepEq(ran, { "first" })
  eq(bk.pending(), 1)
  eq(bk.run(), true)
  deepEq(ran, { "first", "later" })
end)

test("bk.run with nothing pending returns true at once", function()
  eq(bk.pending(), 0)
  eq(bk.run(), true)
  eq(bk.run(1), true)
end)

test("errors in blocks are reported with a traceback and later blocks still run", function()
  local ran = {}
  local messages = capturingErrors(function()
    bk.performBlock(function() error("first failure") end, 0)
    bk.performBlock(function() ran[#ran + 1] = 1 end, 0)
    bk.performBlock(function() local x = nil; return x.field end, 0.01)
    bk.performBlock(function() ran[#ran + 1] = 2 end, 0.02)
    eq(bk.run(), true)
  end)
  deepEq(ran, { 1, 2 })
  eq(#messages, 2)
  ok(messages[1]:find("first failure", 1, true), messages[1])
  ok(messages[1]:find("stack traceback:", 1, true), "traceback appended")
  ok(messages[2]:find("attempt to index a nil value", 1, true), messages[2])
end)

test("bk.onError gets (message with traceback, the error value) for any value raised", function()
  local reports = {}
  local previous = bk.onError(function(m, v) reports[#reports + 1] = { m, v } end)
  local raised = { code = 7 }
  local named = setmetatable({}, { __tostring = function() return "a named error" end })
  bk.performBlock(function() error(raised) end, 0)
  bk.performBlock(function() error(named) end, 0)
  bk.async(function() bk.sleep(0) error(raised) end)  -- a task nobody awaits
  bk.performBlock(function() error("plain", 0) end, 0)
  bk.run()
  collectgarbage()  -- the task's report comes when it is collected unawaited
  bk.onError(previous)
  eq(#reports, 4)
  -- Matched by value, not by order.
  local described = { [raised] = "(error object is a table value)", [named] = "a named error", plain = "plain" }
  local seen = {}
  for _, report in ipairs(reports) do
    local message, value = report[1], report[2]
    local expected = described[value]
    ok(expected, "an unexpected value: " .. tostring(value))
    eq(message:sub(1, #expected), expected)
    ok(message:find("\nstack traceback:", 1, true), message)
    seen[value] = (seen[value] or 0) + 1
  end
  eq(seen[raised], 2)
  eq(seen[named], 1)
  eq(seen.plain, 1)
end)

test("bk.onError returns the previous handler; nil restores the default", function()
  local function h1() end
  local function h2() end
  local original = bk.onError(h1)
  eq(bk.onError(h2), h1)
  eq(bk.onError(), h2, "no argument only reads")
  eq(bk.onError(nil), h2)
  eq(bk.onError(original), nil)
  raises("bad argument #1 to 'onError' (function expected, got number)", bk.onError, 42)
end)

test("without a handler, callback errors go to stderr as 'bklua: ...' and the loop goes on", function()
  local out, code = shell(os.getenv("BKLUA") .. [[ -e "bk.performBlock(function() error('oops') end, 0) bk.performBlock(function() print('still running') end, 0.01)"]])
  eq(code, 1, "a reported error fails the run once the loop ended")
  ok(out:find("bklua: (command line):1: oops", 1, true), out)
  ok(out:find("stack traceback:", 1, true), out)
  ok(out:find("still running", 1, true), out)
end)

test("an error in the error handler is reported too", function()
  local out = shell(os.getenv("BKLUA") .. [[ -e "bk.onError(function() error('handler broke') end) bk.performBlock(function() error('original') end, 0)"]])
  ok(out:find("handler broke", 1, true), out)
  ok(out:find("original", 1, true), out)
end)

test("background blocks run on another thread and bk.run waits for them", function()
  local mainThread = bk.threadId()
  local seen = {}
  for i = 1, 4 do
    bk.performBlockInBackground(function() seen[#seen + 1] = bk.threadId() end, 0)
  end
  bk.performBlockInBackground({}, function(o) seen[#seen + 1] = bk.threadId() end, 0.01)
  eq(bk.run(), true)
  eq(#seen, 5)
  for _, id in ipairs(seen) do ok(id ~= mainThread, "ran on the main thread") end
end)

test("Lua never runs on two threads at once", function()
  -- Each block records the wall-clock interval it spent in Lua and its OS thread; two threads in
  -- the state at once would show as overlapping intervals of different threads, whatever Lua
  -- values they raced on.
  local intervals = {}
  local function busy(seconds)
    local stop = bk.now() + seconds
    while bk.now() < stop do end
  end
  local function record(seconds)
    local start = bk.now()
    busy(seconds)
    intervals[#intervals + 1] = { start, bk.now(), bk.threadId() }
  end
  for _ = 1, 6 do bk.performBlockInBackground(function() record(0.01) end, 0) end
  local timer = bk.scheduledTimerWithTimeInterval(0.001, function() record(0.0005) end, true)
  bk.performBlock(function() timer:invalidate() end, 0.2)
  bk.run()
  local threads, mainRuns = {}, 0
  for _, a in ipairs(intervals) do
    threads[a[3]] = true
    if a[3] == bk.threadId() then mainRuns = mainRuns + 1 end
    for _, b in ipairs(intervals) do
      if a ~= b and a[3] ~= b[3] then
        ok(a[2] <= b[1] or b[2] <= a[1], string.format("threads %d and %d overlapped", a[3], b[3]))
      end
    end
  end
  ok(mainRuns > 0, "the main queue kept running")
  local count = 0
  for _ in pairs(threads) do count = count + 1 end
  ok(count >= 2, "blocks ran on more than one thread (else nothing was checked)")
end)

test("a serial queue runs its blocks in submission order, one at a time", function()
  local q = bk.queue("serial-test")
  eq(q.label, "serial-test")
  eq(q.isConcurrent, false)
  local order = {}
  for i = 1, 50 do bk.performBlock(function() order[#order + 1] = i end, 0, q) end
  for i = 51, 60 do bk.performBlock(function() order[#order + 1] = i end, 0.01, q) end
  eq(bk.run(), true)
  eq(#order, 60)
  for i = 1, 60 do eq(order[i], i) end
end)

test("a concurrent queue runs every block, on worker threads", function()
  local q = bk.queue("concurrent-test", "concurrent")
  eq(q.isConcurrent, true)
  local done, threads = 0, {}
  for _ = 1, 40 do
    bk.performBlock(function() done = done + 1; threads[bk.threadId()] = true end, 0, q)
  end
  eq(bk.run(), true)
  eq(done, 40)
  ok(threads[bk.threadId()] == nil, "ran on the main thread")
end)

test("bk.run from a background block is an error (reported), the loop goes on", function()
  local messages = capturingErrors(function()
    bk.performBlockInBackground(function() bk.run() end, 0)
    eq(bk.run(), true)
  end)
  eq(#messages, 1)
  ok(messages[1]:find("bk.run cannot run the loop from a block of another queue", 1, true), messages[1])
end)

test("a background block can schedule main-queue blocks", function()
  local where
  bk.performBlockInBackground(function()
    bk.performBlock(function() where = bk.threadId() end, 0)
  end, 0)
  eq(bk.run(), true)
  eq(where, bk.threadId())
end)

test("cancelling a queued background block keeps it from running", function()
  local ran = false
  local h = bk.performBlockInBackground(function() ran = true end, 0)
  h:cancel() -- the worker waits for the state this test holds, so it has not started
  eq(bk.run(), true)
  eq(ran, false)
  eq(h.isCancelled, true)
end)

test("queues: bk.mainQueue and bk.backgroundQueue", function()
  eq(bk.mainQueue.isMain, true)
  eq(bk.backgroundQueue.isConcurrent, true)
  local on
  bk.performBlock(function() on = bk.threadId() end, 0, bk.mainQueue)
  bk.run()
  eq(on, bk.threadId())
  local h = bk.performBlock(function() on = bk.threadId() end, 0, bk.backgroundQueue)
  eq(h.queue, bk.backgroundQueue)
  bk.run()
  ok(on ~= bk.threadId())
end)

test("huge finite delays are clamped: the block waits, the clock does not overflow", function()
  local ran = false
  local handles = {}
  for _, delay in ipairs { 1e300, math.maxinteger + 0.0, 2^63, 1e10 } do
    handles[#handles + 1] = bk.performBlock(function() ran = true end, delay)
  end
  handles[#handles + 1] = bk.performBlockInBackground(function() ran = true end, 1e300)
  eq(bk.pending(), 5)
  eq(bk.run(0.05), false)
  eq(ran, false)
  for _, h in ipairs(handles) do h:cancel() end
  eq(bk.pending(), 0)
end)

test("bad arguments raise Lua's standard errors", function()
  raises("bad argument #2 to 'performBlock' (number expected, got no value)", bk.performBlock, function() end)
  raises("bad argument #2 to 'performBlock' (function expected, got no value)", bk.performBlock, 42)
  raises("bad argument #3 to 'performBlock' (bk.Queue expected, got number)", bk.performBlock, function() end, 0, 42)
  raises("bad argument #2 to 'performBlock' (number is NaN)", bk.performBlock, function() end, 0 / 0)
  raises("bad argument #2 to 'performBlock' (delay must be a finite number)", bk.performBlock, function() end, math.huge)
  raises("bad argument #2 to 'performBlock' (delay must be a finite number)", bk.performBlock, function() end, -math.huge)
  raises("bad argument #3 to 'performBlock' (delay must be a finite number)", bk.performBlock, {}, function() end, math.huge)
  raises("bad argument #2 to 'performBlockInBackground' (delay must be a finite number)",
    bk.performBlockInBackground, function() end, math.huge)
  raises("bad argument #1 to 'cancelBlock' (bk.BlockHandle expected, got nil)", bk.cancelBlock, nil)
  raises("bad argument #2 to 'queue' (invalid option 'parallel')", bk.queue, "q", "parallel")
  raises("bad argument #1 to 'queue' (string expected, got no value)", bk.queue)
  raises("bad argument #1 to 'run' (number expected, got string)", bk.run, "soon")
  eq(bk.pending(), 0)
end)

test("negative delays mean now", function()
  local ran = false
  bk.performBlock(function() ran = true end, -5)
  eq(bk.run(1), true)
  eq(ran, true)
end)

test("bklua runs the loop after the script and exits once idle", function()
  local BKLUA = os.getenv("BKLUA")
  local out, code = shell(BKLUA .. [[ -e "bk.performBlock(function() print('late') end, 0.1) print('script done')"]])
  eq(out, "script done\nlate\n")
  eq(code, 0)
  local path = os.tmpname()
  local f = assert(io.open(path, "w"))
  f:write([[
local n = 0
bk.scheduledTimerWithTimeInterval(0.01, function(t)
  n = n + 1
  print("tick", n)
  if n == 3 then t:invalidate() end
end, true)
]])
  f:close()
  out, code = shell(BKLUA .. " " .. path)
  os.remove(path)
  eq(out, "tick\t1\ntick\t2\ntick\t3\n")
  eq(code, 0)
end)

test("a script error exits with status 1 without running the loop", function()
  local out, code = shell(os.getenv("BKLUA") .. [[ -e "bk.performBlock(function() print('must not run') end, 0) error('fails')"]])
  eq(code, 1)
  ok(not out:find("must not run", 1, true), out)
end)

-- In the stock interpreter (bk.so), the interpreter's thread holds the state except while bk.run
-- sleeps: background blocks wait for the script, then run, never beside Lua code of the loop.
local MODULE_DIR = os.getenv("BK_MODULE_DIR")
if not MODULE_DIR then
  print("SKIPPED test_execution: stock lua5.4 with bk.so (BK_MODULE_DIR is not set; scripts/test sets it)")
else
  test("stock lua5.4 with bk.so: background blocks run only while bk.run sleeps", function()
    local script = [[
      local bk = require "bk"
      local seen, inside, overlaps = {}, false, 0
      for i = 1, 4 do
        bk.performBlockInBackground(function()
          if inside then overlaps = overlaps + 1 end
          inside = true
          local s = os.clock() + 0.005 while os.clock() < s do end
          seen[#seen + 1] = bk.threadId()
          inside = false
        end, 0)
      end
      local t = bk.scheduledTimerWithTimeInterval(0.001, function() if inside then overlaps = overlaps + 1 end end, true)
      bk.performBlock(function() t:invalidate() end, 0.1)
      local s = os.clock() + 0.03 while os.clock() < s do end
      io.write(#seen, " ")
      print(bk.run(), #seen, overlaps, seen[1] ~= bk.threadId())
    ]]
    local out, code = shell("LUA_CPATH='" .. MODULE_DIR .. "/?.so;;' " .. (os.getenv("LUA") or "lua5.4")
      .. " -e '" .. script:gsub("'", "'\\''") .. "'")
    eq(out, "0 true\t4\t0\ttrue\n")
    eq(code, 0)
  end)
end
