-- A tour of BlocksBridge: BlocksKit's block helpers for Lua 5.4, implemented in Swift.
-- Run it with: scripts/bklua examples/tour.lua
-- Each section shows one family; it grows as the bridge does.

local bk = require "bk"
print("BlocksBridge " .. bk.version() .. " on " .. _VERSION)

-- 1. The module: every bk.NAME is also the global bk_NAME in bklua.
print("require 'bk' is the bk global:", require("bk") == bk)
print("bk_version is bk.version:", bk_version == bk.version)

-- 2. Mistakes give Lua's standard messages, never a crash.
local ok, err = pcall(bk.installGlobals, 42)
print("bad argument ->", err)

-- 3. The helpers can be installed into any environment, e.g. a sandbox for a plugin.
local env = bk.installGlobals({ print = print })
print("installed into a plugin environment:", env.bk_version ~= nil)

-- Observation: blocks called when a table's field is set (BlocksKit's block KVO).
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
