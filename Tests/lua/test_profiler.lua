-- bklua --profile: samples by CPU time across the main code, tasks and workers; the .folded and
-- .svg files it writes (the SVG opened in headless Chromium); what a profiled run survives.
-- luacheck: globals chromiumChecked (set once: whether Chromium could run, with why not)

local BKLUA = assert(os.getenv("BKLUA"), "BKLUA must name the bklua binary")

local tmp, file = tempDir()
local function read(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local text = f:read("a")
  f:close()
  return text
end

-- Runs bklua with `options` on `script` (in tmp); returns its output (stdout and stderr), exit code.
local function profile(options, script, args)
  return shell("cd " .. tmp .. " && timeout 300 " .. BKLUA .. " " .. options .. " " .. script .. " " .. (args or ""))
end

-- The folded file's stacks: { {frames = {...}, count = n, text = line} }, and the total samples.
local function parseFolded(text)
  local stacks, total = {}, 0
  for line in text:gmatch("[^\n]+") do
    local stack, count = line:match("^(.+) (%d+)$")
    assert(stack, "not a folded line: " .. line)
    local frames = {}
    for frame in (stack .. ";"):gmatch("([^;]*);") do frames[#frames + 1] = frame end
    stacks[#stacks + 1] = { frames = frames, count = tonumber(count), text = stack }
    total = total + tonumber(count)
  end
  return stacks, total
end

-- Samples of the stacks with a frame matching `pattern` (a Lua pattern on each frame).
local function samplesIn(stacks, pattern)
  local n = 0
  for _, s in ipairs(stacks) do
    for _, frame in ipairs(s.frames) do
      if frame:find(pattern) then
        n = n + s.count
        break
      end
    end
  end
  return n
end

-- Four hot functions that each spend the same CPU time (MS milliseconds, read from their own
-- thread's clock): in the main code, in a task, in a worker (its own thread), and in a Swift
-- function (bk.isTransferable's walk, in C below the Swift function); and two waits that spend no
-- CPU time (bk.sleep runs the loop, a read blocks on a pipe). Equal iterations are no equal CPU
-- time: on a loaded machine a loop's cost per iteration differed by up to 30% between the main
-- thread and a worker, and the profiler, which samples CPU time, rightly showed that.
local hot = file("hot.lua", [[
local MS = tonumber(arg[1])
-- This thread's CPU time in nanoseconds (as CLOCK_THREAD_CPUTIME_ID: the kernel's runtime of it).
local function cpu() local f = assert(io.open("/proc/thread-self/schedstat")) local n = f:read("n") f:close() return n end
local function mainHot(ms) local stop, x = cpu() + ms * 1e6, 0 repeat for i = 1, 50000 do x = x + i % 3 end until cpu() >= stop return x end
local function taskHot(ms) local stop, x = cpu() + ms * 1e6, 0 repeat for i = 1, 50000 do x = x + i % 3 end until cpu() >= stop return x end
local big = {}
for i = 1, 5000 do big[i] = { i, tostring(i) } end
local function swiftHot(ms) local stop = cpu() + ms * 1e6 repeat bk.isTransferable(big) until cpu() >= stop end
local function blockedSleep() bk.sleep(0.4) end
local function blockedRead() local p = io.popen("sleep 0.4; echo done") local s = p:read("a") p:close() return s end
local w = bk.worker(function(ms)
  local function cpu() local f = assert(io.open("/proc/thread-self/schedstat")) local n = f:read("n") f:close() return n end
  local function workerHot(m) local stop, x = cpu() + m * 1e6, 0 repeat for i = 1, 50000 do x = x + i % 3 end until cpu() >= stop return x end
  local x = workerHot(ms)  -- not a tail call: a tail-called function has no name to show
  return x
end, MS)
local t = bk.async(function() local x = taskHot(MS) return x end)
mainHot(MS)
bk.await(t)
w:result()
swiftHot(MS)
blockedSleep()
blockedRead()
]])

local MS = 150

test("hot functions in the main code, a task, a worker and Swift come out on top, in equal shares (+-15%)", function()
  -- At 5000 samples per CPU second each gets ~750 samples.
  local out, code = profile("--profile=hot.folded --profile-rate=5000", hot, MS)
  eq(code, 0, out)
  local text = assert(read(tmp .. "/hot.folded"), "no hot.folded written\n" .. out)
  local stacks, total = parseFolded(text)
  ok(total > 100, "too few samples: " .. total)
  local shares = {}
  for _, name in ipairs({ "mainHot", "taskHot", "workerHot", "swiftHot" }) do
    shares[name] = samplesIn(stacks, "%(" .. name .. "%)$")
  end
  local sum = shares.mainHot + shares.taskHot + shares.workerHot + shares.swiftHot
  local mean = sum / 4
  for name, n in pairs(shares) do
    ok(math.abs(n / mean - 1) <= 0.15, ("%s has %d samples, the four's mean is %.0f\n%s"):format(name, n, mean, text))
  end
  ok(sum / total >= 0.8, ("the hot functions have %d of %d samples\n%s"):format(sum, total, text))
  -- The Swift function's CPU time shows as itself, not as the Lua line that called it.
  local swift = samplesIn(stacks, "^%[Swift%] isTransferable$")
  ok(swift >= 0.8 * shares.swiftHot, ("[Swift] isTransferable has %d of swiftHot's %d samples\n%s"):format(swift, shares.swiftHot, text))
  -- Labelled: the task's stacks start at `task <its function>`, the worker's at `worker`.
  for _, s in ipairs(stacks) do
    local leaf = s.frames[#s.frames]
    if leaf:find("%(taskHot%)$") then ok(s.frames[1]:find("^task hot%.lua:%d+$"), s.text) end
    if leaf:find("%(workerHot%)$") then eq(s.frames[1], "worker", s.text) end
    if leaf:find("%(mainHot%)$") then eq(s.frames[1], "main", s.text) end
  end
  -- Waiting is not hot: 0.8 s of sleep and read got (next to) no samples, where a loop of the
  -- same length would have had hundreds.
  local blocked = samplesIn(stacks, "blocked")
  ok(blocked <= 0.02 * total, ("the waits have %d of %d samples\n%s"):format(blocked, total, text))
  -- The summary on stderr: the four on top (a hot function's own time, or its callee's, cpu or
  -- the Swift function).
  local top = out:match("self +total +function\n(.*)$") or ""
  local lines = {}
  for line in top:gmatch("[^\n]+") do lines[#lines + 1] = line end
  for i = 1, 4 do ok(lines[i] and (lines[i]:find("Hot%)$") or lines[i]:find("isTransferable$")), "top ten:\n" .. out) end
  ok(out:find("bklua: profile written to hot.folded", 1, true), out)
end)

test("--profile-rate=N: samples per CPU second", function()
  local _, code = profile("--profile=fast.folded --profile-rate=2000", hot, MS // 2)
  eq(code, 0)
  local _, code2 = profile("--profile=slow.folded --profile-rate=200", hot, MS // 2)
  eq(code2, 0)
  local _, fast = parseFolded(assert(read(tmp .. "/fast.folded")))
  local _, slow = parseFolded(assert(read(tmp .. "/slow.folded")))
  -- 200/s gives only ~35 samples here: their noise (~17%) is why the band is wide.
  ok(fast / slow > 6 and fast / slow < 16, ("2000/s gave %d samples, 200/s gave %d"):format(fast, slow))
end)

test("bad --profile options are refused with the usage, saying what is wrong", function()
  local says = {
    ["--profile-rate=0"] = "'--profile-rate=0': the rate is a whole number of samples per second, 1 to 100000",
    ["--profile-rate=x"] = "'--profile-rate=x': the rate is a whole number of samples per second, 1 to 100000",
    ["--profile --profile-rate=+100"] = "'--profile-rate=+100': the rate is a whole number of samples per second, 1 to 100000",
    ["--profile="] = "'--profile=' needs a file name",
    ["--profiles"] = "unrecognized option '--profiles'",
  }
  for option, message in pairs(says) do
    local out, code = profile(option, hot, 10)
    eq(code, 1, option)
    ok(out:find(message, 1, true) and out:find("usage: ", 1, true), out)
  end
  -- A rate without --profile would be ignored: it is refused instead.
  local out, code = profile("--profile-rate=100", hot, 10)
  eq(code, 1, out)
  ok(out:find("'--profile-rate=100' needs --profile", 1, true), out)
end)

test("the default file is bklua-profile.svg, a self-contained SVG", function()
  os.remove(tmp .. "/bklua-profile.svg")
  -- bk.isTransferable walks the whole table in Swift: the CPU is spent there, not in Lua.
  local script = file("swift.lua", [[
local big = {}
for i = 1, 200000 do big[i] = { i, tostring(i) } end
local function check() for _ = 1, 40 do bk.isTransferable(big) end end
check()
]])
  local out, code = profile("--profile", script)
  eq(code, 0, out)
  local svg = assert(read(tmp .. "/bklua-profile.svg"), out)
  ok(svg:find("^<%?xml"), "an SVG document")
  -- The walk runs in C inside a protected call of its own: its time is the Swift function's, under
  -- the Lua function that called it (it used to go to whatever Lua line ran next, or be lost, and
  -- `check` then had no frame wide enough to draw).
  ok(svg:find('data-n="swift.lua (main chunk)"', 1, true), "the script's stacks are in the graph")
  ok(svg:find('data-n="swift.lua:3 (check)"', 1, true), "check's frame is in the graph")
  local swift = tonumber(svg:match('data%-w="(%d+)" data%-d="%d+" data%-n="%[Swift%] isTransferable"'))
  local all = tonumber(svg:match('data%-total="(%d+)"'))
  ok(swift and all and swift >= 0.5 * all, ("[Swift] isTransferable has %s of %s samples"):format(tostring(swift), tostring(all)))
  ok(svg:find("<script", 1, true) and not svg:find("https?://[^\"]*%.js"), "self-contained")
end)

test("the profile is written when the script calls os.exit, also closing the state", function()
  for _, close in ipairs({ "false", "true" }) do
    -- spinning() runs about 0.1 s: the sampler thread, starved on a loaded machine, may look at
    -- the clocks only every few tens of milliseconds.
    local script = file("exit.lua", ([[
local function spinning() local x = 0 for i = 1, 30000000 do x = x + i end return x end
local w = bk.worker(function() local x = 0 for i = 1, 1e9 do x = x + i end return x end)  -- never awaited
spinning()
os.exit(3, %s)
]]):format(close))
    os.remove(tmp .. "/exit.folded")
    local out, code = profile("--profile=exit.folded", script)
    eq(code, 3, out)
    local stacks = parseFolded(assert(read(tmp .. "/exit.folded"), "no profile after os.exit(3, " .. close .. ")\n" .. out))
    ok(samplesIn(stacks, "%(spinning%)$") > 0, close)
  end
end)

test("a worker's os.exit while the main code runs Lua writes the profile and ends the run", function()
  -- bklua's exit handler then runs on the worker's thread: it used to wait forever for the main
  -- state's lock, held by the main code's loop.
  local script = file("workerexit.lua", [[
local function hot() local s = 0 for i = 1, 3e6 do s = s + i end return s end
local w = bk.worker(function() local s = 0 for i = 1, 3e6 do s = s + i end os.exit(9) end)
while true do hot() end
]])
  os.remove(tmp .. "/workerexit.folded")
  local out, code = profile("--profile=workerexit.folded", script)
  eq(code, 9, out)
  local stacks = parseFolded(assert(read(tmp .. "/workerexit.folded"), "no profile\n" .. out))
  ok(samplesIn(stacks, "%(hot%)$") > 0, out)
end)

test("hostile runs: tasks cancelled and closed mid-call, finalizers calling bk, 10,000-deep recursion", function()
  local script = file("hostile.lua", [[
local function spin(n) local x = 0 for i = 1, n do x = x + i end return x end
-- Finalizers that call bk, run by the collector in the middle of sampled code.
for _ = 1, 2000 do setmetatable({}, { __gc = function() bk.now() end }) end
-- A task cancelled while it runs and one whose coroutine is closed at a suspension.
local co2
local t1 = bk.async(function() while true do spin(1e5) bk.sleep(0) end end)
local t2 = bk.async(function() co2 = coroutine.running() spin(1e5) bk.sleep(10) end)
bk.sleep(0.05)
t1:cancel()
coroutine.close(co2)
pcall(bk.await, t1)
pcall(bk.await, t2)
-- 10,000 frames deep, burning CPU at the bottom.
local function deep(n) if n == 0 then local r = spin(3e6) return r end return deep(n - 1) + 0 end
deep(10000)
-- A coroutine of the script's own.
local co = coroutine.wrap(function() spin(1e6) coroutine.yield() spin(1e6) end)
co() co()
collectgarbage()
print("done")
]])
  local out, code = profile("--profile=hostile.folded", script)
  eq(code, 0, out)
  ok(out:find("done", 1, true), out)
  local stacks = parseFolded(assert(read(tmp .. "/hostile.folded")))
  -- The deep stacks keep their innermost frames under a "..." root.
  local deep = 0
  for _, s in ipairs(stacks) do
    if s.frames[#s.frames]:find("%(spin%)$") and s.frames[2] == "..." then deep = deep + s.count end
  end
  ok(deep > 0, "deep recursion sampled")
  ok(samplesIn(stacks, "^coroutine hostile%.lua") > 0, "the script's coroutine is labelled")
end)

test("a stack overflow, caught or not, and a 150,000-deep recursion cost about as much profiled as not", function()
  -- Each poke's lua_sethook walks every frame: at 200,000 frames a sample cost more than a
  -- period, the thread did nothing but sample (a caught overflow: 0.1 s -> over a minute).
  local caught = file("overflow.lua", [[
local function ovf(n) return 1 + ovf(n + 1) end
print(pcall(ovf, 1))
local function deep(n) if n == 0 then local s = 0 for i = 1, 3e5 do s = s + i end return s end return 1 + deep(n - 1) end
print(deep(150000))
]])
  local uncaught = file("uncaught.lua", "local function ovf(n) return 1 + ovf(n + 1) end\novf(1)\n")
  -- The CPU time (user + system) the run took, by bash's `time`.
  local function run(options, script)
    local out, code = shell("cd " .. tmp .. " && bash -c 'TIMEFORMAT=\"cpu %3U %3S\"; time timeout 60 " ..
      BKLUA .. " " .. options .. " " .. script .. " >/dev/null 2>&1'")
    local user, system = out:match("cpu ([%d.]+) ([%d.]+)%s*$")
    return out, code, tonumber(user) + tonumber(system)
  end
  for _, script in ipairs({ caught, uncaught }) do
    local _, plainCode, plain = run("", script)
    os.remove(tmp .. "/overflow.folded")
    local out, code, profiled = run("--profile=overflow.folded", script)
    eq(code, plainCode, script .. "\n" .. out)
    ok(profiled <= 3 * plain + 0.5, ("%s: %.2f s of CPU profiled, %.2f s not"):format(script, profiled, plain))
    ok(read(tmp .. "/overflow.folded"), "the profile is written")
  end
end)

test("Ctrl-C (SIGINT) and SIGTERM end a profiled run: profile written, summary printed, the signal's status", function()
  -- The usual way to stop a profiled server loop: bklua used to die by the signal, writing nothing.
  local script = file("server.lua", [[
local function serve() local s = 0 for i = 1, 1e5 do s = s + i end return s end
while true do serve() end
]])
  for _, signal in ipairs({ { "INT", 130 }, { "TERM", 143 } }) do
    os.remove(tmp .. "/server.folded")
    -- bklua keeps a signal ignored when it starts (nohup), and a shell cannot undo an ignore it
    -- inherited (a CI run started as a background job ignores SIGINT): python3 puts both signals
    -- back to their defaults, then becomes bklua. Killed after 60 s if the signal does not end it.
    local defaults = [[python3 -c "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); ]] ..
      [[signal.signal(signal.SIGTERM, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])" ]]
    local out = shell("cd " .. tmp .. " && bash -c 'set -m; " .. defaults .. BKLUA .. " --profile=server.folded " .. script .. " " ..
      "2>server.err & pid=$!; (sleep 60; kill -KILL $pid) >/dev/null 2>&1 & killer=$!; sleep 1.5; kill -" ..
      signal[1] .. " $pid; wait $pid; echo status $?; kill $killer'")
    local err = read(tmp .. "/server.err") or ""
    eq(out:match("status (%d+)"), tostring(signal[2]), "SIG" .. signal[1] .. ": " .. out .. err)
    local text = assert(read(tmp .. "/server.folded"), "SIG" .. signal[1] .. ": no profile written\n" .. out .. err)
    ok(samplesIn(parseFolded(text), "%(serve%)$") > 0, text)
    ok(err:find("bklua: profile written to server.folded", 1, true) and err:find("self +total +function"), err)
  end
end)

test("control characters in names: the SVG stays well-formed XML, the folded file one stack a line", function()
  -- A name is any string (a table key, a chunk name): written raw, \1 made the SVG a parse error.
  local script = file("control.lua", [[
local t = {}
t["step\1one"] = function() local s = 0 for i = 1, 3e6 do s = s + i end return s end
t["two\nlines\r\v\f\27"] = function() local s = 0 for i = 1, 3e6 do s = s + i end return s end
t["step\1one"]()
t["two\nlines\r\v\f\27"]()
load("local s = 0 for i = 1, 3e6 do s = s + i end", "=chunk\2name\n")()
]])
  for _, name in ipairs({ "control.svg", "control.folded" }) do
    local out, code = profile("--profile=" .. name .. " --profile-rate=5000", script)
    eq(code, 0, out)
  end
  local parsed = shell("python3 -c 'import sys, xml.etree.ElementTree as e; r = e.parse(sys.argv[1]).getroot(); " ..
    "print(\"parsed\", len(r.findall(\".//{http://www.w3.org/2000/svg}g\")))' " .. tmp .. "/control.svg")
  ok(parsed:find("^parsed %d+"), "the SVG is not well-formed XML: " .. parsed)
  local text = assert(read(tmp .. "/control.folded"))
  ok(not text:find("[%z\1-\8\11-\31\127]"), "a control character in the folded file")
  local stacks = parseFolded(text)  -- asserts each line is `stack count`
  ok(samplesIn(stacks, "^control%.lua:2 %(step.one%)$") > 0, text)
  ok(samplesIn(stacks, "^control%.lua:3 %(two.lines....%)$") > 0, text)
  ok(samplesIn(stacks, "^chunk.name.") > 0, text)
end)

test("samples have no frame of the bridge's own Lua", function()
  local stacks = parseFolded(assert(read(tmp .. "/hot.folded")))
  for _, s in ipairs(stacks) do ok(not s.text:find("bk/", 1, true), s.text) end
end)

-- The flame graph in a real browser. Chromium (Debian's package) is needed; when it cannot run,
-- the test says so and why (it is not counted as passed).
local CHROMIUM = os.getenv("CHROMIUM") or "chromium"
local function chromium(args)
  return shell("timeout 120 " .. CHROMIUM .. " --headless --no-sandbox --disable-gpu --no-first-run " ..
    "--disable-dev-shm-usage --user-data-dir=" .. tmp .. "/chromium-profile " .. args)
end
local function chromiumWorks()
  if chromiumChecked == nil then
    local out = chromium("--dump-dom 'data:text/html,<p>ok</p>'")
    chromiumChecked = out and out:find("<p>ok</p>", 1, true) and true or (out or "no output")
  end
  return chromiumChecked == true, chromiumChecked
end

local function browserTest(name, fn)
  local works, why = chromiumWorks()
  if works then return test(name, fn) end
  -- scripts/setup installs Chromium, so under CI a browser that cannot run is a failure.
  if os.getenv("CI") == "true" then
    return test(name, function() error(CHROMIUM .. " cannot run: " .. tostring(why):sub(1, 200)) end)
  end
  print("SKIPPED test_profiler: " .. name .. " (" .. CHROMIUM .. " cannot run here: " ..
    tostring(why):sub(1, 200):gsub("\n", " ") .. "; install Debian's chromium)")
end

browserTest("the SVG flame graph renders its frames in headless Chromium (screenshot, DOM)", function()
  local out, code = profile("--profile=graph.svg", hot, MS // 4)
  eq(code, 0, out)
  local path = tmp .. "/graph.svg"
  -- The DOM once the graph's script ran: it counts the frames it shows.
  local dom = chromium("--dump-dom 'file://" .. path .. "'")
  local rendered = tonumber(dom:match('data%-rendered="(%d+)"'))
  ok(rendered and rendered >= 8, "frames rendered: " .. tostring(rendered) .. "\n" .. dom:sub(1, 500))
  ok(dom:find("(mainHot)", 1, true) and dom:find("(workerHot)", 1, true), "frames named")
  -- Search (#search=RE) highlights and measures; zoom (#zoom=TEXT) lays out the frame full width.
  local searched = chromium("--dump-dom 'file://" .. path .. "#search=Hot'")
  local matched, total = tonumber(searched:match('data%-matched="(%d+)"')), tonumber(searched:match('data%-total="(%d+)"'))
  ok(matched and total and matched > 0.8 * total and matched <= total, "search matched " .. tostring(matched))
  local zoomed = chromium("--dump-dom 'file://" .. path .. "#zoom=workerHot'")
  ok(zoomed:find('data%-zoomed="[^"]*workerHot'), "zoomed")
  local zoomedCount = tonumber(zoomed:match('data%-rendered="(%d+)"'))
  ok(zoomedCount and zoomedCount < rendered, "zooming hides the frames outside")
  -- A screenshot: the frames are coloured boxes on a plain background.
  local png = tmp .. "/graph.png"
  os.remove(png)
  chromium("--hide-scrollbars --window-size=1200,500 --screenshot=" .. png .. " 'file://" .. path .. "'")
  local counted = shell("python3 -c '" .. [[
import sys, zlib, struct
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n"
pos, chunks, w, h = 8, b"", 0, 0
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8]); body = data[pos + 8:pos + 8 + n]; pos += 12 + n
    if kind == b"IHDR": w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
    if kind == b"IDAT": chunks += body
bpp = {2: 3, 6: 4}[ctype]; raw = zlib.decompress(chunks); stride = w * bpp; prev = bytearray(stride); coloured = 0
for y in range(h):
    f = raw[y * (stride + 1)]; line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0; b = prev[i]; c = prev[i - bpp] if i >= bpp else 0
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    for x in range(0, stride, bpp):
        r, g, bl = line[x], line[x + 1], line[x + 2]
        if max(r, g, bl) - min(r, g, bl) > 60: coloured += 1
    prev = line
print("coloured", coloured, "of", w * h)
]] .. "' " .. png)
  local coloured, all = counted:match("coloured (%d+) of (%d+)")
  ok(coloured and tonumber(coloured) > 0.05 * tonumber(all), "coloured pixels: " .. counted)
  print("     (screenshot: " .. png .. ", " .. counted:gsub("\n", "") .. ")")
end)
