-- The event loop, host lifetimes and the allocator (DEVELOPERS.md, boundary rules): each case runs
-- in a child process, so a crash or a hang fails the case instead of the runner.

local here = (debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$")) or "Tests/lua"
local scripts = here .. "/hardening/"

-- Under the stock interpreter, with bk.so (BK_MODULE_DIR is set by scripts/test; a run without it
-- says so rather than skip silently).
local MODULE_DIR = os.getenv("BK_MODULE_DIR")
local function stockTest(name, fn)
  -- Sanitizers reserve terabytes of address space: no ceiling can apply under them.
  if os.getenv("BK_NO_ULIMIT") then return print("SKIPPED test_hardening_loop: " .. name .. " (BK_NO_ULIMIT)") end
  if MODULE_DIR then return test(name, fn) end
  print("SKIPPED test_hardening_loop: " .. name .. " (BK_MODULE_DIR is not set; scripts/test sets it)")
end

stockTest("memory: a state recovers once memory is available again (stock lua5.4, bk.so, 1 GB)", function()
  -- The ceiling is the case itself (not BK_NO_ULIMIT's to lift): memory must run out inside bk.set.
  -- Before, a reserve spent by a call that Lua's own error then skipped made the next, unrelated
  -- bk call fail with "not enough memory" after memory was freed, and a reserve that could not be
  -- taken again stayed missing.
  local out, code = shell("ulimit -v 1000000; LUA_CPATH='" .. MODULE_DIR .. "/?.so;;' timeout 300 lua5.4 " ..
    "-e 'require(\"bk\").installGlobals()' " .. scripts .. "loop_oom_recovery.lua")
  eq(code, 0, out)
  ok(out:find("failures\ttrue", 1, true), out)  -- memory really ran out inside bk.set
  ok(out:find("version\ttrue\t", 1, true), out)
  ok(out:find("version again\ttrue\t", 1, true), out)
  ok(out:find("map\ttrue\t3", 1, true), out)
  ok(out:find("set\ttrue\tset", 1, true), out)
end)
