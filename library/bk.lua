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
---@param delay number seconds; negative means now
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

---Sets the handler for errors in callbacks (`f(messageWithTraceback)`); returns the previous one.
---`nil` restores the default (stderr); no argument only reads.
---@param f? fun(message: string)
---@return fun(message: string)|nil previous
function bk.onError(f) end

---Seconds on a monotonic clock.
---@return number
function bk.now() end

---The calling OS thread's id.
---@return integer
function bk.threadId() end

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

---A timer already on the loop: `f(timer)` after `interval` seconds, repeatedly when `repeats`.
---@param interval number seconds (at least 0.1 ms)
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

-- Dynamic delegates

-- Event handlers

return bk
