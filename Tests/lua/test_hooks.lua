-- The hook hub: a script's own debug.sethook lives beside the bridge's hooks (the sandbox's limits,
-- the profiler, the debugger) instead of replacing them, and coroutine.resume/wrap, which the hub
-- replaces to follow coroutines, behave exactly as Lua's own. Behaviour is compared with stock
-- lua5.4 running the same script with its own debug and coroutine libraries.

local BKLUA = assert(os.getenv("BKLUA"), "BKLUA must name the bklua binary")


local function both(source)
  local path = tempFile(source)
  local ours, ourCode = shell(BKLUA .. " " .. path)
  local stock, stockCode = shell("lua5.4 " .. path)
  os.remove(path)
  return ours, stock, ourCode, stockCode
end

local function sameAsStock(source)
  local ours, stock, ourCode, stockCode = both(source)
  eq(ours:gsub("0x%x+", "ADDR"), (stock:gsub("0x%x+", "ADDR")))
  eq(ourCode, stockCode)
  return ours
end

-- Runs bklua with `run` (a script's path, or -e and a chunk) under --time-limit, then under
-- --instruction-limit (`instructions`, default 200000): each must stop it with its own error.
local function limitsStop(run, what, instructions)
  local limits = {
    { "--time-limit 0.3", "time limit exceeded" },
    { "--instruction-limit " .. (instructions or 200000), "instruction limit exceeded" },
  }
  for _, limit in ipairs(limits) do
    local out, code = shell("timeout 20 " .. BKLUA .. " " .. limit[1] .. " " .. run)
    eq(code, 1, what)
    ok(out:find(limit[2], 1, true), what .. ": " .. out)
  end
end

test("a script's debug.sethook does not switch off --time-limit or --instruction-limit", function()
  -- It used to: the script's hook replaced the limits' count hook, so these ran until killed.
  local hooks = {
    [[debug.sethook(function() end, "c")]],
    [[debug.sethook(function() end, "", 1)]],
    [[debug.sethook(function() end, "l")]],
    [[debug.sethook(function() end, "c") debug.sethook()]],
    [[debug.sethook(coroutine.running(), function() end, "r", 7)]],
  }
  for _, hook in ipairs(hooks) do
    limitsStop("-e " .. string.format("%q", hook .. " while true do end"), hook)
  end
  -- Also inside a coroutine, and in a task.
  local chunk = string.format("%q", [[debug.sethook(function() end, "l")
    coroutine.wrap(function() debug.sethook(function() end, "c") while true do end end)()]])
  local out, code = shell("timeout 20 " .. BKLUA .. " --time-limit 0.3 -e " .. chunk)
  eq(code, 1)
  ok(out:find("time limit exceeded", 1, true), out)
  chunk = string.format("%q", [[bk.await(bk.async(function() debug.sethook(function() end, "", 3) while true do end end))]])
  out, code = shell("timeout 20 " .. BKLUA .. " --time-limit 0.3 -e " .. chunk)
  eq(code, 1)
  ok(out:find("time limit exceeded", 1, true), out)
end)

test("a script's one-instruction line hook does not hide the limits' count inside it", function()
  -- `while true do end` is one instruction per line event and the hook's body one more, so Lua's
  -- count (even) always ran out inside the hook, where hooks are off and the event is dropped.
  local scripts = {
    "debug.sethook(function() end, \"l\")\nwhile true do end\n",
    "local co = coroutine.create(function()\n  while true do end\nend)\n" ..
      "debug.sethook(co, function() end, \"l\")\nassert(not coroutine.resume(co))\nwhile true do end\n",
  }
  for _, script in ipairs(scripts) do
    local path = tempFile(script)
    limitsStop(path, script)
    os.remove(path)
  end
end)

test("a looping xpcall message handler does not outlive the limits outside the sandbox", function()
  -- A limit's error is raised in the hook, where hooks are off, and the handler runs before the
  -- stack unwinds: the limits guard xpcall's handler as the sandbox does.
  limitsStop("-e " .. string.format("%q",
    "while true do xpcall(function() while true do end end, function() while true do end end) end"), "xpcall")
  -- Without limits xpcall is Lua's own.
  local out = shell(BKLUA .. " -e " .. string.format("%q",
    "print(xpcall(error, function(m) return 'handled ' .. m end, 'x'))"))
  eq(out, "false\thandled x\n")
end)

test("changing hooks in a loop does not keep the limits or a cancel from stopping it", function()
  -- Each lua_sethook restarts the count, so a loop that changed its hook more often than every
  -- 1000 instructions never reached a count event: no limit or interrupt was ever checked.
  local loops = {
    [[local f = function() end while true do debug.sethook(f, "l") debug.sethook() end]],
    [[local f = function() end while true do debug.sethook(f, "c", 5000) debug.sethook(f, "r", 3000) end]],
    [[coroutine.wrap(function() local f = function() end
        while true do debug.sethook(f, "l") debug.sethook() end end)()]],
    [[bk.await(bk.async(function() local f = function() end
        while true do debug.sethook(f, "l") debug.sethook() end end))]],
    [[bk.parallelMap({1, 2, 3}, function() local f = function() end
        while true do debug.sethook(f, "l") debug.sethook() end end)]],
  }
  for _, loop in ipairs(loops) do
    limitsStop("-e " .. string.format("%q", loop), loop, 20000)
  end
  -- A worker's cancel (an interrupt set from another thread).
  local chunk = string.format("%q", [[local w = bk.worker(function() local f = function() end
      while true do debug.sethook(f, "l") debug.sethook() end end)
    bk.sleep(0.2) w:cancel() print(pcall(bk.await, w))]])
  local out, code = shell("timeout 20 " .. BKLUA .. " -e " .. chunk)
  eq(code, 0, out)
  eq(out, "false\tcancelled\n")
end)

test("debug.sethook's count is an int as in Lua: negative or past 2^31 it wraps, as stock's", function()
  sameAsStock([[
    local f = function() end
    debug.sethook(f, "l", -5)
    print(select(2, debug.gethook()))
    debug.sethook(f, "", -5)
    print(debug.gethook())
    debug.sethook(f, "l", 2^31)
    print(select(2, debug.gethook()))
    local n = 0
    debug.sethook(function() n = n + 1 end, "", 2^32 + 3)
    for i = 1, 100 do end
    debug.sethook()
    print(n)
  ]])
end)

test("debug.sethook and debug.gethook behave as Lua's own", function()
  local out = sameAsStock([[
    local events = {}
    local function f(x) return x + 1 end
    local function g(x) return f(x) end
    debug.sethook(function(event, line) events[#events + 1] = event .. ":" .. tostring(line) end, "crl")
    g(1)
    debug.sethook()
    print(table.concat(events, " "))
    print(debug.gethook())

    -- Count events: exactly one per `count` instructions.
    local n = 0
    debug.sethook(function(event) n = n + 1 end, "", 1)
    local s = 0
    for i = 1, 100 do s = s + i end
    debug.sethook()
    print("count 1", n)
    n = 0
    debug.sethook(function(event) n = n + 1 end, "", 50)
    for i = 1, 1000 do s = s + i end
    debug.sethook()
    print("count 50", n)

    -- What gethook reports, and hooks per thread.
    local function h() end
    debug.sethook(h, "cr", 5)
    local fn, mask, count = debug.gethook()
    print(fn == h, mask, count)
    local co = coroutine.create(function() local a = 1 coroutine.yield(a) return a + 1 end)
    print("co before", (debug.gethook(co)))
    local inside = 0
    debug.sethook(co, function() inside = inside + 1 end, "l")
    local fn2, mask2 = debug.gethook(co)
    print("co hook", type(fn2), mask2)
    print(coroutine.resume(co))
    print(coroutine.resume(co))
    print("inside", inside)
    debug.sethook()
    print(debug.gethook())
    print(pcall(debug.sethook, print, 5))
    print(pcall(debug.sethook, 5, "l"))
    -- A hook's error unwinds the hooked code.
    print(pcall(function()
      debug.sethook(function() debug.sethook() error("from the hook") end, "l")
      local x = 1
      return x
    end))
    print(pcall(function()
      debug.sethook(function() debug.sethook() error({code = 7}) end, "c")
      print("not reached")
    end))
  ]])
  ok(out:find("call:nil", 1, true), out)
  ok(out:find("count 1\t", 1, true), out)
end)

test("a script's hook runs beside the limits' hook, with the same events as without limits", function()
  local source = [[
    local lines, counts = 0, 0
    debug.sethook(function(event) if event == "line" then lines = lines + 1 else counts = counts + 1 end end, "l", 7)
    local s = 0
    for i = 1, 2000 do s = s + i end
    debug.sethook()
    print(lines, counts)
  ]]
  local path = tempFile(source)
  local plain = shell(BKLUA .. " " .. path)
  local limited = shell(BKLUA .. " --instruction-limit 100000000 --time-limit 60 " .. path)
  local stock = shell("lua5.4 " .. path)
  os.remove(path)
  eq(plain, stock)
  eq(limited, stock)
end)

test("coroutine.resume and coroutine.wrap keep Lua's behaviour", function()
  sameAsStock([[
    local co = coroutine.create(function(a, b)
      local c = coroutine.yield(a + b)
      local d, e = coroutine.yield(c * 2)
      return d, e, "done"
    end)
    print(coroutine.resume(co, 1, 2))
    print(coroutine.resume(co, 10))
    print(coroutine.resume(co, "x", "y"))
    print(coroutine.resume(co))
    print(coroutine.status(co))
    print(pcall(coroutine.resume, 42))
    print(pcall(coroutine.resume))
    print(coroutine.resume(coroutine.running()))
    local failing = coroutine.create(function() error({code = 1}) end)
    local okr, e = coroutine.resume(failing)
    print(okr, type(e), e.code, coroutine.status(failing))
    local w = coroutine.wrap(function(x)
      local y = coroutine.yield(x + 1)
      error("boom " .. y)
    end)
    print(w(1))
    print(pcall(w, 5))
    print(pcall(w))
    local wt = coroutine.wrap(function() error(setmetatable({}, {__tostring = function() return "table error" end})) end)
    local okw, ew = pcall(wt)
    print(okw, tostring(ew))
    print(pcall(coroutine.wrap, 1))
    -- Yields across pcall inside a wrapped coroutine, and to-be-closed variables closed on error.
    local gen = coroutine.wrap(function()
      for i = 1, 3 do
        local okp = pcall(function() coroutine.yield(i) end)
      end
      return "end"
    end)
    print(gen(), gen(), gen(), gen())
    local closed = false
    local tbc = coroutine.wrap(function()
      local guard <close> = setmetatable({}, {__close = function() closed = true end})
      coroutine.yield(1)
      error("after yield")
    end)
    tbc()
    print(pcall(tbc), closed)
    print(select("#", coroutine.resume(coroutine.create(function() return end))))
    print(coroutine.isyieldable(), coroutine.wrap(function() return coroutine.isyieldable() end)())
  ]])
end)
