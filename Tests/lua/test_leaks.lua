-- Leak checks: a million lifecycles each of performBlock+cancel, timer create+invalidate,
-- observe+remove and dynamic delegate create+drop (plus shorter runs of variants), each in a child
-- bklua (Tests/lua/leaks/lifecycles.lua) measured after a warm-up of 200,000.
--
-- Tolerances: Lua memory may grow by at most 256 KiB (a leaked Lua object per lifecycle would be
-- >= 16 MB over a million) and RSS by at most 8 MiB (a leaked Swift object per lifecycle, >= 32
-- bytes, would be >= 32 MB; the slack is malloc's own high-water marks). Nothing may stay pending.
-- A lifecycle whose functions this build does not export is reported as SKIPPED, never silently.

local BKLUA = assert(os.getenv("BKLUA"), "BKLUA must name the bklua binary")
-- A memory ceiling for children (a runaway allocation fails instead of swapping); not under
-- sanitizers, which reserve terabytes of address space (scripts/check-sanitizers sets BK_NO_ULIMIT).
local ULIMIT = os.getenv("BK_NO_ULIMIT") and "" or "ulimit -v 4000000; "
local here = (debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$")) or "Tests/lua"
local CHILD = here .. "/leaks/lifecycles.lua"
local LUA_KB, RSS_KB = 256, 8 * 1024

local checks = {
  { "performBlock", 1000000, { "performBlock" } },
  { "timer", 1000000, { "scheduledTimerWithTimeInterval" } },
  { "observe", 1000000, { "addObserverForKeyPath", "removeObserverForKeyPath" } },
  { "dynamicDelegate", 1000000, { "dynamicDelegateForProtocol", "protocol" } },
  { "performBlockWithObject", 200000, { "performBlock", "cancelBlock" } },
  { "unscheduledTimer", 200000, { "timerWithTimeInterval" } },
  { "observeAndDrop", 200000, { "addObserverForKeyPath" } },
  -- Workers: whole workers cost milliseconds each, so fewer (with as many warm-up runs).
  { "worker", 3000, { "worker" }, 3000 },
  { "workerRoundTrip", 100000, { "worker", "channel" }, 100000 },
  { "channelMessage", 1000000, { "channel" } },
  { "taskChannelWait", 200000, { "channel", "async" } },
  { "taskChannelTimeout", 100000, { "channel", "async" } },
  { "taskSleep", 200000, { "async", "sleep" } },
  { "poolChunks", 5000, { "parallelMap" }, 5000 },
}

for _, check in ipairs(checks) do
  local kind, count, needs, warmup = check[1], check[2], check[3], check[4]
  local missing = {}
  for _, name in ipairs(needs) do if type(bk[name]) ~= "function" then missing[#missing + 1] = "bk." .. name end end
  if #missing > 0 then
    print("SKIPPED test_leaks: " .. kind .. " (" .. table.concat(missing, ", ") .. " not exported by this build)")
  else
    test(kind .. ": " .. count .. " lifecycles leave Lua memory and RSS at baseline", function()
      local out, code = shell(ULIMIT .. "timeout 600 " .. BKLUA .. " " .. CHILD .. " " .. kind .. " " .. count .. " " .. (warmup or ""))
      eq(code, 0, out)
      local lua, rss, pending = out:match("lua_kb=(%S+) rss_kb=(%S+) pending=(%S+)")
      ok(lua, "no measurement in: " .. out)
      lua, rss, pending = tonumber(lua), tonumber(rss), tonumber(pending)
      ok(lua <= LUA_KB, string.format("%s: Lua memory grew by %.1f KiB (tolerance %d)", kind, lua, LUA_KB))
      ok(rss <= RSS_KB, string.format("%s: RSS grew by %d KiB (tolerance %d)", kind, rss, RSS_KB))
      eq(pending, 0, kind .. ": work left pending")
    end)
  end
end

test("the check sees a leak: a lifecycle that keeps its handles grows past the tolerance", function()
  local out, code = shell(BKLUA .. " " .. CHILD .. " leakyControl 200000")
  eq(code, 0, out)
  local lua = tonumber(out:match("lua_kb=(%S+)"))
  ok(lua and lua > LUA_KB, "the control did not register as a leak: " .. out)
end)
