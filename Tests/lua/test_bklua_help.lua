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
