-- Hostile scripts against the tasks engine and its awaitables (DEVELOPERS.md, "Tasks and
-- awaitables"): waits that time out or are cancelled leave nothing behind, waiter bookkeeping is
-- O(1), unref() holds for blocks of other queues, a cancellation ends its task wherever it
-- suspended, the engine names the function called while the state closes, and a task's coroutine in
-- a script's hands cannot strand its task. Each case runs in a child process (a hang or a runaway
-- fails the case, not the runner); under stock lua5.4 with bk.so too.

local BKLUA = assert(os.getenv("BKLUA"), "BKLUA must name the bklua binary")
local ULIMIT = os.getenv("BK_NO_ULIMIT") and "" or "ulimit -v 4000000; "
local here = (debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$")) or "Tests/lua"
local scripts = here .. "/hardening/"
-- Generous: the complexity cases take ~2 s of CPU in a debug build and ran for minutes before.
local TIMEOUT = "timeout 120 "

local function run(args)
  return shell(ULIMIT .. TIMEOUT .. BKLUA .. " " .. args)
end

local MODULE_DIR = os.getenv("BK_MODULE_DIR")
local function stockTest(name, fn)
  if MODULE_DIR then return test(name, fn) end
  print("SKIPPED test_hardening_tasks: " .. name .. " (BK_MODULE_DIR is not set; scripts/test sets it)")
end
-- The script runs, then the loop (as bklua does after a script).
local function runStock(script, args)
  return shell(ULIMIT .. "LUA_CPATH='" .. MODULE_DIR .. "/?.so;;' " .. TIMEOUT .. "lua5.4 " ..
    "-e 'require(\"bk\").installGlobals()' -e 'arg = { [0] = \"" .. script .. "\", " .. (args or "") .. " }' " ..
    "-e 'dofile(\"" .. script .. "\") bk.run()'")
end

-- Both interpreters: `check(out, code, where)` on each.
local function both(name, script, args, check)
  test(name, function()
    local out, code = run(script .. " " .. (args or ""):gsub('"', ""))
    check(out, code, "bklua")
  end)
  stockTest(name .. " (stock lua5.4 + bk.so)", function()
    local out, code = runStock(script, args)
    check(out, code, "lua5.4")
  end)
end

-- Complexity: 100,000 awaiters of one task (10,000 took 2.4 s before, 100,000 did not finish).
both("awaiters: 100,000 tasks await one task, each attach and detach O(1)", scripts .. "tasks_awaiters.lua",
  '"100000"', function(out, code, where)
    eq(code, 0, where .. ": " .. out)
    ok(out:find("awaiters\t100000\t100000", 1, true), where .. ": " .. out)
  end)

-- Complexity and leaks: 102,000 timed-out awaits of each kind; the Lua heap must not grow (it grew
-- ~12 MB per 100,000 for handles, timers and workers; a task's waits were quadratic).
for _, kind in ipairs({ "handle", "timer", "worker", "task" }) do
  both("timed-out awaits of a " .. kind .. " leave nothing behind", scripts .. "tasks_timed_out_waits.lua",
    '"' .. kind .. '"', function(out, code, where)
      eq(code, 0, where .. ": " .. out)
      local grew, timedOut = out:match(kind .. "\tgrew\t(%-?%d+)\ttimedOut\t(%d+)")
      ok(grew, where .. ": " .. out)
      eq(tonumber(timedOut), 102001, where)
      ok(tonumber(grew) < 2048, where .. ": the heap grew " .. grew .. " KB")
    end)
end

both("unref(): a block queued or running on another queue stops counting as pending", scripts ..
  "tasks_unref_outside.lua", nil, function(out, code, where)
    eq(code, 0, where .. ": " .. out)
    ok(out:find("queued unref\t0\n", 1, true), where .. ": " .. out)
    ok(out:find("queued ref\t1\n", 1, true), where .. ": " .. out)
    ok(out:find("running unref\t1\n", 1, true), where .. ": " .. out)
    ok(out:find("run\ttrue\ttrue\n", 1, true), where .. ": bk.run() waited for an unref'd block: " .. out)
    ok(out:find("awaited\ttrue\ttrue\n", 1, true), where .. ": " .. out)
  end)

both("a task cancelled inside an observer or event handler ends there, unreported", scripts ..
  "tasks_cancel_in_callbacks.lua", nil, function(out, code, where)
    eq(code, 0, where .. ": " .. out)
    ok(out:find("states\tbk.Task(cancelled) bk.Task(cancelled) bk.Task(cancelled)\n", 1, true), where .. ": " .. out)
    ok(out:find("after\t0\t\n", 1, true), where .. ": code after the suspension point ran: " .. out)
    ok(out:find("reports\t1\tobserver failed\n", 1, true), where .. ": " .. out)
    ok(out:find("goesOn\twent on\n", 1, true), where .. ": " .. out)
  end)

both("close: every entry of the tasks engine names itself while the state closes", scripts ..
  "tasks_closing.lua", nil, function(out, code, where)
    eq(code, 0, where .. ": " .. out)
    ok(out:find("closing\t16\twrong\t0\n", 1, true), where .. ": " .. out)
  end)

both("a task's coroutine: a script's resume gets nothing, its close ends the task as cancelled", scripts ..
  "tasks_coroutine.lua", nil, function(out, code, where)
    eq(code, 0, where .. ": " .. out)
    ok(out:find("resume\t1\ttrue\tbk.Task(pending)\n", 1, true), where .. ": the engine's value leaked: " .. out)
    ok(out:find("close\ttrue\tbk.Task(cancelled)\ttrue\ttrue\n", 1, true), where .. ": " .. out)
    ok(out:find("awaiter\tfalse\ttrue\n", 1, true), where .. ": " .. out)
    ok(out:find("await\tfalse\tcancelled\n", 1, true), where .. ": " .. out)
    ok(out:find("closed awaiting\tbk.Task(cancelled)\t0\n", 1, true), where .. ": " .. out)
    ok(out:find("closed at yield\tbk.Task(cancelled)\n", 1, true), where .. ": " .. out)
    ok(out:find("resumed\twoke\n", 1, true), where .. ": " .. out)
  end)

-- [Z]'s attack pass on the one awaitable protocol: its natives called by a script with anything.
both("the engine's natives, reached with the debug library, take any arguments", scripts ..
  "engine_natives.lua", nil, function(out, code, where)
    eq(code, 0, where .. ": " .. out)
    local found = tonumber(out:match("natives\t(%d+)\n"))
    ok(found and found >= 10, where .. ": the script no longer finds the natives: " .. out)
    ok(out:find("runUntil nil\tfalse\tbad argument #1 to 'runUntil' (table expected, got nil)\n", 1, true),
      where .. ": " .. out)
    ok(out:find("ended\tbk.BlockHandle(finished)\tfalse\t0\ttrue\n", 1, true), where .. ": " .. out)
  end)

both("tasks awaiting handles, timers and workers, closed mid-wait, end cancelled and leave nothing",
  scripts .. "tasks_closed_native_waits.lua", nil, function(out, code, where)
    eq(code, 0, where .. ": " .. out)
    ok(out:find("closed\t100\n", 1, true), where .. ": " .. out)
    ok(out:find("outcomes\t100\t0\t0\n", 1, true), where .. ": " .. out)
  end)
