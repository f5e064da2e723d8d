-- A tour of BlocksBridge: BlocksKit's block helpers for Lua 5.4, implemented in Swift.
-- Run it with: scripts/bklua examples/tour.lua
-- Each section shows one family; it grows as the bridge does.

local bk = require "bk"
print("BlocksBridge " .. bk.version() .. " on " .. _VERSION)

-- 1. The module: every bk.NAME is also the global bk_NAME in bklua (in the stock interpreter,
--    once the script calls bk.installGlobals()).
if bk_version == nil then bk.installGlobals() end
print("require 'bk' is the bk global:", require("bk") == bk)
print("bk_version is bk.version:", bk_version == bk.version)

-- 2. Mistakes give Lua's standard messages, never a crash.
local _, err = pcall(bk.installGlobals, 42)
print("bad argument ->", err)

-- 3. The helpers can be installed into any environment, e.g. a sandbox for a plugin.
local env = bk.installGlobals({ print = print })
print("installed into a plugin environment:", env.bk_version ~= nil)

-- 4. Collections (BlocksKit's NSArray/NSDictionary/NSSet/... helpers). Plain tables work; kinds add methods.
local numbers = bk.array { 1, 2, 3, 4, 5 }
print("map:", table.concat(numbers:map(function(x) return x * x end), " "))
print("select even:", table.concat(bk.select(numbers, function(x) return x % 2 == 0 end), " "))
print("reduce sum:", numbers:reduce(0, function(acc, x) return acc + x end))
print("any > 4:", numbers:any(function(x) return x > 4 end), " all > 0:", numbers:all(function(x) return x > 0 end))
local ages = bk.dictionary { ann = 31, bob = 17, cy = 45 }
local adults = ages:bk_select(function(name, age) return age >= 18 end)  -- dictionaries: bk_ names only
print("adults:", adults.ann, adults.bob, adults.cy, "(" .. bk.kind(adults) .. ")")
local tags = bk.set { "lua", "swift", "lua", "c" }
print("set:", table.concat(tags, " "), "contains swift:", tags:contains("swift"))
print("index set:", table.concat(bk.indexSet { 9, 3, 3, 0 }, " "))
print("nil results are bk.null:", bk.map({ 1, 2 }, function(x) if x > 1 then return x end end)[1])
numbers:performReject(function(x) return x > 3 end)
print("performReject in place:", table.concat(numbers, " "))

-- 5. Associated objects: attach values to any table, userdata, function or coroutine.
local button = {}
bk.associateValue(button, "title", "OK")
bk.weaklyAssociateValue(button, "owner", { name = "window" })
print("associated title:", bk.associatedValueForKey(button, "title"), "button unchanged:", next(button) == nil)
collectgarbage()
print("weak value after collection:", bk.associatedValueForKey(button, "owner"))

-- 6. Invocations: a target and a block, called later; the target can be changed.
local greet = bk.invocationWithTarget("world", function(name) return "hello, " .. name end)
print(greet:invoke())
greet.target = "Lua"
print(greet:invoke())

-- 7. Dynamic delegates: a protocol, a "class" whose delegate property is dynamic, and block properties.
local AlertDelegate = bk.protocol("TourAlertViewDelegate", {
  ["alertView:clickedButtonAtIndex:"] = {},
  alertViewShouldEnableFirstOtherButton = { returns = true, combine = "and" },
})
local Alert = {}
Alert.__index = Alert
function Alert.new(title) return setmetatable({ title = title }, Alert) end
function Alert:click(i) return self.delegate:alertViewClickedButtonAtIndex(self, i) end
bk.registerDynamicDelegate(Alert, AlertDelegate)
bk.linkDelegateMethods(Alert, { bk_clickedBlock = "alertView:clickedButtonAtIndex:" })
local alert = Alert.new("Save?")
alert.bk_clickedBlock = function(a, i) return a.title .. " -> button " .. i end
print("dynamic delegate:", alert:click(1))
local logger = { alertViewClickedButtonAtIndex = function(self, a, i) print("  real delegate saw", i) end }
alert.delegate = logger      -- the real delegate (held weakly: keep `logger`)
print("both run:", alert:click(2))

-- 8. Foundation's XMLParser, driven by blocks on its dynamic delegate.
local parser = bk.XMLParser([[<menu><item price="3">tea</item><item price="4">cake</item></menu>]])
local total = 0
parser.delegate:implementMethod("parser:didStartElement:namespaceURI:qualifiedName:attributes:",
  function(p, name, uri, qname, attributes) total = total + (tonumber(attributes.price) or 0) end)
print("XMLParser parsed:", parser:parse(), "total price", total)

-- 9. Event handlers on any table.
button = {}
bk.addEventHandler(button, function(sender, x) print("tapped with", x) end, { "touchUpInside", "touchDown" })
bk.sendActionsForControlEvents(button, "touchUpInside", 42)

-- 10. Block execution and timers: delayed blocks, queues and timers run by the event loop, which
--    bklua runs after the script until nothing is pending (bk.run() runs it from inside a script).
local handle = bk.performBlock(function() print("never printed: cancelled") end, 0.05)
handle:cancel()
print("cancelled:", handle.isCancelled)
bk.performBlock({ name = "window" }, function(obj) print("0.02 s later, with", obj.name) end, 0.02)
local queue = bk.queue("tour")
for i = 1, 3 do bk.performBlock(function() io.write("serial ", i, "\n") end, 0, queue) end
local ticks = 0
bk.scheduledTimerWithTimeInterval(0.01, function(timer)
  ticks = ticks + 1
  if ticks == 3 then
    print("timer fired 3 times; invalidating it from its own block")
    timer:invalidate()
  end
end, true)
local previous = bk.onError(function(message) print("reported:", message:match("^[^\n]*")) end)
bk.performBlock(function() error("a failing block does not stop the loop") end, 0.03)
print("bk.run() ->", bk.run(), "pending:", bk.pending())
bk.onError(previous)

-- 11. Observation: blocks called when a table's field is set (BlocksKit's block KVO).
do
  local person = { name = "Ada", address = { city = "London" } }
  bk.addObserverForKeyPath(person, "name", { "new", "old" }, function(p, change)
    print(string.format("name: %s -> %s", change.old, change.new))
  end)
  bk.addObserverForKeyPath(person, "address.city", { "new" }, function(p, change)
    print("city is now " .. change.new)
  end)
  person.name = "Grace"                      -- name: Ada -> Grace
  person.address = { city = "New York" }     -- city is now New York (a middle object replaced)
  person.address.city = "Arlington"          -- city is now Arlington
  local keys = 0
  for _ in pairs(person) do keys = keys + 1 end
  print("still a normal table: " .. keys .. " fields, observers: " .. #bk.observers(person))
  bk.removeAllBlockObservers(person)
  print("restored, metatable:", getmetatable(person))
end

-- 11b. Every core: workers are other Lua states on threads of their own; values cross by copy.
do
  local function primes(limit)          -- pure Lua, no state of its own: transferable
    local count = 0
    for n = 2, limit do
      local prime = true
      for d = 2, math.floor(math.sqrt(n)) do if n % d == 0 then prime = false break end end
      if prime then count = count + 1 end
    end
    return count
  end
  local w = bk.worker(primes, 20000)    -- runs on another thread; this one goes on
  print("primes below 20000:", w:result(), "worker?", bk.isWorker())
  local counts = bk.parallelMap({ 5000, 10000, 15000, 20000 }, primes)   -- over the worker pool
  print("parallelMap:", table.concat(counts, " "), "on " .. bk.workerCount() .. " workers")
  local co = coroutine.create(print)
  print(bk.isTransferable(function() return co end))   -- false  upvalue 'co' of the value is a coroutine
  local ch = bk.channel()
  bk.worker(function(out) for i = 1, 3 do out:send(i * i) end out:close() end, ch)
  for v in function() return ch:receive() end do io.write(v, " ") end   -- 1 4 9
  print()
end

-- 12. Embedding: the same module loads in the stock interpreter as a C module
--    (scripts/build-module, then LUA_CPATH=".build/lua/?.so;;" lua5.4 examples/tour.lua) and in
--    Swift hosts (examples/host). Every name is in docs/reference.md and, for editors, library/bk.lua.
print("running in:", arg and arg[-1] or "a Swift host")

-- 13. The bklua prompt: `scripts/bklua` with no script is an interactive Lua with the loop alive. Try
--   t = bk.scheduledTimerWithTimeInterval(2, function() print("tick") end, true)
-- and keep typing (the ticks print above your line), Tab after `string.fo` or `bk_ma`, a table as
-- an expression (`{1, {x = 2}}`), and Ctrl-C on `while true do end`.

-- 14. Tasks: sequential async code on the loop. A task suspends at bk.sleep / bk.await while the
--    loop runs other work; at the top level (here, the prompt, stock lua5.4) they run the loop.
do
  local function fetch(name, seconds)
    bk.sleep(seconds)                         -- suspends this task only
    return name .. " fetched"
  end
  local a = bk.async(fetch, "a", 0.03)
  local b = bk.async(fetch, "b", 0.01)
  local i, first = bk.awaitAny({ a, b })
  print("first done:", i, first)            -- 2  b fetched
  local all = bk.awaitAll({ a, b })
  print("all:", all[1][1], all[2][1])        -- a fetched  b fetched
  -- Blocks of the helpers may suspend the calling task too.
  local doubled = bk.await(bk.async(function()
    return bk.map({ 1, 2, 3 }, function(x) bk.sleep(0.001) return x * 2 end)
  end))
  print("mapped with pauses:", table.concat(doubled, " "))
  -- Cancellation raises bk.cancelled where the task waits: cleanups run.
  local slow = bk.async(function()
    local _, why = pcall(bk.sleep, 60)
    print("slow task stopped:", why == bk.cancelled and "cancelled" or tostring(why))
  end)
  slow:cancel()
  local lazy = bk.async(function() bk.sleep(1) end)
  local okAwait, timeout = pcall(bk.await, lazy, 0.01)
  print("with a timeout:", okAwait, (tostring(timeout):match("timed out")))  -- false  timed out
  lazy:cancel()                              -- it went on until cancelled
  -- debounce: one call per burst; unref: a progress timer that does not keep the script alive.
  local save = bk.debounce(function(text) print("saved:", text) end, 0.01)
  save("a"); save("ab"); save("abc")         -- saved: abc (once)
  bk.scheduledTimerWithTimeInterval(0.5, function() print("progress...") end, true):unref()
end

-- The end: bklua runs the loop until nothing is pending (the debounced save above); the stock
-- interpreter does not, so a script meant for both ends with bk.run().
bk.run()
