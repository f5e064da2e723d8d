-- The tasks engine's Swift natives (TaskPrimitives.swift) in a script's hands. They are locals of
-- TaskEngine.lua, but the debug library reaches every upvalue: a script can call `poll`, `unwatch`,
-- `runUntil`, `schedule`... with anything. Each call must return or raise a Lua error; nothing may
-- crash, hang or strand the loop's bookkeeping (the awaitables still end and stop counting).
local bk = require "bk"
bk.async(function() end)
bk.run(0.01)

-- Breadth-first over upvalues and table fields, from bk's functions (lazy ones named explicitly).
local wanted = { poll = true, unwatch = true, schedule = true, unschedule = true, finishHandle = true,
  runUntil = true, report = true, rawmetatable = true, recordCoroutineTraceback = true,
  errorReport = true, closing = true }
local natives, seen, queue = {}, {}, {}
for _, v in pairs(bk) do queue[#queue + 1] = v end
for _, k in ipairs({ "await", "async", "sleep", "awaitAll", "awaitAny", "worker" }) do queue[#queue + 1] = bk[k] end
local i = 1
while i <= #queue do
  local x = queue[i]
  i = i + 1
  if type(x) == "function" and not seen[x] then
    seen[x] = true
    for j = 1, 255 do
      local name, v = debug.getupvalue(x, j)
      if not name then break end
      if wanted[name] and type(v) == "function" then natives[name] = natives[name] or v end
      if v ~= nil then queue[#queue + 1] = v end
    end
  elseif type(x) == "table" and not seen[x] then
    seen[x] = true
    for k, v in pairs(x) do queue[#queue + 1] = k; queue[#queue + 1] = v end
  end
end
local names = {}
for name in pairs(natives) do names[#names + 1] = name end
table.sort(names)
print("natives", #names)

-- Junk scheduled through `schedule` is called by the loop later and reported: counted here.
local reports = 0
bk.onError(function() reports = reports + 1 end)

local handle = bk.performBlock(function() end, 0.02)
local timer = bk.scheduledTimerWithTimeInterval(0.01, function() end, true)
local worker = bk.worker(function() return 1 end)
local values = { n = 18, nil, true, 0, -1, 2 ^ 63, math.mininteger, math.maxinteger, 0 / 0, "x", {},
  setmetatable({}, { __index = function() error("boom") end }), print, coroutine.create(print),
  io.stdout, bk.null, bk.array({ 1 }), handle, timer }
local calls, tokens = 0, {}
for _, name in ipairs(names) do
  if name ~= "runUntil" then -- runs the loop: below, with bounded waits
    local f = natives[name]
    for a = 1, values.n do
      for b = 1, values.n do
        local ok, token = pcall(f, values[a], values[b], values[(a + b) % values.n + 1])
        -- Junk scheduled 2^63 s ahead counts as pending like any other: cancelled below.
        if ok and name == "schedule" then tokens[#tokens + 1] = token end
        calls = calls + 1
      end
    end
  end
end
print("calls", calls)

-- poll and unwatch on real awaitables: notifiers that raise, registrations that were never made.
for _, x in ipairs({ handle, timer, worker }) do
  pcall(natives.poll, x, function() error("notify raises") end, "waiter")
  for _, registration in ipairs({ 2 ^ 53, -1, math.maxinteger, 0 / 0, "1", 0 }) do
    pcall(natives.unwatch, x, registration)
  end
  for k = 1, 1000 do natives.poll(x, function() end, k) end
end
for _, deadline in ipairs({ -1, 0 / 0, 0.01 }) do pcall(natives.runUntil, {}, deadline) end
print("runUntil nil", pcall(natives.runUntil, nil, 0.01))

bk.run(0.3)
timer:invalidate()
for _, token in ipairs(tokens) do natives.unschedule(token) end
collectgarbage()
collectgarbage()
bk.run(0.1)
print("ended", tostring(handle), timer.isValid, bk.pending(), reports > 0)
