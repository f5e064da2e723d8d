-- Workers and channels on the tasks engine: `bk.await(worker)`, and channel waits that suspend the
-- calling task (elsewhere they run the loop, as every wait of the engine does).
--
-- Lua, so that a wait can yield: `w:result()`, `ch:send(v)` and `ch:receive()` are Swift functions
-- that hand a wait over here once their Swift frame is gone (`continueWithCall`). Loaded with the
-- engine (an extension of TasksLibrary.swift); gets the engine's table and the natives of
-- WorkerWaits.swift; returns the channel waits Swift continues into.

local engine, native = ...

local select, error = native.select, native.error
local kinds, notify, waitFor, now = engine.kinds, engine.notify, engine.waitFor, native.now
local isWorker, pollWorker, cancelWorker = native.isWorker, native.pollWorker, native.cancelWorker
local unwatchWorker = native.unwatchWorker
local arm, disarm, tryReceive, trySend = native.arm, native.disarm, native.tryReceive, native.trySend

-- pollWorker(w [, f, arg]) -> "pending" | "done", results... | "failed", error
local function outcome(state, ...)
  if state == "pending" then return nil end
  if state == "done" then return { true, n = select("#", ...), ... } end
  return { false, (...) }
end

kinds[#kinds + 1] = {
  test = isWorker,
  begin = function() return nil end,
  poll = function(w) return outcome(pollWorker(w)) end,
  attach = function(w, waiter)
    local state, registration = pollWorker(w, notify, waiter)
    if state == "pending" then return registration end
  end,
  detach = function(w, _, registration) if registration ~= nil then unwatchWorker(w, registration) end end,
  cancel = cancelWorker,
}

-- Waits until the channel is ready for `op` ("send": room or closed; "receive": a value or
-- closed). A channel notifies a waiter once (at its next change), so the check re-arms it: arm
-- registers the waiter unless the channel is ready, in one step under the channel's lock, so no
-- change is missed between the check and the registration. True when ready, false on timeout.
local function ready(ch, op, timeout)
  local waiter, token
  local function check()
    if waiter == nil then return arm(ch, op) == nil end
    token = arm(ch, op, notify, waiter, token)
    return token == nil
  end
  local function attach(w) waiter = w end
  local function detach()
    if token ~= nil then disarm(ch, token) end
    waiter, token = nil, nil
  end
  -- Level 3: the user's ch:send / ch:receive (above this function and the Swift method).
  return waitFor(check, attach, detach, timeout, 3)
end

local function receive(ch, timeout)
  local deadline = timeout and now() + timeout
  while true do
    local got, value = tryReceive(ch)
    if got == "value" then return value end
    if got == "closed" then return nil, "closed" end
    local left = deadline and deadline - now()
    if left ~= nil and left < 0 then left = 0 end
    if not ready(ch, "receive", left) then return nil, "timed out" end
  end
end

local function send(ch, value)
  while true do
    local sent, closed = trySend(ch, value)
    if sent then return end
    if closed then error("send on a closed channel", 3) end
    ready(ch, "send")
  end
end

return { receive = receive, send = send }
