-- The bad-input matrix: every function of the live `bk` table, and every method of every kind of
-- object the bridge makes, called with every wrong argument type (nil, booleans, numbers, strings,
-- tables, functions, userdata, coroutines, missing and extra arguments) and hostile tables whose
-- metamethods raise or yield, directly and inside coroutines. Each call must return or raise a
-- Lua error; the process must never crash or hang. Each function or class runs in its own child
-- bklua (Tests/lua/badinput/matrix.lua), so a crash fails just that case with its output.
-- New functions are covered as soon as they are exported.

local BKLUA = assert(os.getenv("BKLUA"), "BKLUA must name the bklua binary")
-- A memory ceiling for children (a runaway allocation fails instead of swapping); not under
-- sanitizers, which reserve terabytes of address space (scripts/check-sanitizers sets BK_NO_ULIMIT).
local ULIMIT = os.getenv("BK_NO_ULIMIT") and "" or "ulimit -v 4000000; "
local here = (debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$")) or "Tests/lua"
local MATRIX = here .. "/badinput/matrix.lua"

-- Runs a child with a memory ceiling (a runaway allocation fails instead of swapping) and a
-- time ceiling (a hang fails instead of blocking the suite).
local function child(args, options)
  local cap = options and options:find("MATRIX_MEMORY_CAP", 1, true) and "--memory-limit 512000000 " or ""
  return shell(ULIMIT .. "timeout 120 " .. (options or "") .. BKLUA .. " " .. cap .. MATRIX .. " " .. args)
end

local function expectClean(args, options)
  local out, code = child(args, options)
  local reason = code == 124 and "hung (killed after 120 s)"
    or code >= 128 and ("crashed (signal " .. (code - 128) .. ")")
    or code ~= 0 and ("exited with " .. code) or nil
  if reason or not out:find("matrix ok", 1, true) then
    error(args .. ": " .. (reason or "no result line") .. "\n" .. out:sub(-3000), 2)
  end
end

-- The classes come from a child that makes objects with plausible arguments; the functions from
-- the live table here (the child must agree).
local listing, code = child("discover")
local functions, classes = {}, {}
if code == 0 then
  for kind, name in listing:gmatch("(%a+) ([^\n]+)") do
    if kind == "function" then functions[name] = true else classes[#classes + 1] = name end
  end
end

test("discovery ran and sees every exported function", function()
  eq(code, 0, listing)
  for name, value in pairs(bk) do
    if type(value) == "function" then ok(functions[name], "discovery missed bk." .. name) end
  end
  -- The kinds of objects the contract promises are found (more may be added).
  local found = {}
  for _, name in ipairs(classes) do found[name] = true end
  for _, name in ipairs({ "bk.Timer", "bk.BlockHandle", "bk.Queue", "bk.array", "bk.dictionary", "bk.set",
                          "bk.Worker", "bk.Channel", "bk.Task" }) do
    ok(found[name], "no object of class " .. name .. " discovered; found: " .. table.concat(classes, ", "))
  end
end)

test("the harness reports a crashing child", function()
  local _, status = shell("sh -c 'kill -SEGV $$'")
  ok(status >= 128, "a signal is seen as exit status >= 128: " .. tostring(status))
end)

local names = {}
for name, value in pairs(bk) do
  if type(value) == "function" then names[#names + 1] = name end
end
table.sort(names)
for _, name in ipairs(names) do
  test("bad input to bk." .. name, function() expectClean("function " .. name) end)
end
-- Again under a memory cap, with a block that trips it inside the helper (bklua --memory-limit).
for _, name in ipairs(names) do
  test("bad input to bk." .. name .. " under a memory cap", function()
    expectClean("function " .. name, "env MATRIX_MEMORY_CAP=1 ")
  end)
end
for _, class in ipairs(classes) do
  test("bad input to methods of " .. class, function() expectClean("class " .. string.format("%q", class)) end)
end
