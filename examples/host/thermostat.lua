-- The script the example host runs. `thermostat` and `report` come from the host.
-- luacheck: globals thermostat report
-- luacheck: globals attachDelegate onOutsideReading settle temperatureReadings (the host calls these)
local bk = require "bk"

-- The script observes the temperature, which Swift code sets (the timer below calls thermostat:step).
local readings = {}
bk.addObserverForKeyPath(thermostat, "temperature", { "new" }, function(t, change)
  readings[#readings + 1] = change.new
end)
function temperatureReadings() return readings end

-- The script decides the target; the host observes it.
thermostat.target = 21.5
thermostat:note("target set by the script")

-- A thermostat's delegate, implemented in Lua on its dynamic delegate (the host calls this too).
function attachDelegate(t)
  local delegate = bk.dynamicDelegate(t)
  delegate:implementMethod("thermostatShouldChange", function(sender)
    return sender.room ~= "cellar"  -- the cellar stays as it is
  end)
  delegate:implementMethod("thermostatDidReachTarget", function(sender, temperature)
    report(string.format("%s reached %.1f", sender.room, temperature))
  end)
end
attachDelegate(thermostat)

-- Scheduled blocks: a timer steps the thermostat until it is there; a delayed block notes the time.
bk.scheduledTimerWithTimeInterval(0.01, function(timer)
  if thermostat:step(0.5) == thermostat.target then timer:invalidate() end
end, true)
bk.performBlock(function() thermostat:note("a delayed block ran") end, 0.02)

-- Called by the host with typed arguments; returns how many steps it took.
function settle(stepSize, limit)
  local steps = 0
  while thermostat.temperature ~= thermostat.target and steps < limit do
    thermostat:step(stepSize)
    steps = steps + 1
  end
  return steps
end

-- Called later by the host from another thread (on the loop, through LuaRef.callOnLoop): answers
-- through the Swift closure it is given.
function onOutsideReading(celsius, reply)
  reply(string.format("%s noted %.1f outside", thermostat.room, celsius))
end

return bk.version()
