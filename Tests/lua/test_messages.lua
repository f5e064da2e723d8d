-- Messages a new user meets: standard wording for bad arguments that look fine at first sight
-- (a single task for a list, a value that cannot cross to a worker), the hint when a worker reads
-- a global of the caller, and where an awaited task's error comes from.

local BKLUA = assert(os.getenv("BKLUA"), "BKLUA must name the bklua binary")

-- MARK: awaitAll / awaitAny take a list

test("awaitAll and awaitAny refuse a single task (braces forgotten)", function()
  local t = bk.async(function() bk.sleep(0.01) return 1 end)
  raises("bad argument #1 to 'awaitAll' (list of awaitables expected, got bk.Task (write {x} for one))", bk.awaitAll, t)
  raises("bad argument #1 to 'awaitAny' (list of awaitables expected, got bk.Task (write {x} for one))", bk.awaitAny, t)
  eq(bk.awaitAll({ t })[1][1], 1, "the list form still works")
end)

test("awaitAll and awaitAny refuse a table that is not a list", function()
  local t = bk.async(function() return 1 end)
  raises("bad argument #1 to 'awaitAll' (list of awaitables expected, got a table with key 'job')", bk.awaitAll, { job = t })
  raises("bad argument #1 to 'awaitAny' (list of awaitables expected, got a table with key 'job')", bk.awaitAny, { job = t })
  raises("bad argument #1 to 'awaitAll' (table expected, got bk.BlockHandle)", bk.awaitAll, bk.performBlock(function() end, 0))
  eq(#bk.awaitAll({}), 0, "an empty list is a list")
end)

-- MARK: values that cannot cross to another state

test("ch:send(coroutine) is a bad argument in standard wording", function()
  local ch = bk.channel()
  raises("bad argument #1 to 'send' (a coroutine cannot cross to another state)", function() ch:send(coroutine.create(print)) end)
  local err = raises("bad argument #1 to 'send'", function() ch:send({ x = io.stdout }) end)
  ok(err:find("(field 'x' of the value is a FILE*, which cannot cross to another state)", 1, true), err)
  ch:send(1)
  eq(ch:receive(0), 1, "the channel still works")
end)

test("bk.worker(f, co) names the argument that cannot cross", function()
  local co = coroutine.create(print)
  raises("bad argument #2 to 'worker' (a coroutine cannot cross to another state)", bk.worker, print, co)
  raises("bad argument #3 to 'worker' (field 'x' of the value is a FILE*, which cannot cross to another state)",
    bk.worker, print, 1, { x = io.stdout })
  local err = raises("bad argument #1 to 'worker' (upvalue 'co' of the function is a coroutine, which cannot cross",
    bk.worker, function() return co end)
  ok(not err:find("expected, got", 1, true), err)
end)

-- MARK: globals do not cross to a worker
-- luacheck: globals workerConfig noSuchGlobalAnywhere (the point: a global the worker reads)

test("a worker reading a global only the caller has is told that globals do not cross", function()
  workerConfig = { x = 1 }
  local w = bk.worker(function() return workerConfig.x end)
  local okResult, err = pcall(bk.await, w)
  workerConfig = nil
  eq(okResult, false)
  ok(err:find("attempt to index a nil value (global 'workerConfig')", 1, true), err)
  ok(err:find("globals do not cross to a worker: pass the value as an argument, or capture it in a local", 1, true), err)
end)

test("no hint when the caller has no such global either", function()
  local w = bk.worker(function() return noSuchGlobalAnywhere.x end)
  local _, err = pcall(bk.await, w)
  ok(err:find("(global 'noSuchGlobalAnywhere')", 1, true), err)
  ok(not err:find("globals do not cross", 1, true), err)
end)

-- MARK: an awaited task's error

local function runScript(text)
  local path = os.tmpname()
  local f = assert(io.open(path, "w"))
  f:write(text)
  f:close()
  local out, code = shell(BKLUA .. " " .. path)
  os.remove(path)
  return out, code, path
end

test("a task's error raised by bk.await shows where it was raised and the line that awaited it", function()
  local out, code, path = runScript([[
local function fetch()
  bk.sleep(0.01)
  error("server error")
end
local t = bk.async(fetch)
bk.sleep(0.05)
local _ = 1
bk.await(t)
]])
  eq(code, 1)
  local name = path:match("[^/]*$")
  ok(out:find(name .. ":3: server error", 1, true), out)
  ok(out:find(name .. ":3: in", 1, true), "where it was raised:\n" .. out)
  ok(out:find(name .. ":8: in main chunk", 1, true), "the line that awaited it:\n" .. out)
  ok(not out:find("bk/TaskEngine.lua", 1, true), "no engine frames:\n" .. out)
end)

test("awaited from a task awaited in turn: every await is in the report, no engine frames", function()
  local out, code, path = runScript([[
local inner = bk.async(function() bk.sleep(0.01) error("deep failure") end)
local outer = bk.async(function()
  local value = bk.await(inner)
  return value
end)
bk.await(outer)
]])
  eq(code, 1)
  local name = path:match("[^/]*$")
  ok(out:find(name .. ":1: deep failure", 1, true), out)
  ok(out:find(name .. ":3: in", 1, true), "the task's await:\n" .. out)
  ok(out:find(name .. ":6: in main chunk", 1, true), "the main chunk's await:\n" .. out)
  ok(not out:find("bk/TaskEngine.lua", 1, true), "no engine frames:\n" .. out)
end)
