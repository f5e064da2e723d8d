-- The bk module: loading, naming, globals, argument errors.

test("require 'bk' returns the bk global", function()
  eq(require("bk"), bk)
  eq(type(bk), "table")
end)

test("every bk.NAME function is also the global bk_NAME", function()
  local count = 0
  for name, value in pairs(bk) do
    if type(value) == "function" then
      eq(_G["bk_" .. name], value, name)
      count = count + 1
    end
  end
  ok(count >= 2, "module has functions")
end)

test("bk.NAME and the global bk_NAME stay the same function once the tasks engine loaded", function()
  bk.sleep(0)  -- loads the engine (if nothing did before): bk.sleep and the others are replaced
  for _, name in ipairs { "async", "await", "sleep", "awaitAll", "awaitAny", "currentTask", "debounce", "throttle" } do
    eq(_G["bk_" .. name], bk[name], name)
  end
end)

test("installGlobals fills a given environment", function()
  local env = {}
  eq(bk.installGlobals(env), env)
  eq(env.bk, bk)
  eq(env.bk_version, bk.version)
  eq(rawget(env, "print"), nil)
end)

test("installGlobals sets raw fields, ignoring __newindex", function()
  local seen = 0
  local env = setmetatable({}, { __newindex = function() seen = seen + 1 end })
  bk.installGlobals(env)
  eq(seen, 0)
  eq(rawget(env, "bk_installGlobals"), bk.installGlobals)
end)

test("bad argument gives the standard message", function()
  raises("bad argument #1 to 'installGlobals' (table expected, got number)", bk.installGlobals, 5)
  raises("bad argument #1 to 'installGlobals' (table expected, got string)", bk_installGlobals, "x")
end)

test("argument errors carry the caller's position", function()
  local _, err = pcall(function() bk.installGlobals(true) end)
  ok(err:match("^[^:]*test_module%.lua:%d+: bad argument #1"), err)
end)

test("method calls do not count self", function()
  string.installGlobals = bk.installGlobals  -- luacheck: ignore 142 (a method on strings, to call with self)
  local okCall, err = pcall(function() return ("x"):installGlobals() end)
  string.installGlobals = nil  -- luacheck: ignore 142
  ok(not okCall)
  ok(err:find("calling 'installGlobals' on bad self (table expected, got string)", 1, true), err)
end)

test("version is a string", function()
  eq(type(bk.version()), "string")
end)
