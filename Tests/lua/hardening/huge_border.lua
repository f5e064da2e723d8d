-- A table whose border (#t) is 2^40 while only 1..5 (and scattered powers of two) exist. Every
-- helper must treat it as the list 1..5, never pre-size from #t, and keep working afterwards.
local function hostile()
  local t = { 1, 2, 3, 4, 5 }
  t[8] = 8; t[9] = 9
  for k = 4, 40 do t[1 << k] = 1 end
  return t
end
local t = hostile()
print("border", #t >= 1 << 20)
local identity = function(x) return x end
local calls = {
  function() return bk.map(hostile(), identity) end,
  function() return bk.select(hostile(), identity) end,
  function() return bk.reject(hostile(), identity) end,
  function() return bk.performMap(hostile(), identity) end,
  function() return bk.performSelect(hostile(), identity) end,
  function() return bk.performReject(hostile(), function() return false end) end,
  function() return bk.set(hostile()) end,
  function() return bk.orderedSet(hostile()) end,
  function() return bk.indexSet(hostile()) end,
  function() return bk.array(hostile()) end,
  function() local s = bk.set{}; for i = 1, 5 do s[i] = i end; s[1 << 40] = 1; return bk.performMap(s, identity) end,
  function() return bk.associateCopyOfValue({}, "k", hostile()) end,
  function() return bk.each(hostile(), identity) end,
  function() return bk.reduce(hostile(), 0, function(a, x) return a + x end) end,
  function() return bk.corresponds(hostile(), hostile(), function() return true end) end,
}
local failures = 0
for round = 1, 200 do
  for i, f in ipairs(calls) do
    local ok, err = pcall(f)
    if not ok then failures = failures + 1; if round == 1 then print("call", i, err) end end
  end
end
print("failures", failures)
-- Still working: no leaked nesting ("C stack overflow") or memory state.
local m = bk.map(hostile(), function(x) return x * 10 end)
print("map", #m, m[1], m[5], m[6])
local r = bk.performSelect(hostile(), function(x) return x % 2 == 1 end)
print("performSelect", r[1], r[2], r[3], r[4])
print("after", pcall(bk.map, { 1, 2 }, identity))
