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
---elements at `c[1] .. c[#c]`. Every helper is also a method: `c:map(f)`, `c:bk_map(f)` (the same
---function as `bk.map`, which takes the collection first); a dictionary answers only its own keys
---and the `bk_` names (`d:bk_map(f)`).
---@class bk.collection: table
local Collection = {}
---`bk.count`: `#c` up to the first nil for list kinds, the number of keys for dictionaries; with
---`f`, how many elements (pairs) `f` is truthy for.
---@param f? bk.block
---@return integer
function Collection:count(f) end
---An array of `T` (`bk.array<string>`): what `bk.array` marks and `map` returns.
---@class bk.array<T>: bk.collection, { [integer]: T }
local Array = {}
---Calls `f(value)` on every element, in order.
---@generic T
---@param self bk.array<T>
---@param f fun(value: T)
function Array:each(f) end
---A new array of `f(value)` (a nil result is stored as `bk.null`).
---@generic T, U
---@param self bk.array<T>
---@param f fun(value: T): U
---@return bk.array<U>
function Array:map(f) end
---`map` on the worker pool (see `bk.parallelMap`).
---@generic T, U
---@param self bk.array<T>
---@param f fun(value: T): U
---@return bk.array<U>
function Array:parallelMap(f) end
---A new array with the elements for which `f` is truthy.
---@generic T
---@param self bk.array<T>
---@param f fun(value: T): any
---@return bk.array<T>
function Array:select(f) end
---A new array with the elements for which `f` is falsy.
---@generic T
---@param self bk.array<T>
---@param f fun(value: T): any
---@return bk.array<T>
function Array:reject(f) end
---The first element for which `f` is truthy, else nil.
---@generic T
---@param self bk.array<T>
---@param f fun(value: T): any
---@return T|nil
function Array:match(f) end
---Folds `f(acc, value)` from `initial`.
---@generic T, A
---@param self bk.array<T>
---@param initial A
---@param f fun(acc: A, value: T): A
---@return A
function Array:reduce(initial, f) end

---A dictionary from `K` to `V`: what `bk.dictionary` marks. Its helpers get `(key, value)`; as methods
---it answers only their `bk_` names (`d:bk_map(f)`).
---@class bk.dictionary<K, V>: bk.collection, { [K]: V }
local Dictionary = {}
---Calls `f(key, value)` on every key.
---@generic K, V
---@param self bk.dictionary<K, V>
---@param f fun(key: K, value: V)
function Dictionary:bk_each(f) end
---A new dictionary `key -> f(key, value)`.
---@generic K, V, U
---@param self bk.dictionary<K, V>
---@param f fun(key: K, value: V): U
---@return bk.dictionary<K, U>
function Dictionary:bk_map(f) end
---A new dictionary with the pairs for which `f` is truthy.
---@generic K, V
---@param self bk.dictionary<K, V>
---@param f fun(key: K, value: V): any
---@return bk.dictionary<K, V>
function Dictionary:bk_select(f) end
---A new dictionary with the pairs for which `f` is falsy.
---@generic K, V
---@param self bk.dictionary<K, V>
---@param f fun(key: K, value: V): any
---@return bk.dictionary<K, V>
function Dictionary:bk_reject(f) end

---A set of `T` (raw equality), in insertion order.
---@class bk.set<T>: bk.collection, { [integer]: T }
local Set = {}
---Adds `v` (appended; index sets: in order); true when it was not there.
---@generic T
---@param self bk.set<T>
---@param v T
---@return boolean added
function Set:add(v) end
---Removes `v` (later elements move down); true when it was there.
---@generic T
---@param self bk.set<T>
---@param v T
---@return boolean removed
function Set:remove(v) end
---Membership by raw equality (constant time).
---@generic T
---@param self bk.set<T>
---@param v T
---@return boolean
function Set:contains(v) end
---A new array of `f(value)`.
---@generic T, U
---@param self bk.set<T>
---@param f fun(value: T): U
---@return bk.array<U>
function Set:map(f) end
---A new set with the elements for which `f` is truthy.
---@generic T
---@param self bk.set<T>
---@param f fun(value: T): any
---@return bk.set<T>
function Set:select(f) end
---A new set with the elements for which `f` is falsy.
---@generic T
---@param self bk.set<T>
---@param f fun(value: T): any
---@return bk.set<T>
function Set:reject(f) end

