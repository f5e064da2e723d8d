-- Workers: bk.worker, transferable values (bk.isTransferable), the pool behind bk.apply and
-- bk.parallelMap (bk.workerCount / setWorkerCount), channels, bk.isWorker.
-- Runs under bklua and under stock lua5.4 loading bk.so.
-- luacheck: globals workersCalls workersMarker (globals a worker must not see)

local bk = require "bk"

-- About 50-100 microseconds of pure Lua: heavy enough that parallelMap hands elements to the pool.
local function heavy(x)
  local s = 0
  for i = 1, 20000 do s = s + i % 3 end
  return { x * 2, bk.isWorker(), s }
end

local function list(n)
  local t = {}
  for i = 1, n do t[i] = i end
  return t
end

-- MARK: transferable values

test("isTransferable: plain values, tables with cycles, functions with such upvalues", function()
  eq(bk.isTransferable(nil), true)
  eq(bk.isTransferable(1.5), true)
  eq(bk.isTransferable("s"), true)
  local t = { 1, { 2 }, x = "y" }
  t.self = t
  eq(bk.isTransferable(t), true)
  local n, s = 3, "x"
  eq(bk.isTransferable(function() return n, s, t end), true)
  eq(bk.isTransferable(string.format), true)
  eq(bk.isTransferable(bk), true)
  eq(bk.isTransferable(bk.map), true)
  eq(bk.isTransferable(bk.null), true)
  eq(bk.isTransferable(bk.channel()), true)
end)

test("isTransferable: false and a reason naming the value", function()
  local co = coroutine.create(function() end)
  local okT, why = bk.isTransferable(co)
  eq(okT, false)
  eq(why, "the value is a coroutine")
  local acc = co
  local _, why2 = bk.isTransferable(function() return acc end)
  eq(why2, "upvalue 'acc' of the value is a coroutine")
  local _, why3 = bk.isTransferable({ 1, co })
  eq(why3, "element [2] of the value is a coroutine")
  local _, why4 = bk.isTransferable({ inner = { co = co } })
  eq(why4, "field 'co' of field 'inner' of the value is a coroutine")
  local _, why5 = bk.isTransferable({ [co] = 1 })
  eq(why5, "a key of the value is a coroutine")
  local _, why6 = bk.isTransferable(coroutine.wrap(function() end))
  eq(why6, "the value is a C function")
  local handle = bk.performBlock(function() end, 10)
  local _, why7 = bk.isTransferable(handle)
  handle:cancel()
  eq(why7, "the value is a bk.BlockHandle (not shareable between states)")
  local _, why8 = bk.isTransferable(io.stdout)
  ok(why8:find("the value is a FILE*", 1, true), why8)
  raises("bad argument #1 to 'isTransferable' (value expected)", bk.isTransferable)
end)

-- MARK: bk.worker

test("worker: runs f(...) in another state and returns its results", function()
  local w = bk.worker(function(a, b) return a + b, bk.isWorker(), select("#", a, b) end, 2, 3)
  local sum, inWorker, n = w:result()
  eq(sum, 5)
  eq(inWorker, true)
  eq(n, 2)
  eq(bk.isWorker(), false)
  eq(w.isFinished, true)
  eq(w.isCancelled, false)
  ok(tostring(w):find("bk.Worker(finished)", 1, true))
end)

test("worker: a fresh state with the standard libraries, bk (also as globals) and package.path", function()
  workersMarker = "parent"
  local w = bk.worker(function()
    return rawget(_G, "workersMarker"), type(string.format), type(bk.map), type(bk_map), package.path
  end)
  local marker, format, map, globalMap, path = w:result()
  workersMarker = nil
  eq(marker, nil)
  eq(format, "function")
  eq(map, "function")
  eq(globalMap, "function")
  eq(path, package.path)
end)

