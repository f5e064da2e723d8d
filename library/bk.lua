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

---A collection of a BlocksKit kind: a Lua table with the kind's metatable. List kinds keep their
---elements at `c[1] .. c[#c]`. Every helper is also a method: `c:map(f)`, `c:bk_map(f)`.
---@class bk.collection: table
---@field count fun(self: bk.collection): integer
---@class bk.array: bk.collection
---@class bk.dictionary: bk.collection
---@class bk.set: bk.collection
---@field add fun(self: bk.set, v: any): boolean
---@field remove fun(self: bk.set, v: any): boolean
---@field contains fun(self: bk.set, v: any): boolean
---@class bk.orderedSet: bk.set
---@class bk.indexSet: bk.set

---@alias bk.block fun(...: any): any

---Marks `t` as an array in place (a new table when nil) and returns it.
---@param t? table
---@return bk.array
function bk.array(t) end

---Marks `t` as a dictionary in place (a new table when nil) and returns it.
---@param t? table
---@return bk.dictionary
function bk.dictionary(t) end

---A new set of the elements of `c` (a dictionary's values), first occurrence kept.
---@param c? table
---@return bk.set
function bk.set(c) end

---A new ordered set of the elements of `c`, first occurrence kept, in order.
---@param c? table
---@return bk.orderedSet
function bk.orderedSet(c) end

---A new index set: of the non-negative integers in `c`, or of `first .. first + count - 1`.
---@param first table|integer|nil
---@param count? integer defaults to 1
---@return bk.indexSet
function bk.indexSet(first, count) end

---@param c table
---@return "array"|"dictionary"|"set"|"orderedSet"|"indexSet"
function bk.kind(c) end

---A unique sentinel standing for nil where nil cannot be stored; `tostring(bk.null) == "null"`.
---@type userdata
bk.null = nil

---Calls `f(value)` (dictionaries: `f(key, value)`) on every element, in order.
---@param c table
---@param f bk.block
function bk.each(c, f) end

---Like `each`; order not promised.
---@param c table
---@param f bk.block
function bk.apply(c, f) end

---The first element (dictionary: value) for which `f` is truthy, else nil.
---@param c table
---@param f bk.block
---@return any
function bk.match(c, f) end

---A new collection of the same kind with the elements for which `f` is truthy.
---@generic C: table
---@param c C
---@param f bk.block
---@return C
function bk.select(c, f) end

---A new collection of the same kind with the elements for which `f` is falsy.
---@generic C: table
---@param c C
---@param f bk.block
---@return C
function bk.reject(c, f) end

---A new array of results (dictionaries: a new dictionary key -> result); nil results are `bk.null`.
---@param c table
---@param f bk.block
---@return bk.array|bk.dictionary
function bk.map(c, f) end

---Folds `f(acc, value)` (dictionaries: `f(acc, key, value)`) from `initial`.
---@param c table
---@param initial any
---@param f fun(acc: any, ...: any): any
---@return any
function bk.reduce(c, initial, f) end

---Like `reduce`; `initial` and every result must be integers.
---@param c table
---@param initial integer
---@param f fun(acc: integer, ...: any): integer
---@return integer
function bk.reduceInteger(c, initial, f) end

---Like `reduce`; `initial` and every result must be numbers; returns a float.
---@param c table
---@param initial number
---@param f fun(acc: number, ...: any): number
---@return number
function bk.reduceFloat(c, initial, f) end

---True when `f` is truthy for some element (stops at the first).
---@param c table
---@param f bk.block
---@return boolean
function bk.any(c, f) end

---True when `f` is truthy for no element (stops at the first truthy one).
---@param c table
---@param f bk.block
---@return boolean
function bk.none(c, f) end

---True when `f` is truthy for every element (stops at the first falsy one).
---@param c table
---@param f bk.block
---@return boolean
function bk.all(c, f) end

---True when both have the same count and `f(c[i], other[i])` holds for every i (dictionaries: by key).
---@param c table
---@param other table
---@param f fun(a: any, b: any): any
---@return boolean
function bk.corresponds(c, other, f) end

---Keeps in `c` the elements for which `f` is truthy, in place; returns `c`.
---@generic C: table
---@param c C
---@param f bk.block
---@return C
function bk.performSelect(c, f) end

---Removes from `c` the elements for which `f` is truthy, in place; returns `c`.
---@generic C: table
---@param c C
---@param f bk.block
---@return C
function bk.performReject(c, f) end

---Replaces each element of `c` with `f`'s result, in place (nil: `bk.null`); returns `c`.
---@generic C: table
---@param c C
---@param f bk.block
---@return C
function bk.performMap(c, f) end

-- Associated objects

---@alias bk.object table|userdata|function|thread

---Associates `value` with `obj` under `key` (nil removes it). Never keeps `obj` alive.
---@param obj bk.object
---@param key any
---@param value any
function bk.associateValue(obj, key, value) end

---Same as `associateValue` (a Lua state runs one thread at a time).
---@param obj bk.object
---@param key any
---@param value any
function bk.atomicallyAssociateValue(obj, key, value) end

---Associates a shallow copy of a table `value` (other values as they are).
---@param obj bk.object
---@param key any
---@param value any
function bk.associateCopyOfValue(obj, key, value) end

---Same as `associateCopyOfValue`.
---@param obj bk.object
---@param key any
---@param value any
function bk.atomicallyAssociateCopyOfValue(obj, key, value) end

---Associates `value` without keeping it alive; reads nil once it is collected.
---@param obj bk.object
---@param key any
---@param value any
function bk.weaklyAssociateValue(obj, key, value) end

---@param obj bk.object
---@param key any
---@return any
function bk.associatedValueForKey(obj, key) end

---Removes every association of `obj`.
---@param obj bk.object
function bk.removeAllAssociatedObjects(obj) end

-- Invocation

---@class bk.Invocation: userdata
---@field target any settable
---@field block fun(target: any, ...: any): ...
---@field invoke fun(self: bk.Invocation, ...: any): ... returns block(target, ...)

---An invocation of `f` on `target`; `inv:invoke()` returns `f(inv.target)`.
---@param target any
---@param f fun(target: any, ...: any): ...
---@return bk.Invocation
function bk.invocationWithTarget(target, f) end

-- Block execution

-- Timers

-- Observation

-- Dynamic delegates

-- Event handlers

return bk
