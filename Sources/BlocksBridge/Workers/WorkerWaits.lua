-- Workers and channels on the tasks engine: `bk.await(worker)`, and channel waits that suspend the
-- calling task (elsewhere they run the loop, as every wait of the engine does).
--
-- Lua, so that a wait can yield: `w:result()`, `ch:send(v)` and `ch:receive()` are Swift functions
-- that hand a wait over here once their Swift frame is gone (`continueWithCall`). Loaded with the
-- engine (an extension of TasksLibrary.swift); gets the engine's table and the natives of
-- WorkerWaits.swift; returns the channel waits Swift continues into. `bk.await(worker)` needs
-- nothing here: a worker is one of the engine's awaitables of Swift (LuaAwaitable).

-- The natives (WorkerWaits.swift). A worker is awaited as every awaitable of Swift is (it is a
-- LuaAwaitable: the engine's native.poll), so only channels need their own here.
-- luacheck: push ignore 631 (LuaLS reads each field on one line)
---@class bk.WorkerWaitNatives
---@field error fun(message: any, level?: integer) the global error
---@field now fun(): number the monotonic clock, in seconds
---@field arm fun(ch: userdata, sending: boolean, notify?: fun(waiter: any), waiter?: any, token?: integer): integer|false|nil nil when the channel is ready to send (sending true) or to receive; else, with notify, the token of the waiter registered for its next change (the same token while it is still registered: a channel notifies a waiter once), or false without one
---@field disarm fun(ch: userdata, token: integer) drops the waiter arm registered (its wait ended otherwise), O(1)
---@field tryReceive fun(ch: userdata): integer, any? received.value and the value, received.closed or received.empty, without waiting
---@field received table<string, integer> what tryReceive answers: received.value, .empty, .closed
---@field trySend fun(ch: userdata, value: any): boolean, boolean? true when sent, else false and whether the channel is closed, without waiting

-- luacheck: pop
---@type table, bk.WorkerWaitNatives
local engine, native = ...

local error = native.error
local notify, waitFor, now = engine.notify, engine.waitFor, native.now
local arm, disarm, tryReceive, trySend = native.arm, native.disarm, native.tryReceive, native.trySend
local RECEIVED, CLOSED = native.received.value, native.received.closed

-- Error positions (the engine's convention: a `level` counts from the function that takes it). The
-- script's call, from send and receive: 1 is themselves, 2 the Swift method that handed the wait
-- over to them once its frame was gone (ch:send, ch:receive: continueWithCall, a C frame), 3 the
-- script.
local SCRIPT = 3

-- Waits until the channel is ready to send (`sending`: room or closed) or to receive (a value or
-- closed). A channel notifies a waiter once (at its next change), so the check re-arms it: arm
-- registers the waiter unless the channel is ready, in one step under the channel's lock, so no
-- change is missed between the check and the registration. True when ready, false on timeout.
local function ready(ch, sending, timeout, level)
  local waiter, token
  local function check()
    if waiter == nil then return arm(ch, sending) == nil end
    token = arm(ch, sending, notify, waiter, token)
    return token == nil
  end
  local function attach(w) waiter = w end
  local function detach()
    if token ~= nil then disarm(ch, token) end
    waiter, token = nil, nil
  end
  return (waitFor(check, attach, detach, timeout, level + 1))  -- not a tail call: a frame, as counted
end

local function receive(ch, timeout)
  local deadline = timeout and now() + timeout
  while true do
    local got, value = tryReceive(ch)
    if got == RECEIVED then return value end
    if got == CLOSED then return nil, "closed" end
    local left = deadline and deadline - now()
    if left ~= nil and left < 0 then left = 0 end
    if not ready(ch, false, left, SCRIPT + 1) then return nil, "timed out" end
  end
end

local function send(ch, value)
  while true do
    local sent, closed = trySend(ch, value)
    if sent then return end
    if closed then error("send on a closed channel", SCRIPT) end
    ready(ch, true, nil, SCRIPT + 1)
  end
end

return { receive = receive, send = send }
