-- Memory runs out inside bk.set (Lua allocations made while Swift runs spend the emergency reserve,
-- and the last ones fail outright), then the sets are freed: bk must work again at once.
local list = {}
for i = 1, 300000 do list[i] = i end
local keep, failures = {}, 0  -- luacheck: ignore 331 (holds the sets until memory runs out)
for _ = 1, 200 do
  local ok, set = pcall(bk.set, list)
  if ok then
    keep[#keep + 1] = set
  else
    failures = failures + 1
    if failures >= 10 then break end
  end
end
keep = nil  -- luacheck: ignore 311
collectgarbage()
collectgarbage()
print("failures", failures > 0)
print("version", pcall(bk.version))
print("version again", pcall(bk.version))
print("map", pcall(function() return #bk.map({1, 2, 3}, function(x) return x end) end))
print("set", pcall(function() return bk.kind(bk.set({1, 2, 3})) end))
