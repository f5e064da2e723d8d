-- bklua's sandbox options: --sandbox, --memory-limit, --instruction-limit, --time-limit.
-- Each limit stops a hostile script with a clear message and exit code 1; without it the same
-- script runs.

local BKLUA = assert(os.getenv("BKLUA"), "BKLUA must name the bklua binary")

local function run(args)
  return shell(BKLUA .. " " .. args)
end

test("--sandbox leaves out io, debug, os.execute, dofile and binary load", function()
  local out, code = run([[--sandbox -e "print(io, debug, os.execute, os.getenv, dofile, loadfile, package.loadlib)"]])
  eq(code, 0)
  eq(out, "nil\tnil\tnil\tnil\tnil\tnil\tnil\n")
  out = run([[--sandbox -e "print(os.time() > 0, type(os.clock()), string.rep('a', 3), math.floor(2.5), require('bk') == bk)"]])
  eq(out, "true\tnumber\taaa\t2\ttrue\n")
  out, code = run([[--sandbox -e "assert(load(string.dump(function() end)))"]])
  eq(code, 1)
  ok(out:find("attempt to load a binary chunk", 1, true), out)
  -- Without --sandbox the same names are there.
  out = run([[-e "print(io ~= nil, debug ~= nil, os.execute ~= nil)"]])
  eq(out, "true\ttrue\ttrue\n")
end)

test("--sandbox: require finds no files", function()
  local dir = os.tmpname()
  os.remove(dir)
  os.execute("mkdir -p " .. dir)
  local f = assert(io.open(dir .. "/evil.lua", "w"))
  f:write("return 'loaded from a file'")
  f:close()
  local out, code = run("-e \"package.path = '" .. dir .. "/?.lua' print((require('evil')))\"")
  eq(code, 0)
  eq(out, "loaded from a file\n")
  out, code = run("--sandbox -e \"package.path = '" .. dir .. "/?.lua' print((require('evil')))\"")
  eq(code, 1)
  ok(out:find("module 'evil' not found", 1, true), out)
  os.execute("rm -rf " .. dir)
end)

test("--instruction-limit stops a runaway loop, also when the script catches the error", function()
  local out, code = run([[--instruction-limit 100000 -e "while true do end"]])
  eq(code, 1)
  ok(out:find("(command line):1: instruction limit exceeded", 1, true), out)
  out, code = run([[--instruction-limit 100000 -e "while true do pcall(function() while true do end end) end"]])
  eq(code, 1)
  ok(out:find("instruction limit exceeded", 1, true), out)
  -- A script inside its budget runs normally.
  out, code = run([[--instruction-limit 100000 -e "local n = 0 for i = 1, 1000 do n = n + i end print(n)"]])
  eq(code, 0)
  eq(out, "500500\n")
end)

