---@meta bk
-- LuaLS annotations for BlocksBridge's `bk` module. Every exported function has exactly one
-- `function bk.NAME(...) end` line here (checked by the test suite against the exported table).

---@class bk
local bk = {}

-- Core

---Sets `env.bk` and `env.bk_NAME` for every function of the module (raw sets).
---@param env? table defaults to the global table
---@return table env
function bk.installGlobals(env) end

---@return string
function bk.version() end

-- Collections

-- Associated objects

-- Invocation

-- Block execution

-- Timers

-- Observation

-- Dynamic delegates

-- Event handlers

return bk
