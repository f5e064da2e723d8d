-- bklua --help: usage, options, and every function of the bk module.

local BKLUA = assert(os.getenv("BKLUA"), "BKLUA must name the bklua binary")

test("--help prints the usage and exits 0", function()
  local out, code = shell(BKLUA .. " --help")
  eq(code, 0)
  ok(out:find("usage: bklua [options] [script [args]]", 1, true), out)
  ok(out:find("-e stat", 1, true), out)
  ok(out:find("docs/reference.md", 1, true), out)
end)

test("--help lists every exported function", function()
  local out = shell(BKLUA .. " --help")
  local listed = {}
  for line in out:gmatch("[^\n]+") do
    local names = line:match("^  [%a ]+:(.*)$") or line:match("^%s%s%s+([%a_][%w_ ]*)$")
    if names then for name in names:gmatch("[%a_][%w_]*") do listed[name] = true end end
  end
  for name, value in pairs(bk) do
    if type(value) == "function" then ok(listed[name], "--help lists " .. name) end
  end
end)

test("--help is only an option as the first argument", function()
  local _, code = shell(BKLUA .. " -e 'x = 1' --help")
  eq(code, 1)
end)

test("--help names bklua's own sandbox options", function()
  local out = shell(BKLUA .. " --help")
  for _, option in ipairs({ "--sandbox", "--memory-limit", "--instruction-limit", "--time-limit" }) do
    ok(out:find(option, 1, true), "--help names " .. option)
  end
end)

test("--annotations prints library/bk.lua and exits 0", function()
  local out, code = shell(BKLUA .. " --annotations")
  eq(code, 0)
  local f = assert(io.open("library/bk.lua"))
  local expected = f:read("a")
  f:close()
  eq(out, expected)
  ok(out:find("^%-%-%-@meta bk"), out:sub(1, 40))
end)

test("--annotations is only an option as the first argument", function()
  local _, code = shell(BKLUA .. " -e 'x = 1' --annotations")
  eq(code, 1)
end)

-- help at the prompt covers every function, every kind of object and every method and field that
-- docs/reference.md documents: functions under `### bk.NAME(...)`, kinds of objects under
-- `### <Kind> objects (bk.Type, ...)` with one bullet per member (`- \`ch:receive([timeout])\`: ...`).

local reference = dofile("Tests/lua/reference_entries.lua")
local referenceTypes, samples = reference.types, reference.samples

