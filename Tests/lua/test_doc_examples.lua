-- Every fenced Lua example of README.md and docs/reference.md runs under bklua and ends with status 0
-- and nothing on stderr (an error the loop reports fails it too). What an example needs first (a
-- variable it uses) is declared right before its fence, in an HTML comment the page does not show:
--   <!-- example context: local window = { close = function() end } -->
-- (the comment may span lines up to its `-->`). The examples run in parallel, one bklua each.

local BKLUA = assert(os.getenv("BKLUA"), "BKLUA must name the bklua binary")
local DOCUMENTS = { "README.md", "docs/reference.md" }

local function readFile(path)
  local f = assert(io.open(path))
  local text = f:read("a")
  f:close()
  return text
end

-- { {where = "README.md:36", code = "...", context = "..."|nil}, ... }
local function examples(text, name)
  local found, lines = {}, {}
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do lines[#lines + 1] = line end
  local i = 1
  while i <= #lines do
    if lines[i]:match("^```lua%s*$") then
      local first, code = i, {}
      i = i + 1
      while i <= #lines and not lines[i]:match("^```") do
        code[#code + 1] = lines[i]
        i = i + 1
      end
      -- The context: an `<!-- example context: ... -->` comment ending on the line before the fence.
      local context
      local j = first - 1
      if j >= 1 and lines[j]:match("%-%->%s*$") then
        local comment = {}
        while j >= 1 do
          table.insert(comment, 1, lines[j])
          if lines[j]:find("<!--", 1, true) then break end
          j = j - 1
        end
        context = table.concat(comment, "\n"):match("^<!%-%-%s*example context:%s*(.-)%s*%-%->%s*$")
      end
      found[#found + 1] = { where = name .. ":" .. (first + 1), code = table.concat(code, "\n"), context = context }
    end
    i = i + 1
  end
  return found
end

-- Runs every example at once; returns the failures' descriptions.
local function runAll(list)
  local dir = os.tmpname()
  os.remove(dir)
  assert(os.execute("mkdir -p " .. dir))
  local script = { "cd " .. dir }
  for k, example in ipairs(list) do
    local f = assert(io.open(dir .. "/" .. k .. ".lua", "w"))
    f:write(example.context and (example.context .. "\n") or "", example.code, "\n")
    f:close()
    script[#script + 1] = ("(timeout 60 %q --time-limit 30 %d.lua >%d.out 2>%d.err; echo $? >%d.status) &")
      :format(BKLUA, k, k, k, k)
  end
  script[#script + 1] = "wait"
  assert(os.execute(table.concat(script, "\n")))
  local failures = {}
  for k, example in ipairs(list) do
    local status = tonumber(readFile(dir .. "/" .. k .. ".status"))
    local err = readFile(dir .. "/" .. k .. ".err")
    if status ~= 0 or err ~= "" then
      failures[#failures + 1] = ("%s: status %s\nstdout: %s\nstderr: %s"):format(example.where, tostring(status),
        readFile(dir .. "/" .. k .. ".out"), err)
    end
  end
  os.execute("rm -rf " .. dir)
  return failures
end

test("the examples are found, with their context", function()
  local list = examples(table.concat({
    "text", "```lua", "print(1)", "```", "<!-- example context: local x = 2 -->", "```lua", "print(x)", "```",
    "<!-- example context:", "local y = 3", "-->", "```lua", "print(y)", "```", "```sh", "ls", "```",
  }, "\n"), "doc")
  eq(#list, 3)
  eq(list[1].where, "doc:3")
  eq(list[1].context, nil)
  eq(list[2].context, "local x = 2")
  eq(list[3].context, "local y = 3")
  eq(list[3].code, "print(y)")
end)

test("a failing example is reported: an error, an error the loop reports, a missing context", function()
  local list = examples(table.concat({
    "```lua", "print(undefinedName.x)", "```",
    "```lua", "bk.performBlock(function() write('x') end, 0)", "```",
    "```lua", "print(window.title)", "```",
    "<!-- example context: local window = { title = 't' } -->", "```lua", "print(window.title)", "```",
  }, "\n"), "doc")
  local failures = runAll(list)
  eq(#failures, 3, table.concat(failures, "\n"))
  ok(failures[1]:find("^doc:2: status 1"), failures[1])
  ok(failures[2]:find("^doc:5: "), failures[2])
  ok(failures[2]:find("write", 1, true), failures[2])
  ok(failures[3]:find("^doc:8: status 1"), failures[3])
end)

test("every Lua example of README.md and docs/reference.md runs", function()
  local list = {}
  for _, path in ipairs(DOCUMENTS) do
    local found = examples(readFile(path), path)
    ok(#found > 0, path .. " has Lua examples")
    for _, example in ipairs(found) do list[#list + 1] = example end
  end
  ok(#list >= 9, "examples found: " .. #list)
  local failures = runAll(list)
  ok(#failures == 0, #failures .. " of " .. #list .. " examples failed:\n" .. table.concat(failures, "\n"))
end)
