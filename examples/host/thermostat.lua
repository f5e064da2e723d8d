-- The script the example host runs. `thermostat` and `report` come from the host.
local bk = require "bk"

-- The script decides the target; the host reads it back.
thermostat.target = 21.5
thermostat:note("target set by the script")

-- Called by the host with typed arguments; returns how many steps it took.
function settle(stepSize, limit)
  local steps = 0
  while thermostat.temperature ~= thermostat.target and steps < limit do
    thermostat:step(stepSize)
    steps = steps + 1
  end
  report(string.format("%s reached %.1f in %d steps", thermostat.room, thermostat.temperature, steps))
  return steps
end

return bk.version()
