-- A memory cap holds within a small factor while a helper builds a big result in Swift.
local function hwm()
  for line in io.lines("/proc/self/status") do
    local kb = line:match("^VmHWM:%s*(%d+)")
    if kb then return tonumber(kb) end
  end
end
local before = hwm()
local ok, err = pcall(bk.indexSet, 0, 1 << 24)
print("indexSet", ok, err)
pcall(bk.array, setmetatable({}, {}))
local grown = (hwm() - before) // 1024
print("grewMB", grown, grown < 80)
