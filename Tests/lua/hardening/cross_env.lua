-- A function whose _ENV is not the caller's globals (a chunk loaded with a restricted environment)
-- keeps that environment when it crosses to a worker: a copy of the table, not the worker's globals.
-- luacheck: globals secret (the global that must not reach the restricted environment)
local env = {tostring = tostring, type = type, secret = "sandboxed"}
local f = load("return secret, os == nil, type(tostring), bk == nil", "=sandboxed", "t", env)
print("restricted", bk.worker(f):result())
-- The caller's own globals still become the worker's.
secret = "global"
print("plain", bk.worker(function() return secret, bk.isWorker(), os ~= nil end):result())
-- Through a channel too, and a closure over a restricted chunk's function.
local ch = bk.channel()
ch:send(load("return secret, print == nil", "=c", "t", {secret = "via channel"}))
local g = ch:receive()
print("channel", g())
-- bk.parallelMap / bk.apply copy blocks the same way (a block with a table environment of its
-- own runs in the caller: its state would be lost in a copy).
local m = bk.parallelMap({1, 2, 3}, load("local x = ... return x * k", "=m", "t", {k = 10}))
print("parallelMap", m[1], m[2], m[3])
-- An environment that falls back on the globals (a module's setmetatable(env, {__index = _G})):
-- its own fields cross, and it falls back on the worker's globals.
local inheriting = setmetatable({own = "mine"}, {__index = _G})
local h = load("return own, bk.isWorker(), type(string.format), rawget(_ENV, 'print') == nil", "=h", "t", inheriting)
print("inheriting", bk.worker(h):result())
print("done")
