-- Scripts forge the markers of bridged objects: a FILE handle must never be taken for a Swift object.
local f = io.stdout
local mt = getmetatable(f)
mt.__bkclass = true
mt.__name = "bk.Timer"
local results = {}
local function try(label, fn, ...)
  local ok = pcall(fn, ...)
  results[#results + 1] = label .. "=" .. tostring(ok)
end
try("observe", bk.addObserverForKeyPath, f, "x", function() end)
try("observers", bk.observers, f)
try("associate", bk.associateValue, f, "k", 1)
local timer = bk.timerWithTimeInterval(10, function() end)
local tmt = debug.getmetatable(timer)
try("invalidate", timer.invalidate, f)
try("gc", tmt.__gc, f)
try("index", tmt.__index, f, "isValid")
try("newindex", tmt.__newindex, f, "isValid", 1)
try("tostring", tmt.__tostring, f)
-- A FILE handle wearing the timer's own metatable.
debug.setmetatable(f, tmt)
try("disguised invalidate", timer.invalidate, f)
try("disguised fire", function() return f:fire() end)  -- luacheck: ignore 143 (f wears a timer's metatable)
try("disguised isValid", function() return f.isValid end)  -- luacheck: ignore 143
try("disguised gc", tmt.__gc, f)
debug.setmetatable(f, mt)
-- A bk function whose upvalue is replaced.
local map = bk.map
pcall(debug.setupvalue, map, 1, f)
try("replaced upvalue", map, { 1 }, print)
print(table.concat(results, " "))
print("alive", timer.isValid)
io.stdout:write("stdout still works\n")
