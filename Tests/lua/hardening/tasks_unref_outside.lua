-- unref() of a block queued or running on another queue: it no longer counts in bk.pending(), so
-- bk.run() does not wait for it (it counted as outstanding work until it ended). ref() counts it again.
local q = bk.queue("tasks-unref")
local h = bk.performBlock(function() end, 0, q):unref()
print("queued unref", bk.pending())
h:ref()
print("queued ref", bk.pending())
h:unref()
-- Inside the block (running on the queue's thread), an unref'd block does not count itself; the
-- main-queue block at 0.5 s does.
local seen
bk.performBlock(function() seen = bk.pending() end, 0.01, bk.backgroundQueue):unref()
local keep = bk.performBlock(function() end, 0.5)
bk.run(0.3)
print("running unref", seen)
keep:cancel()
-- A slow unref'd block does not keep bk.run() waiting.
bk.performBlock(function() local t = bk.now() while bk.now() - t < 3 do end end, 0, bk.backgroundQueue):unref()
local start = bk.now()
print("run", bk.run(), bk.now() - start < 1)
-- Awaiting an unref'd block of another queue still waits for it (outside a task: the loop's wait
-- counts it, though it keeps nothing alive).
local ran = false
local h2 = bk.performBlock(function() ran = true end, 0, bk.backgroundQueue):unref()
print("awaited", pcall(bk.await, h2, 5), ran)
