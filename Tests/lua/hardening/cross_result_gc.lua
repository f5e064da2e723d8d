-- Issue [N] 3: finalizers call w:result() while the first call copies a large result into this
-- state. The copy's allocations used to run them mid-copy: the inner call copied the results again
-- and emptied the worker's stack under the outer copy (SIGSEGV in bk_transfer_table), or replaced
-- the cache (the outer call returned nothing). Prints what the outer and the inner calls got.
local N = 20000
local w = bk.worker(function(n)
  local t = {}
  for i = 1, n do t[i] = {i} end
  return table.unpack(t, 1, n)
end, N)
local start = os.time()
while not w.isFinished do
  if os.time() - start > 60 then print("worker never finished") os.exit(3) end
end
local inner = {}
-- Objects whose finalizers are due at the next cycle: kept through a full collection, then let go.
local function arm()
  local keep = {}  -- luacheck: ignore 241 (holds the objects until arm returns)
  for i = 1, 200 do
    keep[i] = setmetatable({}, {__gc = function()
      local r = table.pack(pcall(w.result, w))
      inner[#inner + 1] = r.n .. ":" .. tostring(r[1]) .. ":" .. tostring(type(r[2]) == "table" and r[2][1] or r[2])
    end})
  end
  collectgarbage()
  collectgarbage()
end
arm()
local results = table.pack(w:result())
print("outer", results.n, results[1] and results[1][1], results[N] and results[N][1])
arm()
collectgarbage()
collectgarbage()
local counts = {}
for _, v in ipairs(inner) do counts[v] = (counts[v] or 0) + 1 end
for k, v in pairs(counts) do print("inner", k, v) end
print("done")
