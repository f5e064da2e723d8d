-- Hostile scripts (DEVELOPERS.md, boundary rules): each case runs in a child process, so a crash or
-- a hang fails the case instead of the runner. Cases name the rule they check.

local BKLUA = assert(os.getenv("BKLUA"), "BKLUA must name the bklua binary")
-- A memory ceiling for children (a runaway allocation fails instead of swapping); not under
-- sanitizers, which reserve terabytes of address space (scripts/check-sanitizers sets BK_NO_ULIMIT).
local ULIMIT = os.getenv("BK_NO_ULIMIT") and "" or "ulimit -v 4000000; "
local here = (debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$")) or "Tests/lua"
local scripts = here .. "/hardening/"

local function run(args)
  return shell(ULIMIT .. "timeout 120 " .. BKLUA .. " " .. args)
end

-- Under the stock interpreter, with bk.so (BK_MODULE_DIR is set by scripts/test; a run without it
-- says so rather than skip silently).
local MODULE_DIR = os.getenv("BK_MODULE_DIR")
local function stockTest(name, fn)
  if MODULE_DIR then return test(name, fn) end
  print("SKIPPED test_hardening: " .. name .. " (BK_MODULE_DIR is not set; scripts/test sets it)")
end
local function runStock(args)
  return shell(ULIMIT .. "LUA_CPATH='" .. MODULE_DIR .. "/?.so;;' timeout 120 lua5.4 " ..
    "-e 'require(\"bk\").installGlobals()' " .. args)
end

test("sizes: a table whose #t is 2^40 is the list up to its first nil in every helper, 3000 times over", function()
  local out, code = run(scripts .. "huge_border.lua")
  eq(code, 0, out)
  ok(out:find("border\ttrue", 1, true), out)       -- the table really has a huge border
  ok(out:find("failures\t0\n", 1, true), out)
  ok(out:find("map\t5\t10\t50\tnil", 1, true), out)
  ok(out:find("performSelect\t1\t3\t5\tnil", 1, true), out)
  ok(out:find("after\ttrue", 1, true), out)          -- no leaked nesting: bk still works
end)

stockTest("sizes: the same under stock lua5.4 with bk.so", function()
  local out, code = runStock(scripts .. "huge_border.lua")
  eq(code, 0, out)
  ok(out:find("failures\t0\n", 1, true), out)
  ok(out:find("after\ttrue", 1, true), out)
end)

stockTest("memory: bk.so keeps working when the process is short of memory", function()
  -- 1 GB of address space: the interpreter's own allocations fail long before bk's reserve is
  -- needed; every failure is an ordinary Lua error, and bk works again once memory is freed.
  local out, code = shell("ulimit -v 1000000; LUA_CPATH='" .. MODULE_DIR .. "/?.so;;' timeout 120 lua5.4 -e '" ..
    "local bk = require(\"bk\") local big = {} local failures = 0 " ..
    "for i = 1, 100000 do local ok = pcall(function() big[#big + 1] = string.rep(\"x\", 1 << 20) .. i end) " ..
    "  if not ok then failures = failures + 1 " ..
    "    for j = 1, 50 do pcall(bk.map, {1, 2, 3}, function(x) return x end) pcall(bk.set, {1, 2}) end " ..
    "    if failures > 20 then break end end end " ..
    "big = nil collectgarbage() " ..
    "print(\"failures\", failures > 0, #bk.map({1, 2, 3}, function(x) return x end))'")
  eq(code, 0, out)
  ok(out:find("failures\ttrue\t3", 1, true), out)
end)

test("memory: a cap holds within a small factor while a helper builds a big result in Swift", function()
  local out, code = run("--memory-limit 16000000 " .. scripts .. "indexset_cap.lua")
  eq(code, 0, out)
  ok(out:find("indexSet\tfalse\tnot enough memory", 1, true), out)
  ok(out:find("true\n", 1, true), out)  -- grew less than 80 MB (it grew ~255 MB before)
end)

test("bridged objects are known by their memory, not by a metatable field a script can set", function()
  local out, code = run(scripts .. "forged_class.lua")
  eq(code, 0, out)
  ok(out:find("observe=false", 1, true), out)
  ok(out:find("invalidate=false", 1, true), out)
  ok(out:find("disguised invalidate=false disguised fire=false", 1, true), out)
  ok(out:find("replaced upvalue=false", 1, true), out)
  ok(out:find("alive\ttrue", 1, true), out)
  ok(out:find("stdout still works", 1, true), out)
end)

test("close: finalizers calling bk while the state closes get a clear error", function()
  local out, code = run(scripts .. "finalizer_at_close.lua")
  eq(code, 0, out)
  ok(out:find("performBlock at close:\tfalse\tcannot call 'performBlock' while the Lua state is closing", 1, true), out)
  ok(out:find("probed", 1, true), out)
end)

test("close: os.exit(true, true) closes as the host does: finalizers get the same clear error", function()
  -- Made during lua_close, a bridge object would never be finalized (its Swift half would leak).
  local out, code = run([[-e "X = setmetatable({}, {__gc = function() print('gc', pcall(bk.invocationWithTarget, 1, print)) end}) bk.performBlock(print, 10) os.exit(true, true)"]])
  eq(code, 0, out)
  ok(out:find("gc\tfalse\tcannot call 'invocationWithTarget' while the Lua state is closing", 1, true), out)
  local _, status = run([[-e "os.exit(3)"]])
  eq(status, 3, "os.exit keeps its exit code")
end)

stockTest("close: stock lua5.4 closing with finalizers that call bk", function()
  local out, code = runStock([[-e "X = setmetatable({}, {__gc = function() print('gc', pcall(bk.map, {1}, print)) end}) bk.performBlock(print, 0)" -e "bk.run()"]])
  eq(code, 0, out)
  ok(out:find("gc\t", 1, true), out)
  local exited = runStock([[-e "X = setmetatable({}, {__gc = function() print('gc', pcall(bk.map, {1}, print)) end}) os.exit(0, true)"]])
  ok(exited:find("gc\tfalse\tcannot call 'map' while the Lua state is closing", 1, true), exited)
  -- An object made before require "bk" is finalized after bk's functions were released.
  local early = shell(ULIMIT .. "LUA_CPATH='" .. MODULE_DIR .. "/?.so;;' timeout 120 lua5.4 " ..
    [[-e "X = setmetatable({}, {__gc = function() print('early', pcall(bk.map, {1}, print)) end})" -e "bk = require 'bk'"]])
  ok(early:find("early\tfalse\tcannot call 'map' while the Lua state is closing", 1, true), early)
end)

test("a block's error leaves every helper unchanged: values, levels and tables", function()
  local marker = {}
  local function raise(v, level) return function() error(v, level) end end
  local cases = {
    { bk.map, { 1 } }, { bk.each, { 1 } }, { bk.select, { 1 } }, { bk.reject, { 1 } },
    { bk.match, { 1 } }, { bk.any, { 1 } }, { bk.all, { 1 } }, { bk.none, { 1 } },
    { bk.performMap, { 1 } }, { bk.performSelect, { 1 } }, { bk.map, { a = 1 } }, { bk.map, bk.set{ 1 } },
  }
  for i, case in ipairs(cases) do
    local okCall, err = pcall(case[1], case[2], raise(42))
    eq(okCall, false, "case " .. i)
    eq(err, 42, "case " .. i)
    local _, text = pcall(case[1], case[2], raise("x", 0))
    eq(text, "x", "case " .. i)
    local _, same = pcall(case[1], case[2], raise(marker))
    ok(same == marker, "case " .. i .. ": the same table")
  end
  local _, reduced = pcall(bk.reduce, { 1 }, 0, function() error("r", 0) end)
  eq(reduced, "r")
  local _, positioned = pcall(bk.map, { 1 }, function() error("here") end)
  ok(positioned:match("^.-test_hardening%.lua:%d+: here$"), positioned)
end)

test("a block's error reported later keeps the block's traceback", function()
  local out, code = run([[-e "bk.performBlock(function() bk.each({1}, function() local function inner() error('deep') end inner() end) end, 0)"]])
  eq(code, 1, out)  -- a reported error fails bklua's run
  ok(out:find("deep", 1, true), out)
  ok(out:find("in local 'inner'", 1, true), out)  -- recorded where the block raised, below bk.each
end)

test("bk.installGlobals(bk) adds bk_NAME once, never bk_bk_NAME", function()
  local env = {}
  bk.installGlobals(env)
  ok(env.bk_map == bk.map)
  local out, code = run([[-e "bk.installGlobals(bk) bk.installGlobals(bk) print(bk.bk_map == bk.map, bk.bk_bk_map)"]])
  eq(code, 0, out)
  eq(out, "true\tnil\n")
end)
