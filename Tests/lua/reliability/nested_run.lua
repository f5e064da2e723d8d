local depth, maxDepth, reported = 0, 0, false
local t = bk.scheduledTimerWithTimeInterval(0.0001, function()
  depth = depth + 1
  if depth > maxDepth then maxDepth = depth end
  local ok, e = pcall(bk.run, 0.05)
  if not ok and not reported then reported = true print("nested run failed at depth", depth, e) end
  depth = depth - 1
end, true)
bk.run(0.3)
t:invalidate()
print("max depth", maxDepth)
