-- A C or Swift frame that calls Lua trusts nothing on its stack afterwards (DEVELOPERS.md, boundary
-- rules): blocks that rewrite the slots of the bk frames that called them (debug.setlocal reaches a
-- C function's temporaries), with every hostile value, synchronously, across a yield and across a
-- task's sleep with the collector running in between. Each case runs in a child process
-- (Tests/lua/hardening/walk_frames.lua), so a crash fails the case instead of the runner.

local BKLUA = assert(os.getenv("BKLUA"), "BKLUA must name the bklua binary")
local ULIMIT = os.getenv("BK_NO_ULIMIT") and "" or "ulimit -v 4000000; "
local here = (debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$")) or "Tests/lua"
local SCRIPT = here .. "/hardening/walk_frames.lua"
local MODULE_DIR = os.getenv("BK_MODULE_DIR")

local function stockTest(name, fn)
  if MODULE_DIR then return test(name, fn) end
  print("SKIPPED test_hardening_walk: " .. name .. " (BK_MODULE_DIR is not set; scripts/test sets it)")
end

local function run(mode, stock)
  local command = stock
    and ("LUA_CPATH='" .. MODULE_DIR .. "/?.so;;' timeout 120 lua5.4 -e 'require(\"bk\").installGlobals()' ")
    or ("timeout 120 " .. BKLUA .. " ")
  local out, code = shell(ULIMIT .. command .. SCRIPT .. " " .. mode)
  local reason = code == 124 and "hung (killed after 120 s)"
    or code >= 128 and ("crashed (signal " .. (code - 128) .. ")")
    or code ~= 0 and ("exited with " .. code) or nil
  if reason or not out:find("\ndone\n", 1, true) then
    error(mode .. ": " .. (reason or "no result line") .. "\n" .. out:sub(-3000), 2)
  end
  return out
end

local function changedCount(out) return tonumber(out:match("changed (%d+)")) or 0 end

test("frames: a block rewriting its helper's slots gets a clear error, never a crash (map)", function()
  local out = run("message")
  ok(out:find("map\tfalse\tbk: map's frame was changed while its block ran (debug.setlocal)", 1, true), out)
  ok(out:find("performMap\tfalse\tbk: performMap's frame was changed while its block ran (debug.setlocal)", 1, true), out)
  -- The walk's userdata dropped from its slot across a yield and collected: the continuation
  -- finds it gone and says so (it read the freed walk before).
  ok(out:find("yield\tfalse\tbk: map's frame was changed while its block ran (debug.setlocal)", 1, true), out)
  ok(out:find("error value\tfalse\ttrue", 1, true), out)  -- a block's own error is still unchanged
  ok(out:find("works\t3", 1, true), out)
end)

test("frames: every slot of every bk frame, every hostile value, every collection helper", function()
  local out = run("sync")
  ok(changedCount(out) > 100, out)  -- the rewrites are seen (and named), not silently tolerated
end)

test("frames: rewritten, then the coroutine yields and the collector runs before the resume", function()
  local out = run("yield")
  ok(changedCount(out) > 100, out)
end)

test("frames: rewritten in tasks that sleep while the collector runs", function()
  local out = run("task")
  ok(changedCount(out) > 100, out)
end)

stockTest("frames: the same under stock lua5.4 with bk.so", function()
  for _, mode in ipairs({ "message", "sync", "yield", "task" }) do
    local out = run(mode, true)
    if mode == "message" then
      ok(out:find("map\tfalse\tbk: map's frame was changed", 1, true), out)
      ok(out:find("yield\tfalse\tbk: map's frame was changed", 1, true), out)
    end
  end
end)