test("worker: upvalues are copied; _ENV and library values become the worker's own", function()
  local n, name = 21, "x"
  local insert = table.insert
  local function double(v) return v * 2 end
  local w = bk.worker(function()
    local t = {}
    insert(t, name)
    return double(n), t[1], _ENV == _G, bk.isWorker()
  end)
  local d, first, envIsGlobals, inWorker = w:result()
  eq(d, 42)
  eq(first, "x")
  eq(envIsGlobals, true)
  eq(inWorker, true)
end)

test("worker: closures sharing an upvalue still share it after the copy", function()
  local count = 0
  local function inc() count = count + 1 end
  local function get() return count end
  local w = bk.worker(function() inc() inc() return get() end)
  eq(w:result(), 2)
  eq(count, 0)  -- the parent's upvalue is untouched
end)

test("worker: arguments and results are copies; cycles and shared references kept, metatables dropped", function()
  local shared = { 1 }
  local arg = setmetatable({ a = shared, b = shared }, { __index = function() return "meta" end })
  arg.self = arg
  local w = bk.worker(function(t)
    t.a[1] = 99
    return t.a == t.b, t.self == t, getmetatable(t) == nil, t.b[1], t
  end, arg)
  local sameShared, cycle, noMeta, seen, back = w:result()
  eq(sameShared, true)
  eq(cycle, true)
  eq(noMeta, true)
  eq(seen, 99)
  eq(shared[1], 1)
  ok(back ~= arg)
  eq(back.self, back)
  eq(back.a, back.b)
end)

test("worker: result() again returns the same values", function()
  local w = bk.worker(function() return { 1 }, "s" end)
  local t1, s1 = w:result()
  local t2, s2 = w:result()
  eq(t1, t2)
  eq(s1, "s")
  eq(s2, "s")
end)

test("worker: its error reaches result() unchanged (values copied)", function()
  local w1 = bk.worker(function() error("plain", 0) end)
  local okCall, err = pcall(w1.result, w1)
  eq(okCall, false)
  eq(err, "plain")
  local w2 = bk.worker(function() error(42) end)
  local _, err2 = pcall(w2.result, w2)
  eq(err2, 42)
  local w3 = bk.worker(function() error({ code = 7 }) end)
  local _, err3 = pcall(w3.result, w3)
  eq(type(err3), "table")
  eq(err3.code, 7)
  eq(w3.isFinished, true)
end)

test("isTransferable: a value nested too deeply says so, its path shortened in the middle", function()
  local root = {}
  local t = root
  for _ = 1, 250 do t.n = {} t = t.n end
  local okValue, why = bk.isTransferable(root)
  eq(okValue, false)
  eq(why, "field 'n' of field 'n' of field 'n' of ... (194 more) ... of field 'n' of field 'n' of field 'n' of the value is nested too deeply")
end)

test("worker: values that cannot cross are errors naming them", function()
  local co = coroutine.create(function() end)
  raises("bad argument #2 to 'worker' (a coroutine cannot cross to another state)", bk.worker, function() end, co)
  raises("bad argument #3 to 'worker' (a coroutine cannot cross to another state)", bk.worker, function() end, 1, co)
  local acc = co
  raises("upvalue 'acc' of the function is a coroutine", bk.worker, function() return acc end)
  local w = bk.worker(function() return coroutine.running() end)
  raises("result #1 is a coroutine", w.result, w)
  raises("bad argument #1 to 'worker' (function expected, got number)", bk.worker, 1)
  raises("bad argument #1 to 'worker' (function expected, got no value)", bk.worker)
end)

test("worker: cancel stops an endless loop; awaiting it raises the cancellation", function()
  local w = bk.worker(function() while true do end end)
  w:cancel()
  local okCall, err = pcall(w.result, w)
  eq(okCall, false)
  eq(tostring(err), "cancelled")
  if bk.cancelled ~= nil then eq(err, bk.cancelled) end
  eq(w.isFinished, true)
  eq(w.isCancelled, true)
  ok(tostring(w):find("cancelled", 1, true))
  w:cancel()  -- again: nothing
end)

