-- luacheck's configuration for the project's own Lua: the engines under Sources/, library/,
-- examples/ and Tests/lua. scripts/test runs `luacheck .` and fails on any warning.
std = "lua54"
max_line_length = 120
-- Tests embed whole scripts in one string literal; a string's length says nothing about style.
max_string_line_length = false
-- Blocks take the arguments their helper passes (`function(key, value)` for a dictionary even when
-- only the value is used); naming each unused one `_` would hide what the helper passes.
unused_args = false
exclude_files = { ".build*/**", "**/.build*/**" }

-- bk and every bk_NAME global that bklua (and `bk.installGlobals()`) gives scripts: the names the
-- reference documents, read from it so that a new function needs no second list here.
local function bkGlobals()
  local names = { "bk" }
  local file = io.open("docs/reference.md")
  if not file then return names end
  local seen = {}
  for name in file:read("*a"):gmatch("bk%.([%a_][%w_]*)") do
    if not seen[name] then
      seen[name] = true
      names[#names + 1] = "bk_" .. name
    end
  end
  file:close()
  return names
end
read_globals = bkGlobals()

-- The test runner's assertions, installed as globals for each test file (Tests/lua/runner.lua).
files["Tests/lua"] = {
  read_globals = { "test", "eq", "near", "ok", "raises", "deepEq", "shell", "tempFile", "tempDir" },
  -- Tests build child scripts and shell commands inline, with the expected text beside them.
  max_line_length = 180,
}

-- The LuaLS definition files declare classes (`local Task = {}` then `function Task:await() end`)
-- that nothing reads: that is what a definition file is.
files["library/bk.lua"] = { ignore = { "241" } }
files["Sources/bklua/Resources/bk.lua"] = { ignore = { "241" } }
-- The bklua globals file declares the globals bklua preloads: setting them is what it is for.
files["library/bklua.lua"] = { ignore = { "121" } }