---An ordered set of `T`: a set that promises its order.
---@class bk.orderedSet<T>: bk.set<T>

---Non-negative integers, unique, ascending.
---@class bk.indexSet: bk.set<integer>

---@alias bk.block fun(...: any): any

---Marks `t` as an array in place (a new table when nil) and returns it.
---@generic T
---@param t? T[]
---@return bk.array<T>
function bk.array(t) end

---Marks `t` as a dictionary in place (a new table when nil) and returns it.
---@generic K, V
---@param t? table<K, V>
---@return bk.dictionary<K, V>
function bk.dictionary(t) end

---A new set of the elements of `c` (a dictionary's values), first occurrence kept.
---@generic T
---@param c? T[]|table<any, T>
---@return bk.set<T>
function bk.set(c) end

---A new ordered set of the elements of `c`, first occurrence kept, in order.
---@generic T
---@param c? T[]|table<any, T>
---@return bk.orderedSet<T>
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

---Like `each`; order not promised: concurrent on the worker pool when `f` is transferable and holds
---no table of its own (see `bk.parallelMap`).
---@param c table
---@param f bk.block
function bk.apply(c, f) end

---`map` computed on the worker pool (arrays and dictionaries, a transferable block holding no table
---of its own, enough work): same results in the same order; the first block error raised.
---@generic C: table
---@param c C
---@param f bk.block
---@return table
function bk.parallelMap(c, f) end

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
---@generic T, U
---@param c T[]|bk.collection
---@param f fun(...: any): U
---@return bk.array<U>|bk.dictionary<any, U>
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

-- Every helper of the Collections family is also a method of every kind: the function `bk.NAME`,
-- called as `c:NAME(...)` (the kinds above declare closer types for some).
Collection.each = bk.each
Collection.apply = bk.apply
Collection.parallelMap = bk.parallelMap
Collection.match = bk.match
Collection.select = bk.select
Collection.reject = bk.reject
Collection.map = bk.map
Collection.reduce = bk.reduce
Collection.reduceInteger = bk.reduceInteger
Collection.reduceFloat = bk.reduceFloat
Collection.any = bk.any
Collection.none = bk.none
Collection.all = bk.all
Collection.corresponds = bk.corresponds
Collection.performSelect = bk.performSelect
Collection.performReject = bk.performReject
Collection.performMap = bk.performMap

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

---A queue blocks run on: `bk.mainQueue` (the loop's thread), `bk.backgroundQueue`, or `bk.queue(...)`.
---@class bk.Queue
---@field label string
---@field isConcurrent boolean
---@field isMain boolean

---A scheduled block.
---@class bk.BlockHandle
---@field isCancelled boolean
---@field isFinished boolean
---@field queue bk.Queue
local BlockHandle = {}
---The block will not run; after it ran, or a second time, does nothing.
function BlockHandle:cancel() end
---It still runs while the loop runs, but does not keep the loop alive.
---@return bk.BlockHandle self
function BlockHandle:unref() end
---Undoes `unref()`.
---@return bk.BlockHandle self
function BlockHandle:ref() end

---The loop's own queue: blocks run on the thread running `bk.run`.
---@type bk.Queue
bk.mainQueue = nil
---Dispatch's global concurrent queue: blocks run on worker threads.
---@type bk.Queue
bk.backgroundQueue = nil

---Runs `f(obj)` (or `f()`) after `delay` seconds on `queue` (default `bk.mainQueue`).
---@overload fun(f: function, delay: number, queue?: bk.Queue): bk.BlockHandle
---@param obj any
---@param f fun(obj: any)
---@param delay number seconds, finite; negative means now
---@param queue? bk.Queue
---@return bk.BlockHandle
function bk.performBlock(obj, f, delay, queue) end

---`bk.performBlock` on `bk.backgroundQueue`.
---@overload fun(f: function, delay: number): bk.BlockHandle
---@param obj any
---@param f fun(obj: any)
---@param delay number
---@return bk.BlockHandle
function bk.performBlockInBackground(obj, f, delay) end

---Same as `handle:cancel()`.
---@param handle bk.BlockHandle
function bk.cancelBlock(handle) end

---A new serial (default) or concurrent queue.
---@param label string
---@param kind? "serial"|"concurrent"
---@return bk.Queue
function bk.queue(label, kind) end

---Runs the loop until nothing is pending (true), `bk.stop()` (false) or `seconds` passed (false).
---@param seconds? number
---@return boolean idle
function bk.run(seconds) end

---Ends the innermost running `bk.run`.
function bk.stop() end

---How many blocks and timers keep `bk.run` alive.
---@return integer
function bk.pending() end

---Sets the handler for errors in callbacks (`f(messageWithTraceback, errorValue)`); returns the
---previous one. `nil` restores the default (stderr); no argument only reads.
---@param f? fun(message: string, err: any)
---@return fun(message: string, err: any)|nil previous
function bk.onError(f) end

---Seconds on a monotonic clock.
---@return number
function bk.now() end

---The calling OS thread's id.
---@return integer
function bk.threadId() end

-- Workers

---A Lua function running in a worker state (`bk.worker`).
---@class bk.Worker
---@field isFinished boolean
---@field isCancelled boolean
local Worker = {}
---The worker's results (copied back; the same again on later calls); raises its error, or
---`bk.cancelled` once cancelled. The same as `bk.await(w)`: suspends the running task, else runs
---the caller's loop while it waits.
---@async
---@return any ...
function Worker:result() end
---Stops the worker (even an endless loop); does nothing once it finished.
function Worker:cancel() end

---A queue of copied values shared between states.
---@class bk.Channel
---@field isClosed boolean
---@field count integer
---@field capacity integer?
local Channel = {}
---Copies `v` in; waits while full (suspending the running task, else running the loop); an error
---once closed.
---@async
---@param v any
function Channel:send(v) end
---The next value, or nil and "timed out" / "closed". Waits like `send`.
---@async
---@param timeout? number
---@return any value
---@return "timed out"|"closed"|nil reason
function Channel:receive(timeout) end
---Later sends fail; receivers drain what is queued, then get nil, "closed".
function Channel:close() end

---Runs `f(...)` in a fresh worker state on a thread of its own (f and the arguments are copied).
---@param f function
---@param ... any
---@return bk.Worker
function bk.worker(f, ...) end

---True when `v` can be copied to another state (a worker's argument, a channel message); else false
---and the reason. Whether `apply` / `parallelMap` use the pool is `bk.canParallelize(f)`.
---@param v any
---@return boolean
---@return string? reason
function bk.isTransferable(v) end

---True when `apply` / `parallelMap` may run `f` on the pool (transferable, every table it
---captures is frozen, and it assigns to none of its upvalues); else false and the reason.
---@param f function
---@return boolean
---@return string? reason
function bk.canParallelize(f) end

---A deep read-only view of `t` (writes raise; reads, `#`, `ipairs`, `pairs` work). Copied to each
---pool state once and reused there. `t` must not change afterwards.
---@generic T: table
---@param t T
---@return T
function bk.freeze(t) end

---True when `v` is a frozen view (`bk.freeze`).
---@param v any
---@return boolean
function bk.isFrozen(v) end

---The number of pool states `apply` and `parallelMap` use (default: one per core).
---@return integer
function bk.workerCount() end

---Sets the pool's size (1 ... 256).
---@param n integer
function bk.setWorkerCount(n) end

---True inside a worker state.
---@return boolean
function bk.isWorker() end

---A new channel (unbounded without `capacity`).
---@param capacity? integer
---@return bk.Channel
function bk.channel(capacity) end

-- Timers

---A timer on the loop.
---@class bk.Timer
---@field isValid boolean
---@field timeInterval number
---@field repeats boolean
local Timer = {}
---Stops the timer for good (also from inside its own block).
function Timer:invalidate() end
---Runs the block now; a non-repeating timer is then invalid.
function Timer:fire() end
---Starts a timer made by `bk.timerWithTimeInterval`.
---@return bk.Timer
function Timer:schedule() end
---It still fires while the loop runs, but does not keep the loop alive.
---@return bk.Timer self
function Timer:unref() end
---Undoes `unref()`.
---@return bk.Timer self
function Timer:ref() end

---A timer already on the loop: `f(timer)` after `interval` seconds, repeatedly when `repeats`.
---@param interval number seconds, finite (at least 0.1 ms)
---@param f fun(timer: bk.Timer)
---@param repeats? boolean default false
---@return bk.Timer
function bk.scheduledTimerWithTimeInterval(interval, f, repeats) end

---A timer that starts on `timer:schedule()`.
---@param interval number
---@param f fun(timer: bk.Timer)
---@param repeats? boolean
---@return bk.Timer
function bk.timerWithTimeInterval(interval, f, repeats) end

-- Observation

---@alias bk.ObservationOption "new"|"old"|"initial"|"prior"|"distinct"

---Flags as list entries (`{"new", "old"}`) or keys (`{new = true, old = true}`); unknown keys are errors.
---@class bk.ObservationOptions: { [integer]: bk.ObservationOption }
---@field new? boolean
---@field old? boolean
---@field initial? boolean
---@field prior? boolean
---@field distinct? boolean
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

---A delegate protocol (`bk.protocol`).
---@class bk.Protocol
---@field name string
---@field methods table<string, {required: boolean, returns: any, combine: "and"|"or"|nil}>

---The one dynamic delegate of an object for a protocol. Also has the protocol's methods.
---@class bk.DynamicDelegate
---@field realDelegate table|userdata|nil weak
---@field protocol bk.Protocol
local DynamicDelegate = {}
---@param name string method name or selector
---@param f function
function DynamicDelegate:implementMethod(name, f) end
---@param name string
function DynamicDelegate:removeBlockImplementationForMethod(name) end
---@param name string
---@return function|nil
function DynamicDelegate:blockImplementationForMethod(name) end
---@param name string
---@return boolean
function DynamicDelegate:respondsToSelector(name) end

---Foundation's XMLParser with a dynamic `XMLParserDelegate`.
---@class bk.XMLParser
---@field delegate bk.DynamicDelegate reading gives the dynamic delegate; assigning sets the real one
---@field shouldProcessNamespaces boolean
---@field shouldReportNamespacePrefixes boolean
---@field parserError string|nil
---@field lineNumber integer
---@field columnNumber integer
local XMLParser = {}
---@return boolean parsed
function XMLParser:parse() end
function XMLParser:abortParsing() end

---Declares a delegate protocol (or, without `methods`, returns the registered one).
---@param name string
---@param methods? table<string|integer, {required?: boolean, returns?: any, combine?: "and"|"or"}|true|string>
---@return bk.Protocol
function bk.protocol(name, methods) end

---The dynamic delegate of `obj` for its class's delegate protocol.
---@param obj table|userdata
---@return bk.DynamicDelegate
function bk.dynamicDelegate(obj) end

---The dynamic delegate of `obj` for its class's data source protocol.
---@param obj table|userdata
---@return bk.DynamicDelegate
function bk.dynamicDataSource(obj) end

---@param obj table|userdata
---@param protocol bk.Protocol|string
---@return bk.DynamicDelegate
function bk.dynamicDelegateForProtocol(obj, protocol) end

---@param dd bk.DynamicDelegate
---@param name string method name or selector
---@param f function gets the method's arguments
function bk.implementMethod(dd, name, f) end

---@param dd bk.DynamicDelegate
---@param name string
function bk.removeBlockImplementationForMethod(dd, name) end

---@param dd bk.DynamicDelegate
---@param name string
---@return function|nil
function bk.blockImplementationForMethod(dd, name) end

---@param dd bk.DynamicDelegate
---@param name string
---@return boolean
function bk.respondsToSelector(dd, name) end

---`obj[property]` on instances of `class` gives the dynamic delegate; assigning sets the real one.
---@param class table the instances' metatable
---@param protocol bk.Protocol|string
---@param property? string default "delegate"
function bk.registerDynamicDelegate(class, protocol, property) end

---Block properties backed by delegate methods: `{bk_willShowBlock = "willPresentAlertView"}`.
---@param class table
---@param map table<string, string>
function bk.linkDelegateMethods(class, map) end

---@param xmlString string
---@return bk.XMLParser
function bk.XMLParser(xmlString) end

-- Event handlers

---@param obj table|userdata
---@param f fun(obj: any, ...: any)
---@param events string|string[]|table<string, boolean>
function bk.addEventHandler(obj, f, events) end

---@param obj table|userdata
---@param events? string|string[]|table<string, boolean> default: every handler
function bk.removeEventHandlersForControlEvents(obj, events) end

---@param obj table|userdata
---@param events string|string[]|table<string, boolean>
---@return boolean
function bk.hasEventHandlersForControlEvents(obj, events) end

---Calls `f(obj, ...)` for each handler of any of the events; returns how many ran without error.
---@param obj table|userdata
---@param events string|string[]|table<string, boolean>
---@return integer
function bk.sendActionsForControlEvents(obj, events, ...) end

-- Tasks

---A function running as a task on the loop (`bk.async`).
---@class bk.Task
---@field isFinished boolean its function returned or raised
---@field isCancelled boolean
local Task = {}
---Its pending or next suspension raises `bk.cancelled`; a finished task is left as it is.
function Task:cancel() end
---The same as `bk.await(task, timeout)`.
---@param timeout? number
---@return any ...
function Task:result(timeout) end

---@alias bk.Awaitable bk.Task|bk.BlockHandle|bk.Timer|bk.Worker

---Starts `f(...)` as a task at once; returns when it first suspends or finishes.
---@param f async fun(...): ...
---@param ... any
---@return bk.Task
function bk.async(f, ...) end

---Waits for a task (its results; its error raised), a handle (nothing), a timer's next firing or a
---worker (its results, copied back).
---Suspends the running task, else runs the loop. Raises `bk.cancelled`, or "timed out".
---@async
---@param x bk.Awaitable
---@param timeout? number seconds
---@return any ...
function bk.await(x, timeout) end

---Suspends the running task at least `seconds`; elsewhere runs the loop that long.
---@async
---@param seconds number finite, >= 0
function bk.sleep(seconds) end

---Waits for every item; entry i is `table.pack` of item i's results. The first failure raises.
---@async
---@param list bk.Awaitable[]
---@param timeout? number
---@return table[]
function bk.awaitAll(list, timeout) end

---Waits for the first item done: its index, then its results.
---@async
---@param list bk.Awaitable[]
---@param timeout? number
---@return integer index
---@return any ...
function bk.awaitAny(list, timeout) end

---The running task, or nil.
---@return bk.Task|nil
function bk.currentTask() end

---The value a cancelled task's suspension point raises (`tostring` is "cancelled").
---@type table
bk.cancelled = nil

---A callable that runs its function once, `delay` after the latest call (`bk.debounce`).
---@class bk.Debounced
---@overload fun(...: any)
local Debounced = {}
---Drops the pending call.
function Debounced:cancel() end
---Runs the pending call now.
---@return any ...
function Debounced:flush() end

---A callable that runs its function at most once per interval (`bk.throttle`).
---@class bk.Throttled
---@overload fun(...: any): ...
local Throttled = {}
---Drops the kept (trailing) call.
function Throttled:cancel() end
---Runs the kept call now.
---@return any ...
function Throttled:flush() end

---Each call (re)schedules `f(...)` `delay` seconds after the latest call.
---@param f function
---@param delay number
---@return bk.Debounced
function bk.debounce(f, delay) end

---Runs `f` at once, then at most once per `interval` with the latest arguments.
---@param f function
---@param interval number
---@return bk.Throttled
function bk.throttle(f, interval) end

-- MARK: The collection toolbox (beyond BlocksKit). List kinds are visited in order; a dictionary's
-- elements are its values and its blocks get (key, value).

---A new array of the elements, stably sorted by `less(a, b)` (default `<`). An inconsistent `less`
---gives a permutation of the elements, never a crash or a hang.
---@param c table
---@param less? fun(a: any, b: any): boolean
---@return bk.array
function bk.sorted(c, less) end

---A new array of the elements, stably sorted by `key(v)` (computed once per element) with `<`.
---@param c table
---@param key bk.block
---@param descending? boolean
---@return bk.array
function bk.sortedBy(c, key, descending) end

---A new array of the elements in reverse order.
---@param c table
---@return bk.array
function bk.reversed(c) end

---A dictionary `key(v)` -> array of the elements with that key, in order (dictionaries: `key(k, v)`
----> dictionary of those pairs). A nil key is `bk.null`; a NaN key is an error.
---@param c table
---@param key bk.block
---@return bk.dictionary
function bk.groupBy(c, key) end

---A dictionary `key(v)` (default: the element) -> count.
---@param c table
---@param key? bk.block
---@return bk.dictionary
function bk.countBy(c, key) end

---Two collections of `c`'s kind: the elements for which `f` is truthy, then the rest.
---@param c table
---@param f bk.block
---@return bk.collection yes
---@return bk.collection no
function bk.partition(c, f) end

---A new array of the first element for each distinct `key(v)` (default: the element), in order.
---@param c table
---@param key? bk.block
---@return bk.array
function bk.uniq(c, key) end

---The keys (a list's: 1 .. n), as an array in the order of `bk.values`.
---@param c table
---@return bk.array
function bk.keys(c) end

---The values (a list's elements), as an array in the order of `bk.keys`.
---@param c table
---@return bk.array
function bk.values(c) end

---An array of `{a[i], b[i], ...}` (arrays) up to the shortest collection.
---@param a table
---@param ... table
---@return bk.array
function bk.zip(a, ...) end

---A new array with nested list kinds and plain tables with `t[1] ~= nil` spliced in, `depth`
---levels (default 1).
---@param c table
---@param depth? integer
---@return bk.array
function bk.flatten(c, depth) end

---`bk.flatten(bk.map(c, f), 1)`, as an array.
---@param c table
---@param f bk.block
---@return bk.array
function bk.flatMap(c, f) end

---`map` without the nil / `bk.null` results (an array, or a dictionary for dictionaries).
---@param c table
---@param f bk.block
---@return table
function bk.compactMap(c, f) end

---A new array of elements `i .. j` (default: to the end); negative positions count from the end.
---@param c table
---@param i integer
---@param j? integer
---@return bk.array
function bk.slice(c, i, j) end

---A new array of the first `n` elements.
---@param c table
---@param n integer
---@return bk.array
function bk.take(c, n) end

---A new array of the elements after the first `n`.
---@param c table
---@param n integer
---@return bk.array
function bk.drop(c, n) end

---A new array of the leading elements for which `f` is truthy.
---@param c table
---@param f bk.block
---@return bk.array
function bk.takeWhile(c, f) end

---A new array of the elements from the first for which `f` is falsy.
---@param c table
---@param f bk.block
---@return bk.array
function bk.dropWhile(c, f) end

---An array of arrays of `size` elements (the last may be shorter).
---@param c table
---@param size integer at least 1
---@return bk.array
function bk.chunked(c, size) end

---The first element, or an array of the first `n`.
---@param c table
---@param n? integer
---@return any
function bk.first(c, n) end

---The last element, or an array of the last `n`.
---@param c table
---@param n? integer
---@return any
function bk.last(c, n) end

---The first position of `v` by raw equality (a dictionary: its key), or nil.
---@param c table
---@param v any
---@return any
function bk.indexOf(c, v) end

---The sum of the elements (or of `f(v)`) by Lua's `+`; 0 for an empty collection.
---@param c table
---@param f? bk.block
---@return number|any
function bk.sum(c, f) end

---The element with the least `key(v)` (default: the element), first one on ties; nil when empty.
---@param c table
---@param key? bk.block
---@return any
function bk.min(c, key) end

---The element with the greatest `key(v)` (default: the element), first one on ties; nil when empty.
---@param c table
---@param key? bk.block
---@return any
function bk.max(c, key) end

---The number of elements (for which `f` is truthy).
---@param c table
---@param f? bk.block
---@return integer
function bk.count(c, f) end

---`a`'s elements, then `b`'s not in `a`: a set when `a` is a set, an index set when `a` is an index
---set, else an ordered set.
---@param a table
---@param b table
---@return bk.set
function bk.union(a, b) end

---`a`'s elements that are in `b` (of the kind `bk.union` gives).
---@param a table
---@param b table
---@return bk.set
function bk.intersection(a, b) end

---`a`'s elements that are not in `b` (of the kind `bk.union` gives).
---@param a table
---@param b table
---@return bk.set
function bk.difference(a, b) end

---The elements in exactly one of `a` and `b` (of the kind `bk.union` gives).
---@param a table
---@param b table
---@return bk.set
function bk.symmetricDifference(a, b) end

---True when every element of `a` is in `b` (any list kinds, compared as sets).
---@param a table
---@param b table
---@return boolean
function bk.isSubset(a, b) end

---True when every element of `b` is in `a`.
---@param a table
---@param b table
---@return boolean
function bk.isSuperset(a, b) end

---True when `a` and `b` have no element in common.
---@param a table
---@param b table
---@return boolean
function bk.isDisjoint(a, b) end


-- The toolbox helpers are methods of every kind too (`c:sorted()`, `d:bk_keys()`).
Collection.sorted = bk.sorted
Collection.sortedBy = bk.sortedBy
Collection.reversed = bk.reversed
Collection.groupBy = bk.groupBy
Collection.countBy = bk.countBy
Collection.partition = bk.partition
Collection.uniq = bk.uniq
Collection.keys = bk.keys
Collection.values = bk.values
Collection.zip = bk.zip
Collection.flatten = bk.flatten
Collection.flatMap = bk.flatMap
Collection.compactMap = bk.compactMap
Collection.slice = bk.slice
Collection.take = bk.take
Collection.drop = bk.drop
Collection.takeWhile = bk.takeWhile
Collection.dropWhile = bk.dropWhile
Collection.chunked = bk.chunked
Collection.first = bk.first
Collection.last = bk.last
Collection.indexOf = bk.indexOf
Collection.sum = bk.sum
Collection.min = bk.min
Collection.max = bk.max
Collection.union = bk.union
Collection.intersection = bk.intersection
Collection.difference = bk.difference
Collection.symmetricDifference = bk.symmetricDifference
Collection.isSubset = bk.isSubset
Collection.isSuperset = bk.isSuperset
Collection.isDisjoint = bk.isDisjoint

return bk