test("worker: cancel ends a wait at once: a sleep, a channel's receive and send, an awaited task", function()
  local empty, full = bk.channel(), bk.channel(1)
  full:send("x")
  local waits = {
    sleep = function() bk.sleep(1e6) end,
    receive = function(channel) return channel:receive() end,
    send = function(_, channel) channel:send("y") end,
    task = function() bk.await(bk.async(function() bk.sleep(1e6) end)) end,
  }
  for name, f in pairs(waits) do
    local w = bk.worker(f, empty, full)
    bk.sleep(0.05)  -- it waits by now
    w:cancel()
    -- Not woken, the worker would wait for ever: await's timeout would raise "timed out".
    local okCall, err = pcall(bk.await, w, 10)
    eq(okCall, false, name)
    eq(tostring(err), "cancelled", name)
  end
  eq(full:receive(), "x")
  -- A finished worker stops counting just after its waiters are woken: give it that moment.
  local deadline = bk.now() + 5
  while bk.pending() > 0 and bk.now() < deadline do bk.sleep(0.01) end
  eq(bk.pending(), 0, "no cancelled worker still waits")
end)

test("worker: bk's functions and bk.cancelled cross as the other state's own, also once the tasks engine loaded", function()
  -- In the worker's fresh state the engine loads after its first copy (this function) named bk's
  -- values: the engine's functions that then replace the stubs must be known as well.
  local w = bk.worker(function()
    bk.sleep(0)
    local sleep, await, cancelled = bk.sleep, bk.await, bk.cancelled
    return bk.isTransferable(function() return sleep, await end), bk.isTransferable(function() return cancelled end)
  end)
  local functions, cancelled = w:result()
  eq(functions, true)
  eq(cancelled, true)
  local sleep, c = bk.sleep, bk.cancelled
  eq(bk.worker(function() sleep(0) return c == bk.cancelled end):result(), true)
  local failed = bk.worker(function()
    local t = bk.async(function() bk.sleep(1) end)
    t:cancel()
    return bk.await(t)
  end)
  local okCall, err = pcall(failed.result, failed)
  eq(okCall, false)
  eq(err, bk.cancelled)
end)

test("worker: cancelling a finished worker does nothing", function()
  local w = bk.worker(function() return "done" end)
  eq(w:result(), "done")
  w:cancel()
  eq(w.isCancelled, false)
  eq(w:result(), "done")
end)

test("worker: result() runs the caller's loop while it waits", function()
  local ranMeanwhile = false
  bk.performBlock(function() ranMeanwhile = true end, 0)
  local ch = bk.channel()
  local w = bk.worker(function(c) return c:receive(5) end, ch)
  bk.performBlock(function() ch:send("from a block") end, 0.02)
  eq(w:result(), "from a block")
  eq(ranMeanwhile, true)
end)

test("worker: a running worker keeps bk.run() alive", function()
  local w = bk.worker(function() local s = 0 for i = 1, 2e6 do s = s + i end return s end)
  ok(bk.pending() >= 1 or w.isFinished)
  eq(bk.run(), true)
  eq(w.isFinished, true)
  eq(bk.pending(), 0)
end)

test("worker: workers can start workers", function()
  local w = bk.worker(function(n)
    return bk.worker(function(m) return m * 10, bk.isWorker() end, n):result()
  end, 4)
  local v, inWorker = w:result()
  eq(v, 40)
  eq(inWorker, true)
end)

-- MARK: the pool: apply and parallelMap

