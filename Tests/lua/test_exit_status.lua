-- bklua's exit status after errors nobody caught, and when a failed task counts as unhandled.
-- Each script runs in a child bklua (and stock lua5.4 with bk.so where that applies).

local BKLUA = assert(os.getenv("BKLUA"), "BKLUA must name the bklua binary")
local MODULE_DIR = os.getenv("BK_MODULE_DIR")
local LUA = os.getenv("LUA") or "lua5.4"

local tmp = os.tmpname()
os.remove(tmp)
os.execute("mkdir -p " .. tmp)
local count = 0
local function script(text)
  count = count + 1
  local path = tmp .. "/script" .. count .. ".lua"
  local f = assert(io.open(path, "w"))
  f:write(text)
  f:close()
  return path
end

-- Runs `text` under bklua; returns stdout, stderr and the exit status.
local function run(text, interpreter)
  local path = script(text)
  local errPath = path .. ".err"
  -- Grouped: shell() sends the group's stderr (now empty) to stdout.
  local out, code = shell("{ " .. (interpreter or BKLUA) .. " " .. path .. " 2>" .. errPath .. "; }")
  local f = assert(io.open(errPath))
  local err = f:read("a")
  f:close()
  return out, err, code
end

-- MARK: the exit status (the default reporter reported something)

test("a failing performBlock makes bklua exit 1 once the loop ends; the script and loop run on", function()
  local out, err, code = run([[
    bk.performBlock(function() error("block failed") end, 0)
    bk.performBlock(function() print("later block ran") end, 0.02)
    print("script ended")
  ]])
  eq(code, 1, err)
  eq(out, "script ended\nlater block ran\n")
  ok(err:find("block failed", 1, true), err)
  ok(err:find("stack traceback:", 1, true), err)
end)

test("a failing debounced call makes bklua exit 1", function()
  local _, err, code = run([[
    local save = bk.debounce(function() error("save failed") end, 0.01)
    save("a")
  ]])
  eq(code, 1, err)
  ok(err:find("save failed", 1, true), err)
end)

test("a failed task no one awaited makes bklua exit 1, with its report", function()
  local _, err, code = run([[
    bk.async(function() bk.sleep(0.01) error("server error") end)
  ]])
  eq(code, 1, err)
  ok(err:find("server error", 1, true), err)
  ok(err:find("stack traceback:", 1, true), err)
end)

test("a failing timer makes bklua exit 1", function()
  local _, err, code = run([[
    bk.scheduledTimerWithTimeInterval(0.01, function() error("tick failed") end, false)
  ]])
  eq(code, 1, err)
  ok(err:find("tick failed", 1, true), err)
end)

test("with a handler from bk.onError the status is the script's", function()
  local out, err, code = run([[
    bk.onError(function(message) print("handled: " .. message:match("[^\n]*")) end)
    bk.performBlock(function() error("block failed", 0) end, 0)
    bk.async(function() error("task failed", 0) end)
  ]])
  eq(code, 0, err)
  eq(err, "")
  ok(out:find("handled: block failed", 1, true), out)
  ok(out:find("handled: task failed", 1, true), out)
end)

test("a run with no errors exits 0; a script error still exits 1 at once", function()
  local _, err, code = run([[bk.performBlock(function() end, 0)]])
  eq(code, 0, err)
  local out
  out, err, code = run([[bk.performBlock(function() print("never") end, 0) error("script failed")]])
  eq(code, 1)
  eq(out, "")
  ok(err:find("script failed", 1, true), err)
end)

-- MARK: unhandled task failures: reported when collected or at close, never when awaited

test("a task failure awaited later inside pcall is not reported", function()
  local out, err, code = run([[
    local t = bk.async(function() bk.sleep(0.05) error("server error", 0) end)
    bk.sleep(0.1)
    print(t.isFinished, pcall(bk.await, t))
  ]])
  eq(err, "")
  eq(code, 0)
  eq(out, "true\tfalse\tserver error\n")
end)

test("a task awaited later from another task is not reported", function()
  local out, err, code = run([[
    local t = bk.async(function() error("early", 0) end)
    bk.async(function()
      bk.sleep(0.05)
      print(pcall(t.result, t))
    end)
  ]])
  eq(err, "")
  eq(code, 0)
  eq(out, "false\tearly\n")
end)

test("a failed task is reported when it is collected, without anyone having awaited it", function()
  local out, err, code = run([[
    bk.async(function() error("dropped task failed", 0) end)
    bk.sleep(0.02)
    io.stderr:write("before collect\n")
    collectgarbage()
    collectgarbage()
    io.stderr:write("after collect\n")
  ]])
  eq(code, 1)
  eq(out, "")
  local before, report, after = err:find("before collect\n", 1, true), err:find("dropped task failed", 1, true),
    err:find("after collect\n", 1, true)
  ok(before and report and after and before < report and report < after, err)
end)

test("a failed task still referenced is reported once, when the state closes", function()
  local _, err, code = run([[
    kept = bk.async(function() error("kept task failed", 0) end)
    bk.sleep(0.02)
    collectgarbage()
    io.stderr:write("script ended\n")
  ]])
  eq(code, 1)
  local ended, report = err:find("script ended\n", 1, true), err:find("kept task failed", 1, true)
  ok(ended and report and ended < report, err)
  eq(select(2, err:gsub("kept task failed", "")), 1, err)
end)

if not MODULE_DIR then
  print("SKIPPED test_exit_status: stock lua5.4 (BK_MODULE_DIR is not set; scripts/test sets it)")
else
  local STOCK = "LUA_CPATH='" .. MODULE_DIR .. "/?.so;;' " .. LUA

  test("stock lua5.4: a task failure awaited later inside pcall is not reported", function()
    local out, err, code = run([[
      local bk = require "bk"
      local t = bk.async(function() bk.sleep(0.05) error("server error", 0) end)
      bk.sleep(0.1)
      print(pcall(bk.await, t))
    ]], STOCK)
    eq(err, "")
    eq(code, 0)
    eq(out, "false\tserver error\n")
  end)

  test("stock lua5.4: a failed task no one awaited is reported as Lua closes", function()
    local _, err = run([[
      local bk = require "bk"
      kept = bk.async(function() error("kept task failed", 0) end)
      io.stderr:write("script ended\n")
    ]], STOCK)
    local ended, report = err:find("script ended\n", 1, true), err:find("kept task failed", 1, true)
    ok(ended and report and ended < report, err)
  end)
end
