-- Blocks that rewrite the slots of the C and Swift frames that called them (debug.setlocal reaches
-- a C function's "(C temporary)" slots), run by Tests/lua/test_hardening_walk.lua in a child.
--
--   walk_frames.lua sync    every slot of every bk frame below the block, with every hostile value,
--                           then collectgarbage(), in every collection helper (C walk and Swift paths)
--   walk_frames.lua yield   the same inside a coroutine: rewrite, yield, collect, resume
--   walk_frames.lua task    the same inside tasks that sleep between the rewrite and the resume
--   walk_frames.lua message the errors of the reproductions
--
-- A crash fails the case (the parent sees the signal); every call must return or raise. Prints
-- "calls N changed N" and "done".
-- luacheck: globals scribble (shared by the hostile blocks, which are separate chunks)
local bk = bk or require "bk"
local mode = arg[1] or "sync"

-- Frames to rewrite: C frames that are not the standard library's (pcall, coroutine.resume, ...:
-- Lua's own, out of scope here) nor Lua functions (the harness's own locals).
local standard = {}
for _, lib in ipairs({ _G, string, table, coroutine, debug, math, io, os, utf8 }) do
  for k, v in pairs(lib) do  -- bklua's globals bk_NAME are bk's functions
    if type(v) == "function" and not tostring(k):match("^bk") then standard[v] = true end
  end