test("parallelMap: results in order, the heavy part computed on worker states", function()
  local t = list(100)
  local r = bk.parallelMap(t, heavy)
  eq(#r, 100)
  for i = 1, 100 do eq(r[i][1], i * 2) end
  eq(r[100][2], true, "the last element ran on a worker state")
  eq(bk.kind(r), "array")
end)

test("parallelMap: a result that cannot come back is named by its place in the whole list", function()
  -- 100 heavy elements go out in several chunks: element 90 is in a later chunk, not at its start.
  local okCall, err = pcall(bk.parallelMap, list(100), function(x)
    local r = heavy(x)
    if x == 90 then return coroutine.create(print) end
    return r
  end)
  eq(okCall, false)
  eq(err, "element [90] of the results is a coroutine")
end)

test("parallelMap: dictionaries give key -> result", function()
  local d = {}
  for i = 1, 80 do d["k" .. i] = i end
  local r = bk.parallelMap(d, function(k, v)
    local s = 0
    for i = 1, 20000 do s = s + i % 3 end
    return k .. "=" .. v
  end)
  local n = 0
  for k, v in pairs(r) do n = n + 1 eq(v, k .. "=" .. d[k]) end
  eq(n, 80)
  eq(bk.kind(r), "dictionary")
end)

test("parallelMap: a nil result is bk.null, as in map", function()
  local r = bk.parallelMap(list(70), function(x)
    local s = 0
    for i = 1, 20000 do s = s + i % 3 end
    if x % 2 == 0 then return nil end
    return x
  end)
  eq(#r, 70)
  eq(r[70], bk.null)
  eq(r[69], 69)
end)

test("parallelMap: the first block error in element order is raised unchanged", function()
  local t = list(120)
  local okCall, err = pcall(bk.parallelMap, t, function(x)
    local s = 0
    for i = 1, 20000 do s = s + i % 3 end
    if x >= 80 then error({ at = x }) end
    return x
  end)
  eq(okCall, false)
  eq(type(err), "table")
  eq(err.at, 80)
  local _, err2 = pcall(bk.parallelMap, t, function(x)
    local s = 0
    for i = 1, 20000 do s = s + i % 3 end
    if x == 100 then error("at 100", 0) end
    return x
  end)
  eq(err2, "at 100")
end)

test("apply: every element is visited on the pool (a channel collects them)", function()
  local ch = bk.channel()
  bk.apply(list(64), function(x)
    local s = 0
    for i = 1, 20000 do s = s + i % 3 end
    ch:send(x)
  end)
  local seen = {}
  for _ = 1, 64 do seen[#seen + 1] = ch:receive(1) end
  eq(ch:receive(0), nil)
  table.sort(seen)
  deepEq(seen, list(64))
end)

test("apply / parallelMap: a block holding a table of its own runs in the caller, in order", function()
  local acc = {}
  bk.apply(list(100), function(x)
    local s = 0
    for i = 1, 2000 do s = s + i end
    acc[#acc + 1] = x
  end)
  deepEq(acc, list(100))
  local seen = {}
  local r = bk.parallelMap(list(50), function(x) seen[#seen + 1] = x return bk.isWorker() end)
  eq(#seen, 50)
  eq(r[50], false)
  local co = coroutine.create(function() end)
  local r2 = bk.parallelMap(list(50), function(x)
    local s = 0
    for i = 1, 20000 do s = s + i % 3 end
    return co and bk.isWorker()
  end)
  eq(r2[50], false)
end)

test("apply: a heavy block that adds into an upvalue keeps every addition", function()
  -- Heavy enough for the pool, but a copy there would add into its own 'sum': it runs here.
  local sum = 0
  bk.apply(list(64), function(x)
    local s = 0
    for i = 1, 20000 do s = s + i % 3 end
    sum = sum + x
  end)
  eq(sum, 64 * 65 // 2)
end)

test("apply: a heavy block over element tables, or element functions that count, loses no change", function()
  -- On the pool the block would get copies of the elements: apply keeps such work in the caller.
  local items = {}
  for i = 1, 64 do items[i] = { n = i } end
  bk.apply(items, function(t)
    local s = 0
    for i = 1, 20000 do s = s + i % 3 end
    t.done = true
  end)
  local done = 0
  for i = 1, 64 do if items[i].done then done = done + 1 end end
  eq(done, 64)
  local lists = {}
  for i = 1, 64 do lists[i] = {} for j = 1, 300 do lists[i][j] = (j * 7919) % 301 end end
  bk.apply(lists, table.sort)
  local sorted = 0
  for i = 1, 64 do if lists[i][1] <= lists[i][2] and lists[i][299] <= lists[i][300] then sorted = sorted + 1 end end
  eq(sorted, 64)
  local hits = 0
  local fns = {}
  for i = 1, 64 do fns[i] = function() local s = 0 for k = 1, 20000 do s = s + k % 3 end hits = hits + 1 end end
  bk.apply(fns, function(g) g() end)
  eq(hits, 64)
  -- Frozen element tables cannot change: they still go to the pool.
  local frozen = {}
  for i = 1, 64 do frozen[i] = bk.freeze({ n = i }) end
  local ch = bk.channel()
  bk.apply(frozen, function(t)
    local s = 0
    for i = 1, 20000 do s = s + i % 3 end
    ch:send(bk.isWorker())
  end)
  local pooled = 0
  for _ = 1, 64 do if ch:receive(1) then pooled = pooled + 1 end end
  ok(pooled > 0, "frozen elements went to the pool")
end)

test("apply: the element check stops where the walk does, and covers keys and values that cannot cross", function()
  -- A border of 2^40: the walk, and the check, stop at the first nil (element 3).
  local sparse = {}
  for k = 40, 0, -1 do sparse[1 << k] = k end
  eq(rawlen(sparse), 1 << 40)
  local ch = bk.channel()
  bk.apply(sparse, function(x) heavy(1) ch:send(x) end)  -- assigns to no upvalue: it may go to the pool
  local visited = 0
  while ch:receive(0) ~= nil do visited = visited + 1 end
  eq(visited, 2)
  -- Dictionary keys that are tables: a change to them must not go to a copy.
  local dict = {}
  for i = 1, 64 do dict[{ n = i }] = i end
  bk.apply(bk.dictionary(dict), function(k, v) heavy(1) k.marked = true end)
  local marked = 0
  for k in pairs(dict) do if k.marked then marked = marked + 1 end end
  eq(marked, 64)
  -- Elements that cannot cross (coroutines) keep the work in the caller: every one is visited.
  local cos = {}
  for i = 1, 64 do cos[i] = coroutine.create(function() return i end) end
  local seen = 0
  bk.apply(cos, function(co) heavy(1) if coroutine.resume(co) then seen = seen + 1 end end)
  eq(seen, 64)
end)

test("apply / parallelMap: sets and other kinds run as each / map", function()
  local r = bk.parallelMap(bk.set { 1, 2, 3 }, function(x) return x * 10 end)
  local sum = 0
  for _, v in ipairs(r) do sum = sum + v end
  eq(sum, 60)
  raises("bad argument #2 to 'parallelMap' (function expected, got no value)", bk.parallelMap, {})
  raises("bad argument #1 to 'apply' (table expected, got number)", bk.apply, 1, print)
end)

test("workerCount / setWorkerCount", function()
  local before = bk.workerCount()
  ok(before >= 1)
  bk.setWorkerCount(3)
  eq(bk.workerCount(), 3)
  local r = bk.parallelMap(list(90), heavy)
  for i = 1, 90 do eq(r[i][1], i * 2) end
  bk.setWorkerCount(before)
  raises("bad argument #1 to 'setWorkerCount' (worker count must be between 1 and 256)", bk.setWorkerCount, 0)
  raises("bad argument #1 to 'setWorkerCount' (worker count must be between 1 and 256)", bk.setWorkerCount, 257)
  raises("bad argument #1 to 'setWorkerCount' (number expected, got string)", bk.setWorkerCount, "x")
end)

test("the pool is warm: a pool state keeps its globals between calls (the caller's are untouched)", function()
  local before = bk.workerCount()
  bk.setWorkerCount(1)
  local function count(x)
    local s = 0
    for i = 1, 20000 do s = s + i % 3 end
    workersCalls = (workersCalls or 0) + 1
    return workersCalls
  end
  local first = bk.parallelMap(list(40), count)
  local second = bk.parallelMap(list(40), count)
  bk.setWorkerCount(before)
  -- Only the elements that ran in the caller counted here (the pool state's globals are its own).
  local mine = rawget(_G, "workersCalls") or 0
  workersCalls = nil
  ok(mine < 80, "the caller counted " .. mine .. " of 80 calls")
  -- Element 1 (at least) runs in the caller on each call; the pool state's count goes on.
  ok(second[40] > first[40], "second call continued from " .. first[40] .. ", got " .. second[40])
end)

-- MARK: channels

test("channel: values are copied in order; receive times out and reports closed", function()
  local ch = bk.channel()
  local t = { 1 }
  ch:send(t)
  ch:send("two")
  t[1] = 99
  eq(ch.count, 2)
  local got = ch:receive()
  eq(got[1], 1)
  ok(got ~= t)
  eq(ch:receive(), "two")
  local v, why = ch:receive(0.01)
  eq(v, nil)
  eq(why, "timed out")
  ch:send(3)
  ch:close()
  eq(ch.isClosed, true)
  eq(ch:receive(), 3)
  local v2, why2 = ch:receive()
  eq(v2, nil)
  eq(why2, "closed")
  raises("send on a closed channel", ch.send, ch, 1)
end)

test("channel: send waits while full; a worker fills it while the caller drains", function()
  local ch = bk.channel(2)
  eq(ch.capacity, 2)
  local w = bk.worker(function(c)
    for i = 1, 20 do c:send(i) end
    c:close()
    return "sent"
  end, ch)
  local got = {}
  while true do
    local v = ch:receive(5)
    if v == nil then break end
    ok(ch.count <= 2)
    got[#got + 1] = v
  end
  deepEq(got, list(20))
  eq(w:result(), "sent")
end)

test("channel: round trips between the caller and a worker; the same channel on both sides", function()
  local requests, replies = bk.channel(), bk.channel()
  local w = bk.worker(function(inbox, outbox)
    while true do
      local v = inbox:receive()
      if v == nil then return "stopped" end
      outbox:send(v * v)
    end
  end, requests, replies)
  for i = 1, 50 do
    requests:send(i)
    eq(replies:receive(5), i * i)
  end
  requests:close()
  eq(w:result(), "stopped")
  local echo = bk.worker(function(c) return c end, requests)
  eq(echo:result(), requests)
end)

test("channel: bad input", function()
  local ch = bk.channel()
  raises("bad argument #1 to 'channel' (capacity must be at least 1)", bk.channel, 0)
  raises("bad argument #1 to 'channel' (number expected, got string)", bk.channel, "x")
  raises("bad argument #2 to 'receive' (timeout must be a finite number >= 0)", ch.receive, ch, -1)
  raises("bad argument #2 to 'receive' (timeout must be a finite number >= 0)", ch.receive, ch, 0 / 0)
  raises("bad argument #2 to 'send' (value expected)", ch.send, ch)
  raises("bad argument #2 to 'send' (a coroutine cannot cross to another state)", ch.send, ch, coroutine.create(print))
  raises("bad argument #1 to 'send' (bk.Channel expected, got table)", ch.send, {}, 1)
  eq(ch.count, 0)
end)

-- MARK: waiting in tasks (bk.await on workers; channel waits suspend only the calling task)

-- About `seconds` of pure Lua in a worker.
local function busy(seconds)
  return function()
    local start = os.clock()
    while os.clock() - start < seconds do end
    return "busy done"
  end
end

test("await: a worker's results; outside a task the loop runs meanwhile", function()
  local w = bk.worker(function(a, b)
    local start = os.clock()
    while os.clock() - start < 0.05 do end  -- still running when awaited
    return a + b, "two"
  end, 20, 22)
  local ranMeanwhile = false
  bk.performBlock(function() ranMeanwhile = true end, 0)
  local a, b = bk.await(w)
  eq(a, 42)
  eq(b, "two")
  eq(ranMeanwhile, true)
  eq(select("#", bk.await(w)), 2)  -- finished: the same results again, at once
end)

test("await / result() in a task suspend only that task while the worker runs", function()
  local w = bk.worker(busy(0.1))
  local ticks = 0
  local timer = bk.scheduledTimerWithTimeInterval(0.005, function() ticks = ticks + 1 end, true)
  local viaAwait = bk.async(function() return bk.await(w) end)
  local viaResult = bk.async(function() return w:result() end)
  eq(viaAwait.isFinished, false)  -- bk.async returned at the first suspension
  eq(viaResult.isFinished, false)
  eq(bk.await(viaAwait), "busy done")
  eq(bk.await(viaResult), "busy done")
  timer:invalidate()
  ok(ticks >= 3, "the loop ran timers while the tasks waited: " .. ticks)
end)

test("await: a worker's error is raised unchanged in the task; a cancelled worker raises bk.cancelled", function()
  local failing = bk.worker(function() error({ code = 7 }) end)
  local t = bk.async(function() return bk.await(failing) end)
  local okT, err = pcall(bk.await, t)
  eq(okT, false)
  eq(err.code, 7)
  local endless = bk.worker(function() while true do end end)
  local waiting = bk.async(function() return bk.await(endless) end)
  bk.performBlock(function() endless:cancel() end, 0.02)
  local okC, errC = pcall(bk.await, waiting)
  eq(okC, false)
  eq(errC, bk.cancelled)
  eq(endless.isCancelled, true)
end)

test("await: a timeout leaves the worker running; awaitAll and awaitAny take workers", function()
  local slow = bk.worker(busy(0.2))
  local okT, err = pcall(bk.await, slow, 0.01)
  eq(okT, false)
  ok(tostring(err):find("timed out", 1, true), err)
  eq(slow.isFinished, false)
  local all = bk.awaitAll({ bk.worker(function() return 1 end), bk.worker(function() return 2, 3 end) })
  eq(all[1][1], 1)
  eq(all[2].n, 2)
  eq(all[2][2], 3)
  local index, value = bk.awaitAny({ slow, bk.worker(function() return "quick" end) })
  eq(index, 2)
  eq(value, "quick")
  eq(bk.await(slow), "busy done")
end)

test("channel: receive in a task suspends it until a worker sends; other tasks run meanwhile", function()
  local ch = bk.channel()
  local got = {}
  local consumer = bk.async(function()
    while true do
      local v, why = ch:receive()
      if v == nil then return why end
      got[#got + 1] = v
    end
  end)
  eq(consumer.isFinished, false)
  local other = bk.async(function() bk.sleep(0.01) return "other ran" end)
  local producer = bk.worker(function(out)
    for i = 1, 5 do
      out:send(i)
      local start = os.clock()
      while os.clock() - start < 0.005 do end
    end
    out:close()
  end, ch)
  eq(bk.await(other), "other ran")
  eq(bk.await(consumer), "closed")
  eq(table.concat(got, ","), "1,2,3,4,5")
  producer:result()
end)

test("channel: receive with a timeout in a task and outside one gives nil, 'timed out'", function()
  local ch = bk.channel()
  local t = bk.async(function() return ch:receive(0.02) end)
  eq(t.isFinished, false)
  local v, why = bk.await(t)
  eq(v, nil)
  eq(why, "timed out")
  v, why = ch:receive(0.01)
  eq(v, nil)
  eq(why, "timed out")
  why = select(2, ch:receive(0))
  eq(why, "timed out")
end)

test("channel: send on a full channel suspends the task until there is room; closing raises there", function()
  local ch = bk.channel(1)
  local t = bk.async(function()
    ch:send(1)
    ch:send(2)
    return "sent both"
  end)
  eq(t.isFinished, false)
  eq(ch.count, 1)
  eq(ch:receive(), 1)
  eq(bk.await(t), "sent both")
  eq(ch:receive(), 2)
  ch:send(3)
  local blocked = bk.async(function() ch:send(4) end)
  ch:close()
  local okB, err = pcall(bk.await, blocked)
  eq(okB, false)
  ok(tostring(err):find("send on a closed channel", 1, true), err)
end)

test("channel: a cancelled task's wait is dropped (nothing left pending on the loop)", function()
  local ch = bk.channel()
  local t = bk.async(function() return ch:receive() end)
  eq(bk.pending() >= 1, true)  -- the armed wait keeps the loop alive
  t:cancel()
  local okC, err = pcall(bk.await, t)
  eq(okC, false)
  eq(err, bk.cancelled)
  eq(bk.pending(), 0)
  ch:send("later")
  eq(ch:receive(), "later")
end)

test("channel: a wait's error names the script's line (ch:receive, ch:send outside a task)", function()
  local ch = bk.channel(1)
  local where = debug.getinfo(1, "S").short_src
  local line = debug.getinfo(1, "l").currentline
  bk.performBlock(function() bk.stop() end, 0.01)
  local ok, err = pcall(function()
    local v = ch:receive()  -- line + 3 (the caller's line, pcall's, is line + 2)
    return v
  end)
  eq(ok, false)
  eq(err, ("%s:%d: stopped by bk.stop() before it was done"):format(where, line + 3))
  ch:send(1)
  bk.performBlock(function() bk.stop() end, 0.01)
  local okS, errS = pcall(function()
    ch:send(2)  -- line + 11
  end)
  eq(okS, false)
  eq(errS, ("%s:%d: stopped by bk.stop() before it was done"):format(where, line + 11))
end)

-- MARK: sandbox limits (bklua's options, in a child)

local BKLUA = os.getenv("BKLUA")
if not BKLUA then
  print("SKIPPED test_workers: sandbox limits (BKLUA not set)")
else
  test("worker: the parent's sandbox limits and library set apply in the worker", function()
    local function run(options, code)
      local out = shell(BKLUA .. " " .. options .. " -e " .. string.format("%q", code))
      return out
    end
    local out = run("--instruction-limit 1000000",
      "local w = bk.worker(function() while true do end end) print(pcall(w.result, w))")
    ok(out:find("instruction limit exceeded", 1, true), out)
    out = run("--memory-limit 20000000",
      "local w = bk.worker(function() local t = {} for i = 1, 1e8 do t[i] = i end end) print(pcall(w.result, w))")
    ok(out:find("not enough memory", 1, true), out)
    out = run("--sandbox", "print(bk.worker(function() return io == nil, os.execute == nil end):result())")
    ok(out:find("true\ttrue", 1, true), out)
  end)

  test("parallelMap: the caller's time limit stops the blocks on the pool (each job's own budget is fresh)", function()
    -- 40 elements of about 50 ms each over 2 states: each job is well within the 0.5 s limit, the
    -- whole about 1 s. Without the stop passed on, every element would run and 'done' print.
    local out = shell(BKLUA .. " --time-limit 0.5 -e " .. string.format("%q", [[
      bk.setWorkerCount(2)
      local input = {}
      for i = 1, 40 do input[i] = i end
      bk.parallelMap(input, function(x) local t = os.clock() while os.clock() - t < 0.05 do end return x end)
      print("done")]]) .. " 2>&1")
    ok(out:find("time limit exceeded", 1, true), out)
    ok(not out:find("done", 1, true), out)
  end)
end