-- Runs `lines` at `bklua -i` (stdin not a terminal: plain lines, help installed); returns the
-- output of each line that follows a `mark(k)` line, by k.
local function atPrompt(lines)
  local path = os.tmpname()
  local f = assert(io.open(path, "w"))
  f:write("function mark(k) io.write('@@', k, '\\n') end\n", table.concat(lines, "\n"), "\n")
  f:close()
  local out = shell(BKLUA .. " -i < " .. path)
  os.remove(path)
  local answers = {}
  local k, chunk = nil, {}
  for line in (out .. "\n"):gmatch("([^\n]*)\n") do
    local mark = line:match("@@(%d+)$")
    if mark or k == nil then
      if k then answers[k] = table.concat(chunk, "\n") .. "\n" end
      k, chunk = mark, {}
    else
      -- lua.c's prompts, printed before each line read (stdin not a terminal).
      while line:match("^>>? ") do line = line:gsub("^>>? ", "", 1) end
      chunk[#chunk + 1] = line
    end
  end
  if k then answers[k] = table.concat(chunk, "\n") .. "\n" end
  return answers, out
end

test("help prints the entry of every kind of object, method and field of docs/reference.md", function()
  local entries = referenceTypes()
  ok(#entries >= 10, "type entries found: " .. #entries)
  local lines, expected = {}, {}
  local function ask(call, heading, fragment)
    local k = tostring(#expected + 1)
    expected[k] = { call = call, heading = heading, fragment = fragment }
    lines[#lines + 1] = "mark('" .. k .. "') " .. call
  end
  for _, entry in ipairs(entries) do
    for _, type in ipairs(entry.types) do
      local sample = samples[type]
      ok(sample, "no sample object for bk." .. type .. " in Tests/lua/test_bklua_help.lua: add one")
      local var = "sample_" .. type
      lines[#lines + 1] = var .. " = " .. sample
      ask("help(" .. var .. ")", entry.heading)
      ask("help('" .. type .. "')", entry.heading)
      for _, member in ipairs(entry.members) do
        local text = "`" .. member.receiver
        -- A method by its value (help(ch.receive)); a field, or a method absent from this kind, by name.
        lines[#lines + 1] = ("do local v = %s[%q]; if v == nil then v = %s[%q] end; member = v end")
          :format(var, member.name, var, "bk_" .. member.name)
        ask("if type(member) == 'function' then help(member) else help('" .. type .. ":" .. member.name .. "') end",
          entry.heading, text)
        ask("help('bk." .. type .. "." .. member.name .. "')", entry.heading, text)
      end
    end
  end
  lines[#lines + 1] = reference.cleanUp
  local answers, out = atPrompt(lines)
  for k, want in pairs(expected) do
    local got = answers[k]
    ok(got, want.call .. ": no answer in " .. out:sub(1, 2000))
    ok(got:sub(1, #want.heading + 1) == want.heading .. "\n", want.call .. ": expected " .. want.heading .. ", got " .. got)
    if want.fragment then ok(got:find(want.fragment, 1, true), want.call .. ": no " .. want.fragment .. " in " .. got) end
  end
end)

test("every method of every kind of object is documented (a bullet, or the bk function of that name)", function()
  for _, entry in ipairs(referenceTypes()) do
    local documented = {}
    for _, member in ipairs(entry.members) do documented[member.name] = true end
    for _, type in ipairs(entry.types) do
      local object = assert(load("return " .. samples[type], "=sample", "t", _ENV))()
      local names, functions = reference.liveMethods(object)
      for _, name in ipairs(names) do
        ok(documented[name] or rawequal(bk[name], functions[name]),
          "bk." .. type .. ":" .. name .. " has no bullet in " .. entry.heading .. " of docs/reference.md")
      end
      if type == "BlockHandle" then object:cancel() end
      if type == "Worker" then object:result() end
    end
  end
end)

test(":help NAME answers for kinds of objects and their methods", function()
  local answers = atPrompt({ "mark('1')", ":help Task", "mark('2')", ":help Channel:receive", "mark('3')", ":help ch:send",
    "mark('4')", ":help bk.Timer.isValid" })
  ok(answers["1"]:find("^### Task objects %(bk%.Task%)\n"), answers["1"])
  ok(answers["2"]:find("^### Channel objects %(bk%.Channel%)\n%- `ch:receive%("), answers["2"])
  ok(answers["3"]:find("^### Channel objects %(bk%.Channel%)\n%- `ch:send%("), answers["3"])
  ok(answers["4"]:find("^### Timer objects %(bk%.Timer%)\n%- `timer%.isValid`"), answers["4"])
end)

test("help of a function that is no bk function or method says so", function()
  local answers = atPrompt({ "mark('1') help(print)", "mark('2') help(42)", "mark('3') help('Channel:nosuch')" })
  ok(answers["1"]:find("help: not a bk function (function)", 1, true), answers["1"])
  ok(answers["2"]:find("help: not a bk function (number)", 1, true), answers["2"])
  ok(answers["3"]:find("help: no reference entry for Channel:nosuch", 1, true), answers["3"])
end)

test("--help names the LuaRocks route and the annotation files", function()
  local out = shell(BKLUA .. " --help")
  ok(out:find("luarocks --lua-version 5.4 make", 1, true), out)
  ok(out:find("library/bklua.lua", 1, true), out)
end)
