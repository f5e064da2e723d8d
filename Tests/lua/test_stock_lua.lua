-- The bridge as a C module in the stock lua5.4 interpreter (bk.so built by scripts/build-module).

local MODULE_DIR = assert(os.getenv("BK_MODULE_DIR"), "BK_MODULE_DIR must name the directory of bk.so")
local LUA = os.getenv("LUA") or "lua5.4"

-- Runs `code` with stock lua5.4, bk.so on LUA_CPATH; returns output and exit status.
local function stock(code)
  local quoted = "'" .. code:gsub("'", "'\\''") .. "'"
  return shell("LUA_CPATH='" .. MODULE_DIR .. "/?.so;;' " .. LUA .. " -e " .. quoted)
end

test("lua5.4 -e 'local bk = require \"bk\"' works", function()
  local out, code = stock('local bk = require "bk"; print(type(bk), bk.version() == "' .. bk.version() .. '")')
  eq(out, "table\ttrue\n")
  eq(code, 0)
end)

test("the module exports the same names as bklua's", function()
  local names = {}
  for name in pairs(bk) do names[#names + 1] = name end
  table.sort(names)
  local out, code = stock([[
    local names = {}
    for name in pairs(require "bk") do names[#names + 1] = name end
    table.sort(names)
    io.write(table.concat(names, " "))
  ]])
  eq(code, 0)
  eq(out, table.concat(names, " "))
end)

test("without installGlobals stock lua has no bk globals", function()
  local out = stock('require "bk"; print(bk, bk_version)')
  eq(out, "nil\tnil\n")
end)

test("argument errors keep the standard wording and position", function()
  local out, code = stock('local bk = require "bk"\nbk.installGlobals(5)')
  eq(code, 1)
  ok(out:find("(command line):2: bad argument #1 to 'installGlobals' (table expected, got number)", 1, true), out)
end)

test("requiring again gives the same module (one bridge per state)", function()
  local out, code = stock([[
    local first = require "bk"
    package.loaded.bk = nil
    local second = require "bk"
    print(first == second, second.version() == first.version())
  ]])
  eq(out, "true\ttrue\n")
  eq(code, 0)
end)

test("require from a coroutine, then use from the main thread", function()
  local out, code = stock([[
    local bk = coroutine.wrap(function() return require "bk" end)()
    local env = bk.installGlobals({})
    print(env.bk == bk, env.bk_version == bk.version)
  ]])
  eq(out, "true\ttrue\n")
  eq(code, 0)
end)

test("the interpreter's thread holds the state: background blocks wait for bk.run", function()
  local out, code = stock([[
    local bk = require "bk"
    local cancelledRan = false
    local h = bk.performBlockInBackground(function() cancelledRan = true end, 0)
    h:cancel()  -- the worker waits for the state the script holds, so it has not started
    local ran = false
    bk.performBlockInBackground(function() ran = true end, 0)
    print(bk.run(), cancelledRan, h.isCancelled, ran)
  ]])
  eq(out, "true\tfalse\ttrue\ttrue\n")
  eq(code, 0)
end)

test("closing the interpreter with bridge objects alive exits cleanly", function()
  local out, code = stock([[
    local bk = require "bk"
    local keep = {}
    for i = 1, 100 do keep[i] = bk.installGlobals({}) end
    collectgarbage()
    os.exit(0, true)  -- closes the state: every __gc runs, the bridge last
  ]])
  eq(out, "")
  eq(code, 0)
end)

test("exiting with background blocks and timers pending exits cleanly (bk.so stays loaded)", function()
  for _ = 1, 10 do  -- the crash this guards against was intermittent
    local out, code = stock([[
      local bk = require "bk"
      for i = 1, 5 do bk.performBlockInBackground(function() print("never") end, 0) end
      bk.performBlock(function() print("never") end, 5)
      bk.scheduledTimerWithTimeInterval(0.01, function() end, true)
      print("bye")
    ]])
    -- The dropped work is named on stderr (never silent), and nothing else happens.
    ok(out:match("^bye\nbk: 7 pending blocks, timers or workers dropped as Lua closes: call bk%.run%(%) at the end of the script to run them\n$"), out)
    eq(code, 0)
    local worker = stock([[
      local bk = require "bk"
      bk.worker(function() bk.sleep(0.2) end)
      print("bye")
    ]])
    ok(worker:match("^bye\nbk: 1 pending block, timer or worker dropped as Lua closes"), worker)
  end
end)

-- Whether the process has mapped a library whose file name contains `name`.
local FOUNDATION_LOADED = [[
  local function loaded(name)
    local f = io.open("/proc/self/maps")
    if not f then return "unknown" end
    local maps = f:read("a")
    f:close()
    return maps:find(name, 1, true) ~= nil
  end
]]

test("require \"bk\" loads no Foundation or libxml2: bk.XMLParser loads libxml2 (libbkxml.so) at its first parse, never Foundation", function()
  local out, code = stock(FOUNDATION_LOADED .. [[
    local bk = require "bk"
    print(loaded("libFoundation"), loaded("libxml2"))
    local p = bk.XMLParser("<a><b/></a>")
    print(loaded("libFoundation"))
    print(p:parse(), loaded("libFoundation"), loaded("libxml2"))
  ]])
  eq(code, 0)
  eq(out, "false\tfalse\nfalse\ntrue\tfalse\ttrue\n")
end)
