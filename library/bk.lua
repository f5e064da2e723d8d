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

---@alias bk.ObservationOption "new"|"old"|"initial"|"prior"|"distinct"

---@class bk.ObservationOptions: { [integer]: bk.ObservationOption }
---@field identifier? string use (and replace) this identifier
---@field observer? any the observation ends when this is collected

---@class bk.Change
---@field kind "setting"
---@field new? any
---@field old? any
---@field prior? boolean

---@class bk.ObservationInfo
---@field identifier string
---@field keyPaths (string|integer)[]
---@field options bk.ObservationOption[]
---@field observer? any

---Observes `keyPath` ("a.b.c" or an integer key) of a table or observable Swift object.
---`task(obj)`, or with options `task(obj, change)`.
---@param obj table|userdata
---@param keyPath string|integer
---@param options bk.ObservationOptions|fun(obj: any)
---@param task? fun(obj: any, change: bk.Change)
---@return string identifier
function bk.addObserverForKeyPath(obj, keyPath, options, task) end

---Observes several key paths: `task(obj, keyPath)`, or with options `task(obj, keyPath, change)`.
---@param obj table|userdata
---@param keyPaths (string|integer)[]
---@param options bk.ObservationOptions|fun(obj: any, keyPath: string|integer)
---@param task? fun(obj: any, keyPath: string|integer, change: bk.Change)
---@return string identifier
function bk.addObserverForKeyPaths(obj, keyPaths, options, task) end

---@param obj table|userdata
---@param keyPath string|integer
---@param identifier string
function bk.removeObserverForKeyPath(obj, keyPath, identifier) end

---@param obj table|userdata
---@param identifier string
function bk.removeObserversWithIdentifier(obj, identifier) end

---Removes every observation of `obj` (a table gets its fields and metatable back).
---@param obj table|userdata
function bk.removeAllBlockObservers(obj) end

---@param obj table|userdata
---@return bk.ObservationInfo[]
function bk.observers(obj) end

---CCEasyKVO: ends when `observer` is collected.
---@param observer any
---@param observee table|userdata
---@param keyPath string|integer
---@param options? bk.ObservationOptions
---@param f fun(object: any, change: bk.Change)
---@return string identifier
function bk.cc_easyObserve(observer, observee, keyPath, options, f) end

---@param observer any
function bk.cc_easyRemoveAllKVO(observer) end

---SJKVOController: `f(obj, key, old, new)` on every set; one observation per observer and key.
---@param obj table|userdata
---@param observer any
---@param keyOrKeys string|integer|(string|integer)[]
---@param f fun(obj: any, key: string|integer, old: any, new: any)
function bk.sj_addObserver(obj, observer, keyOrKeys, f) end

---@param obj table|userdata
---@param observer any
---@param keyOrKeys? string|integer|(string|integer)[]
function bk.sj_removeObserver(obj, observer, keyOrKeys) end

---@param obj table|userdata
function bk.sj_removeAllObservers(obj) end

---@param obj table|userdata
---@return { observer: any, keyPaths: (string|integer)[] }[]
function bk.sj_listAllObservers(obj) end

-- Dynamic delegates

-- Event handlers

return bk