test("--instruction-limit tripped in a coroutine, or in a __close handler coroutine.close runs, stops its resumer too", function()
  -- The coroutine's error came back as resume's (or close's) results; its resumer ran on up to its
  -- own next count (1000 instructions) and a short script ended with exit 0.
  local spin = "local n = 0 while true do n = n + 1 end"
  local scripts = {
    "local co = coroutine.create(function() " .. spin .. " end) print(coroutine.resume(co))",
    "local co = coroutine.create(function() local x <close> = setmetatable({}, {__close = function() " ..
      spin .. " end}) coroutine.yield() end) coroutine.resume(co) print(coroutine.close(co))",
  }
  for _, chunk in ipairs(scripts) do
    local out, code = run("--instruction-limit 100000 -e " .. string.format("%q", chunk .. " print('after')"))
    eq(code, 1)
    ok(out:find("instruction limit exceeded", 1, true), out)
    ok(not out:find("after", 1, true), out)
  end
end)

test("--memory-limit stops an allocating script with 'not enough memory'", function()
  local hog = [[-e "local t = {} for i = 1, 1e7 do t[i] = ('x'):rep(32) .. i end print('done')"]]
  local out, code = run("--memory-limit 2000000 " .. hog)
  eq(code, 1)
  ok(out:find("not enough memory", 1, true), out)
  out, code = run([[--memory-limit 2000000 -e "print(#('x'):rep(1000))"]])
  eq(code, 0)
  eq(out, "1000\n")
end)

test("--memory-limit: canParallelize and isTransferable raise their check's memory error, never answer it", function()
  -- The check's own tables ran out near the limit, and the answer was false, "not enough memory",
  -- as if that were something about the block.
  local chunk = [[
local fs = {}
for i = 1, 3000 do local k = i fs[i] = function() return k end end
local chain = function() return 0 end
for i = 1, 190 do local g, h = chain, fs[i] chain = function() return g() + h() end end
local junk = {}
for round = 1, 100000 do
  junk[#junk + 1] = string.rep("x", 1000) .. round
  for _, check in ipairs({ bk.canParallelize, bk.isTransferable }) do
    local ok, a, b = pcall(check, chain)
    if not ok then print("raised", a) return end
    if a ~= true then print("answered", a, b) return end
  end
end
]]
  local out = run("--memory-limit 4000000 " .. tempFile(chunk))
  ok(out:find("raised\tnot enough memory", 1, true), out)
  ok(not out:find("answered", 1, true), out)
end)

test("--time-limit stops a long script", function()
  local out, code = run([[--time-limit 0.2 -e "while true do end"]])
  eq(code, 1)
  ok(out:find("time limit exceeded", 1, true), out)
end)

test("--time-limit also bounds waits on the loop: sleeps, awaits, channels, timers after the script", function()
  -- Each would wait 30 s (or for ever); the budget, one for the whole run, ends each at 0.3 s,
  -- and a pcall cannot catch it and go on.
  for _, chunk in ipairs({
    "bk.sleep(30)",
    "print(pcall(bk.await, bk.async(function() bk.sleep(30) end))) print('went on')",
    "local ch = bk.channel() print(pcall(ch.receive, ch)) print('went on')",
    "bk.async(function() bk.sleep(30) end)",  -- the loop after the script
    "bk.scheduledTimerWithTimeInterval(0.05, function() end, true)",
  }) do
    local out, code = run("--time-limit 0.3 -e " .. string.format("%q", chunk))
    eq(code, 1, out)
    ok(out:find("time limit exceeded", 1, true), out)
    ok(not out:find("went on", 1, true), out)
  end
end)

test("limits combine with --sandbox and scripts with arguments", function()
  local path = os.tmpname()
  local f = assert(io.open(path, "w"))
  f:write("print(select('#', ...), io == nil) while true do end")
  f:close()
  local out, code = run("--sandbox --instruction-limit 5000 " .. path .. " a b")
  os.remove(path)
  eq(code, 1)
  ok(out:find("^2\ttrue\n"), out)
  ok(out:find("instruction limit exceeded", 1, true), out)
end)

test("bad sandbox option values print usage and exit 1", function()
  for _, args in ipairs({ "--memory-limit", "--memory-limit lots", "--instruction-limit -5", "--time-limit x" }) do
    local out, code = run(args .. " -e 'print(1)'")
    eq(code, 1, args)
    ok(out:find("needs a non-negative number", 1, true), args .. ": " .. out)
    ok(out:find("usage: ", 1, true), out)
  end
  local out, code = run("--sandboxed -e 'print(1)'")
  eq(code, 1)
  ok(out:find("unrecognized option '--sandboxed'", 1, true), out)
end)

test("the debugger's options out of their place say where they go", function()
  local out, code = run("-e 'print(1)' --dap")
  eq(code, 1)
  ok(out:find("'--dap' must be the first argument", 1, true), out)
  out, code = run("--dap --sandbox")
  eq(code, 1)
  ok(out:find("--dap takes no other arguments", 1, true), out)
  out, code = run("--dap-listen 0 --time-limit 1 --dap-wait -e 'print(1)'")
  eq(code, 1)
  ok(out:find("'--dap-wait' goes right after --dap-listen's port", 1, true), out)
  -- Refused before the port opens: nothing says it listens.
  for _, args in ipairs({ "--dap-listen 0 --dap-wait --dap-wait -e 'print(1)'",
                          "--dap-listen 0 --profile-rate=50 -e 'print(1)'" }) do
    out, code = run(args)
    eq(code, 1, args)
    ok(not out:find("listening", 1, true), args .. ": " .. out)
    ok(out:find("--dap-wait' goes right after", 1, true) or out:find("needs --profile", 1, true), args .. ": " .. out)
  end
end)
