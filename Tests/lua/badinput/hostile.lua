-- Hostile callbacks, shared by the bad-input matrix (matrix.lua) and the fuzzer (fuzz/fuzz.lua):
-- a callback can do anything, so these do what a script should never be able to break bk with.
--
--   rewrite the slots of every bk frame below them (debug.setlocal reaches a C function's
--   temporaries) with each hostile value in turn; only the slots holding a userdata (a walk's
--   state, which only that slot keeps alive), then yield so the caller collects before resuming;
--   rewrite the upvalues of the bk functions running below them (debug.setupvalue); close the
--   running coroutine; make objects whose __gc calls random bk functions, and collect.
--
-- Only C frames that are not the standard library's are rewritten: Lua functions (the harness's
-- own, the task engine's) and pcall / coroutine.resume are out of this net. Upvalues are put back
-- by restore() after each call (the harness calls it), so one call's damage does not leak into
-- the next one's baseline.
local bk = ...
local H = {}

local standard = {}
for _, lib in ipairs({ _G, string, table, coroutine, debug, math, io, os, utf8 }) do
  for k, v in pairs(lib) do  -- bklua's globals bk_NAME are bk's functions
    if type(v) == "function" and not tostring(k):match("^bk") then standard[v] = true end
  end
end

-- Levels (counted from the caller of targets) of the C frames to rewrite: those between the
-- callback and the harness's own pcall / coroutine.resume (the first standard function below),
-- so that the harness and bklua's own chunk runner keep their locals.
local function targets()
  local levels = {}
  for level = 2, 30 do
    local info = debug.getinfo(level + 1, "Sf")
    if not info or standard[info.func] then break end
    if info.what == "C" then levels[#levels + 1] = { level, info.func } end
  end
  return levels
end

-- Values from another coroutine: one suspended inside a helper's block (its walk's userdata).
local other = coroutine.create(function() bk.each({ 1 }, function() coroutine.yield() end) end)
coroutine.resume(other)
local otherValues = {}
for level = 0, 4 do
  for slot = 1, 12 do
    local ok, name, v = pcall(debug.getlocal, other, level, slot)
    if ok and name and v ~= nil then otherValues[#otherValues + 1] = v end
  end
end
local otherWalk
for _, v in ipairs(otherValues) do if type(v) == "userdata" then otherWalk = v end end

H.values = { nil, false, 42, {}, function() end, io.stdout, other, otherWalk or "no walk" }
H.count = 8

-- Rewrites the slots of the targeted frames below the caller (levels relative to this function).
function H.rewriteSlots(value, onlyUserdata)
  for _, target in ipairs(targets()) do
    local level, slot = target[1], 1  -- levels counted from this function
    while true do
      local name, old = debug.getlocal(level, slot)
      if not name then break end
      if not onlyUserdata or type(old) == "userdata" then debug.setlocal(level, slot, value) end
      slot = slot + 1
    end
  end
end

local changed = {}  -- { f, index, old } to put back
function H.rewriteUpvalues(value)
  if type(value) == "number" or type(value) == "string" then value = false end  -- names stay names
  for _, target in ipairs(targets()) do
    local f, index = target[2], 1
    while true do
      local name, old = debug.getupvalue(f, index)
      if not name then break end
      changed[#changed + 1] = { f, index, old }
      debug.setupvalue(f, index, value)
      index = index + 1
    end
  end
end

function H.restore()
  for i = #changed, 1, -1 do
    local entry = changed[i]
    debug.setupvalue(entry[1], entry[2], entry[3])
    changed[i] = nil
  end
end

local names = {}
for k, v in pairs(bk) do if type(v) == "function" and k ~= "run" then names[#names + 1] = k end end
table.sort(names)
local gcTurn = 0
function H.finalizers()
  for _ = 1, 3 do
    gcTurn = gcTurn % #names + 1
    local name = names[gcTurn]
    setmetatable({}, { __gc = function()
      pcall(bk[name], { 1, 2 }, function() return true end, 0)
      pcall(bk[name], function() end, 0.001)
    end })
  end
  collectgarbage()
end

-- The callbacks, named for the matrix, one per hostile value. Each returns its arguments (so
-- helpers go on).
local valueNames = { "nil", "false", "42", "a table", "a function", "io.stdout", "another coroutine",
                     "another coroutine's walk" }
H.callbacks = {}
local forUserdata = { [2] = true, [3] = true, [4] = true, [8] = true }  -- false, 42, a table, a walk
local forUpvalues = { [1] = true, [2] = true, [4] = true }             -- nil, false, a table
for i = 1, H.count do
  local value = H.values[i]
  H.callbacks[#H.callbacks + 1] = { "rewriting the slots of its bk callers with " .. valueNames[i], function(...)
    H.rewriteSlots(value)
    return ...
  end }
  if forUserdata[i] then
    -- Yields when it can (the harness collects before resuming), else collects at once.
    H.callbacks[#H.callbacks + 1] = { "replacing its callers' userdata with " .. valueNames[i] .. ", yielding", function(...)
      H.rewriteSlots(value, true)
      if coroutine.isyieldable() then coroutine.yield() else collectgarbage() end
      return ...
    end }
  end
  if forUpvalues[i] then
    H.callbacks[#H.callbacks + 1] = { "rewriting the upvalues of its bk callers with " .. valueNames[i], function(...)
      H.rewriteUpvalues(value)
      return ...
    end }
  end
end
H.callbacks[#H.callbacks + 1] = { "closing the running coroutine", function(...)
  pcall(coroutine.close, (coroutine.running()))
  return ...
end }
H.callbacks[#H.callbacks + 1] = { "making finalizers that call bk", function(...)
  H.finalizers()
  return ...
end }
-- HOSTILE_ONLY=text keeps the callbacks whose name contains it (to show what one class catches).
local only = os.getenv("HOSTILE_ONLY")
if only then
  local kept = {}
  for _, c in ipairs(H.callbacks) do if c[1]:find(only, 1, true) then kept[#kept + 1] = c end end
  H.callbacks = kept
end
H.isHostile = {}
for _, c in ipairs(H.callbacks) do H.isHostile[c[2]] = true end

-- One hostile action by number (the fuzzer's generated callbacks call HOSTILE.act(n)).
function H.act(n, ...)
  return H.callbacks[(n - 1) % #H.callbacks + 1][2](...)
end

return H
