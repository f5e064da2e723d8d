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

-- 4. Embedding: the same module loads in the stock interpreter as a C module
--    (scripts/build-module, then LUA_CPATH=".build/lua/?.so;;" lua5.4 examples/tour.lua) and in
--    Swift hosts (examples/host). Every name is in docs/reference.md and, for editors, library/bk.lua.
print("running in:", arg and arg[-1] or "a Swift host")
