-- The Lua test runner: runs every Tests/lua/test_*.lua (or the files given) through the bridge.
-- Each file declares cases with `test(name, fn)`; assertions: `eq`, `ok`, `raises`, `near`.
-- Ends with the line "N passed, N failed" and exits non-zero on any failure.

local dir = (arg and arg[0] or "Tests/lua/runner.lua"):match("^(.*)/[^/]*$") or "."

local passed, failed = 0, 0
local cases

local function describe(v)
  if type(v) == "string" then return string.format("%q", v) end
  return tostring(v)
end

local api = {}

function api.test(name, fn)
  cases[#cases + 1] = { name = name, fn = fn }
end

function api.eq(actual, expected, message)
  if actual ~= expected then
    error(string.format("%sexpected %s, got %s", message and (message .. ": ") or "",
      describe(expected), describe(actual)), 2)
  end
end

function api.near(actual, expected, tolerance, message)
  if type(actual) ~= "number" or math.abs(actual - expected) > tolerance then
    error(string.format("%sexpected %s +- %s, got %s", message and (message .. ": ") or "",
      describe(expected), describe(tolerance), describe(actual)), 2)
  end
end

function api.ok(value, message)
  if not value then error(message or "expected a true value", 2) end
  return value
end

-- raises(pattern, f, ...): f(...) must raise an error whose message contains `pattern` (plain text).
function api.raises(pattern, f, ...)
  local okCall, err = pcall(f, ...)
  if okCall then error("expected an error containing " .. describe(pattern), 2) end
  local text = tostring(err)
  if not text:find(pattern, 1, true) then
    error(string.format("expected an error containing %s, got %s", describe(pattern), describe(text)), 2)
  end
  return err
end

-- deepEq(a, b): structural equality of plain tables (raw access).
function api.deepEq(a, b, message)
  local function same(x, y, seen)
    if x == y then return true end
    if type(x) ~= "table" or type(y) ~= "table" then return false end
    if seen[x] == y then return true end
    seen[x] = y
    for k, v in next, x do if not same(v, rawget(y, k), seen) then return false end end
    for k in next, y do if rawget(x, k) == nil then return false end end
    return true
  end
  if not same(a, b, {}) then
    local function show(t, depth)
      if type(t) ~= "table" then return describe(t) end
      if depth > 3 then return "{...}" end
      local keys = {}
      for k in next, t do keys[#keys + 1] = k end
      table.sort(keys, function(x, y) return tostring(x) < tostring(y) end)
      local parts = {}
      for _, k in ipairs(keys) do parts[#parts + 1] = describe(k) .. "=" .. show(rawget(t, k), depth + 1) end
      return "{" .. table.concat(parts, ", ") .. "}"
    end
    error(string.format("%sexpected %s, got %s", message and (message .. ": ") or "", show(b, 0), show(a, 0)), 2)
  end
end

-- Writes `contents` to a fresh temporary file; returns its path (the caller removes it).
function api.tempFile(contents)
  local path = os.tmpname()
  local file = assert(io.open(path, "w"))
  file:write(contents)
  file:close()
  return path
end

-- Makes a fresh temporary directory; returns its path and a function that writes a file named
-- `name` in it with `text` and returns that file's path.
function api.tempDir()
  local made = os.tmpname()
  os.remove(made)
  os.execute("mkdir -p " .. made)
  return made, function(name, text)
    local path = made .. "/" .. name
    local file = assert(io.open(path, "w"))
    file:write(text)
    file:close()
    return path
  end
end

-- Runs a shell command; returns its combined output and exit status.
function api.shell(command)
  local handle = assert(io.popen(command .. " 2>&1; echo \"<exit:$?>\""))
  local output = handle:read("a")
  handle:close()
  local body, code = output:match("^(.*)<exit:(%d+)>\n?$")
  return body, tonumber(code)
end

local files = {}
if arg and #arg > 0 then
  for i = 1, #arg do files[#files + 1] = arg[i] end
else
  local listing = assert(io.popen("ls " .. dir .. "/test_*.lua 2>/dev/null"))
  for line in listing:lines() do files[#files + 1] = line end
  listing:close()
end

-- Test files run with the global table as their environment, as scripts do (a function's _ENV
-- decides what it sees when it crosses to a worker): the assertions are globals.
for k, v in pairs(api) do _G[k] = v end

for _, file in ipairs(files) do
  cases = {}
  local chunk, loadError = loadfile(file, "t")
  if not chunk then
    failed = failed + 1
    print("FAIL " .. file .. ": " .. loadError)
  else
    local okLoad, err = xpcall(chunk, debug.traceback)
    if not okLoad then
      failed = failed + 1
      print("FAIL " .. file .. ": " .. tostring(err))
    end
  end
  local short = file:match("([^/]*)%.lua$") or file
  for _, case in ipairs(cases) do
    local okCase, err = xpcall(case.fn, debug.traceback)
    if okCase then
      passed = passed + 1
      print("ok   " .. short .. ": " .. case.name)
    else
      failed = failed + 1
      print("FAIL " .. short .. ": " .. case.name .. "\n     " .. tostring(err):gsub("\n", "\n     "))
    end
  end
end

print(string.format("%d passed, %d failed", passed, failed))
io.stdout:flush()
os.exit(failed == 0 and 0 or 1)
