-- Code that touches two Lua states (issue [N] 3, 5, _ENV; the GC-storm net): each case runs a
-- script of hardening/ in a child process with a timeout, so a crash or a hang fails the case.
-- Rules: a copy runs no finalizers (Transfer.c stops both collectors), no non-recursive lock is
-- held across an allocation, and w:result() copies once (DEVELOPERS.md, boundary rules).

local BKLUA = assert(os.getenv("BKLUA"), "BKLUA must name the bklua binary")
local ULIMIT = os.getenv("BK_NO_ULIMIT") and "" or "ulimit -v 4000000; "
local here = (debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$")) or "Tests/lua"
local scripts = here .. "/hardening/"
local MODULE_DIR = os.getenv("BK_MODULE_DIR")

local function run(script)
  return shell(ULIMIT .. "timeout 120 " .. BKLUA .. " " .. scripts .. script .. " 2>&1")
end
local function runStock(script)
  return shell(ULIMIT .. "LUA_CPATH='" .. MODULE_DIR .. "/?.so;;' timeout 120 lua5.4 " ..
    "-e 'require(\"bk\").installGlobals()' " .. scripts .. script .. " 2>&1")
end

-- Each case in bklua, then under the stock interpreter with bk.so.
local function both(name, script, check)
  test(name, function()
    local out, code = run(script)
    eq(code, 0, out)
    check(out)
  end)
  if MODULE_DIR then
    test(name .. " (stock lua5.4 + bk.so)", function()
      local out, code = runStock(script)
      eq(code, 0, out)
      check(out)
    end)
  else
    print("SKIPPED test_hardening_cross: " .. name .. " under lua5.4 (BK_MODULE_DIR is not set; scripts/test sets it)")
  end
end

both("w:result() from finalizers while the first call copies 20,000 tables: one copy, every call gets them",
  "cross_result_gc.lua", function(out)
    ok(out:find("outer\t20000\t1\t20000\n", 1, true), out)  -- crashed (SIGSEGV / PANIC) before
    ok(out:find("inner\t20001:true:1\t400\n", 1, true), out) -- every inner call: true + the results
    ok(not out:find("inner\t%d+:false"), out)
    ok(out:find("done", 1, true), out)
  end)

both("a finalizer reading ch.count while ch:receive() copies a large value in does not deadlock",
  "cross_channel_gc.lua", function(out)
    for round = 1, 3 do ok(out:find("received\t" .. round .. "\t20000\t20000\n", 1, true), out) end
    ok(out:find("task received\tlate", 1, true), out)
    ok(out:find("finalizers saw the channel\ttrue", 1, true), out)
  end)

both("a function with a restricted _ENV keeps it (copied) in a worker; the caller's globals become the worker's",
  "cross_env.lua", function(out)
    ok(out:find("restricted\tsandboxed\ttrue\tfunction\ttrue\n", 1, true), out)  -- got the worker's globals before
    ok(out:find("plain\tnil\ttrue\ttrue\n", 1, true), out)
    ok(out:find("channel\tvia channel\ttrue\n", 1, true), out)
    ok(out:find("parallelMap\t10\t20\t30\n", 1, true), out)
    ok(out:find("inheriting\tmine\ttrue\tfunction\ttrue\n", 1, true), out)
  end)

both("GC storm: finalizers calling channels and workers during transfers, sends, receives and results",
  "cross_gc_storm.lua", function(out)
    ok(out:find("finalizer calls\ttrue\terrors\t0\n", 1, true), out)
    ok(out:find("wrong\t0\n", 1, true), out)
    ok(out:find("storm done", 1, true), out)
  end)