end
local function targets()
  local levels = {}
  for level = 2, 12 do
    local info = debug.getinfo(level + 1, "Sf")  -- +1: this function's own frame
    if not info or standard[info.func] then break end  -- the harness's pcall / resume
    if info.what == "C" then levels[#levels + 1] = level end
  end
  return levels
end

local other = coroutine.create(function(...) local a, b = {}, io.stdout coroutine.yield() return a, b end)
coroutine.resume(other)
local hostile = { n = 8, nil, false, 42, {}, function() end, io.stdout, other, (select(2, debug.getlocal(other, 1, 1))) }

-- Rewrites every slot of every targeted frame with `value` (levels counted from here), or only
-- the slots holding a userdata (`onlyUserdata`: a walk's state, which then only the rewritten
-- slot kept alive).
local function rewrite(value, onlyUserdata)
  for _, level in ipairs(targets()) do
    local slot = 1
    while true do
      local name, old = debug.getlocal(level, slot)
      if not name then break end
      if not onlyUserdata or type(old) == "userdata" then debug.setlocal(level, slot, value) end
      slot = slot + 1
    end
  end
end

local cases = {
  { "each", function(f) return bk.each({ 1, 2, 3 }, f) end },
  { "each dictionary", function(f) return bk.each({ a = 1, b = 2, c = 3 }, f) end },
  { "map", function(f) return bk.map({ 1, 2, 3 }, f) end },
  { "map dictionary", function(f) return bk.map({ a = 1, b = 2 }, f) end },
  { "select", function(f) return bk.select({ 1, 2, 3 }, f) end },
  { "reject dictionary", function(f) return bk.reject({ a = 1, b = 2 }, f) end },
  { "select set", function(f) return bk.select(bk.set({ 1, 2, 3 }), f) end },
  { "reduce", function(f) return bk.reduce({ 1, 2, 3 }, 0, function(a, x) f(x) return a end) end },
  { "reduce block", function(f) return bk.reduce({ 1, 2, 3 }, 0, f) end },
  { "reduceInteger", function(f) return bk.reduceInteger({ 1, 2, 3 }, 0, f) end },
  { "reduceFloat", function(f) return bk.reduceFloat({ 1, 2, 3 }, 0, f) end },
  { "match", function(f) return bk.match({ 1, 2, 3 }, function(x) f(x) return false end) end },
  { "match block", function(f) return bk.match({ 1, 2, 3 }, f) end },
  { "any", function(f) return bk.any({ 1, 2, 3 }, f) end },
  { "all", function(f) return bk.all({ 1, 2, 3 }, f) end },
  { "none", function(f) return bk.none({ 1, 2, 3 }, f) end },
  { "corresponds", function(f) return bk.corresponds({ 1, 2, 3 }, { 1, 2, 3 }, f) end },
  { "performSelect", function(f) return bk.performSelect({ 1, 2, 3 }, f) end },
  { "performReject set", function(f) return bk.performReject(bk.set({ 1, 2, 3 }), f) end },
  { "performMap", function(f) return bk.performMap({ 1, 2, 3 }, f) end },
  { "performMap set", function(f) return bk.performMap(bk.orderedSet({ 1, 2, 3 }), f) end },
  { "performMap dictionary", function(f) return bk.performMap({ a = 1, b = 2 }, f) end },
  { "parallelMap", function(f) return bk.parallelMap and bk.parallelMap({ 1, 2, 3 }, f) end },
  { "apply", function(f) return bk.apply and bk.apply({ 1, 2, 3 }, f) end },
}
if bk.observable then
  cases[#cases + 1] = { "performMap observed", function(f) return bk.performMap(bk.observable({ 1, 2, 3 }), f) end }
end

-- Fills freed memory with bytes that make no sense as a walk's slots and counts, so that a walk
-- read after it was freed fails loudly even without AddressSanitizer.
local junk = {}  -- luacheck: ignore 241 (the strings fill freed memory)
function scribble()
  for i = 1, 400 do junk[i] = string.rep("\127", 40 + i % 120) .. i end
end

local calls, changed = 0, 0
local function note(ok, err)
  calls = calls + 1
  if not ok and type(err) == "string" and err:find("frame was changed", 1, true) then changed = changed + 1 end
end

if mode == "sync" then
  for _, case in ipairs(cases) do
    for i = 1, hostile.n do
      local value = hostile[i]
      note(pcall(case[2], function(...)
        rewrite(value)
        collectgarbage()
        return ...
      end))
    end
    io.stdout:write("case ", case[1], " ok\n")
  end
elseif mode == "yield" then
  for _, case in ipairs(cases) do
    for i = 1, hostile.n * 2 do
      local value, onlyUserdata = hostile[(i - 1) % hostile.n + 1], i > hostile.n
      local co = coroutine.create(case[2])
      local ok, err = coroutine.resume(co, function(...)
        rewrite(value, onlyUserdata)
        coroutine.yield()
        return ...
      end)
      local resumes = 0
      while ok and coroutine.status(co) == "suspended" and resumes < 10 do
        collectgarbage()
        collectgarbage()
        scribble()
        ok, err = coroutine.resume(co)
        resumes = resumes + 1
      end
      note(ok, err)
    end
    io.stdout:write("case ", case[1], " ok\n")
  end
elseif mode == "task" then
  local tasks = {}
  for _, case in ipairs(cases) do
    for i = 1, hostile.n * 2 do
      local value, onlyUserdata = hostile[(i - 1) % hostile.n + 1], i > hostile.n
      tasks[#tasks + 1] = bk.async(function()
        return case[2](function(...)
          rewrite(value, onlyUserdata)
          bk.sleep(0.001)
          return ...
        end)
      end)
    end
  end
  local collector = bk.timerWithTimeInterval(0.0005, function() collectgarbage() scribble() end, true)
  for _, t in ipairs(tasks) do
    local ok, err = pcall(bk.await, t, 5)
    note(ok, err)
  end
  collector:invalidate()
  io.stdout:write("case tasks ok\n")
elseif mode == "message" then
  local ok, err = pcall(bk.map, { 1, 2, 3 }, function(x) debug.setlocal(2, 1, 42) return x end)
  print("map", ok, err) io.stdout:flush()
  ok, err = pcall(bk.performMap, { 1, 2, 3 }, function(x) debug.setlocal(2, 1, 42) return x end)
  print("performMap", ok, err)
  -- The continuation finds its walk gone: the walk's userdata slot set to false across a yield.
  local co = coroutine.create(function()
    return bk.map({ 1, 2, 3 }, function(x)
      local slot = 1
      while true do
        local name, v = debug.getlocal(2, slot)
        if not name then break end
        if type(v) == "userdata" then debug.setlocal(2, slot, false) end
        slot = slot + 1
      end
      coroutine.yield()
      return x
    end)
  end)
  coroutine.resume(co)
  collectgarbage()
  collectgarbage()
  scribble()
  print("yield", coroutine.resume(co))
  -- A block error is still the block's own value, unchanged.
  local sentinel = {}
  ok, err = pcall(bk.map, { 1 }, function() error(sentinel) end)
  print("error value", ok, rawequal(err, sentinel))
  print("works", #bk.map({ 1, 2, 3 }, function(x) return x end))
end
print("calls " .. calls .. " changed " .. changed)
print("done")
io.stdout:flush()
os.exit(0, true)
