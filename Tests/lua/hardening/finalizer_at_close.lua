-- Finalizers that call bk functions while the state closes: a clear error, never a crash.
-- luacheck: globals FINALIZER (a global, so that it lives until the state closes)
local names = {}
for name, value in pairs(bk) do
  if type(value) == "function" then names[#names + 1] = name end
end
table.sort(names)
local timer = bk.timerWithTimeInterval(100, function() end, true)  -- alive, not pending
local handle = bk.performBlock(function() end, 100)
bk.cancelBlock(handle)
local function probe()
  local ok, err = pcall(bk.performBlock, function() end, 0)
  print("performBlock at close:", ok, err)
  for _, name in ipairs(names) do
    if name ~= "run" then
      pcall(bk[name], function() end, 0)
      pcall(bk[name], {}, function() end)
    end
  end
  pcall(function() timer:invalidate() end)
  pcall(function() return timer.isValid end)
  pcall(function() handle:cancel() end)
  print("probed", #names)
end
FINALIZER = setmetatable({}, { __gc = probe })
-- The script ends with nothing pending: bklua closes the state, and the finalizer runs then.
