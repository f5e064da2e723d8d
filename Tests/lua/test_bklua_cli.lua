-- bklua's command line against stock lua5.4: same inputs, same outputs and exit codes.

local BKLUA = assert(os.getenv("BKLUA"), "BKLUA must name the bklua binary")
local LUA = os.getenv("LUA") or "lua5.4"

local tmp, file = tempDir()

local script = file("args.lua", [[
print("arg0", arg[0], "n", select('#', ...), ...)
for i = -3, #arg do io.write(tostring(arg[i]), " ") end
print()
]])
local failing = file("fail.lua", "local x = 1\nerror('script failed')\n")
file("mylib.lua", "return { name = 'mylib' }")
file("stdin.lua", "print('from stdin', ...)\n")

-- Runs `args` (a shell fragment) under both interpreters from tmp; returns both outputs and codes.
local function both(args, env)
  env = env or ""
  local cmd = "cd " .. tmp .. " && " .. env .. " LUA_PATH='" .. tmp .. "/?.lua;;' "
  local bkOut, bkCode = shell(cmd .. BKLUA .. " " .. args)
  local luaOut, luaCode = shell(cmd .. LUA .. " " .. args)
  -- The program name is the only expected difference (in messages, and as arg[-n]).
  local luaName = LUA:gsub("%p", "%%%0")
  luaOut = luaOut:gsub(luaName .. ":", "bklua:"):gsub("usage: " .. luaName, "usage: bklua")
  bkOut = bkOut:gsub(BKLUA:gsub("%p", "%%%0"), (LUA:gsub("%%", "%%%%")))
  return bkOut, luaOut, bkCode, luaCode
end

local function same(args, env)
  local bkOut, luaOut, bkCode, luaCode = both(args, env)
  eq(bkOut, luaOut, "output of " .. args)
  eq(bkCode, luaCode, "exit code of " .. args)
  return bkOut, bkCode
end

test("-e runs statements in order", function()
  local out = same("-e 'x = 1' -e 'print(x + 1)'")
  eq(out, "2\n")
end)

test("-e with the statement attached", function() same("'-eprint(42)'") end)

test("-e syntax and runtime errors exit 1 with traceback", function()
  same("-e 'x ='")
  local out, code = same("-e 'error(\"boom\")'")
  eq(code, 1)
  ok(out:find("stack traceback:", 1, true))
end)

test("-l loads a module into a global", function()
  same("-l mylib -e 'print(mylib.name)'")
  same("-l m=mylib -e 'print(m.name, mylib)'")
  same("-l nosuchmodule")
end)

test("-v prints Lua's version line, then BlocksBridge's", function()
  for _, args in ipairs { "-v", "-v -e 'print(1)'" } do
    local bkOut, luaOut, bkCode, luaCode = both(args)
    local luaLine, rest = luaOut:match("^([^\n]*\n)(.*)$")
    eq(bkOut, luaLine .. "BlocksBridge " .. bk.version() .. " (bklua, the bk module: bk.version())\n" .. rest)
    eq(bkCode, luaCode)
  end
end)

test("arg table with negative indices and script arguments", function()
  same(script .. " a b c")
  same("-e 'y=1' " .. script .. " one")
end)

test("-- stops option handling", function()
  same("-- " .. script .. " -x")
  same("-e 'print(1)' -- " .. script)
end)

test("- runs stdin with arguments", function()
  same("- a b < stdin.lua")
  same("< stdin.lua")
  same("-- - x < stdin.lua")
end)

test("script errors and missing files", function()
  local out, code = same(failing)
  eq(code, 1)
  ok(out:find("script failed", 1, true))
  same("nosuchfile.lua")
end)

test("bad options print usage", function()
  same("-x")
  same("-e")
  same("-l")
  same("-vx")
  same("--x")
  same("-i -e")
end)

test("LUA_INIT runs first, in both forms, unless -E", function()
  local init = file("init.lua", "print('init file')")
  same("-e 'print(2)'", "LUA_INIT='print(\"init\")'")
  same("-e 'print(2)'", "LUA_INIT='@" .. init .. "'")
  same("-e 'print(2)'", "LUA_INIT_5_4='print(54)' LUA_INIT='print(0)'")
  same("-E -e 'print(2)'", "LUA_INIT='print(\"init\")'")
  same("-e 'print(2)'", "LUA_INIT='error(\"in init\")'")
end)

test("-E ignores LUA_PATH", function()
  same("-E -e 'print(package.path:find(\"" .. tmp .. "\", 1, true))'")
end)

test("-W turns warnings on", function()
  same("-W -e 'warn(\"careful\")'")
  same("-e 'warn(\"quiet\")'")
end)

test("exit codes of os.exit", function()
  same("-e 'os.exit(3)'")
  same("-e 'os.exit(false)'")
end)

test("bk is preloaded in bklua", function()
  local out, code = shell(BKLUA .. " -e 'print(require(\"bk\") == bk, type(bk_version))'")
  eq(out, "true\tfunction\n")
  eq(code, 0)
end)

test("a traceback names a bk function the way the script called it: bk.map, bk_map, a:map", function()
  local out = shell(BKLUA .. [[ -e 'bk.map({1}, function() error("x") end)']])
  ok(out:find("in function 'bk.map'", 1, true), out)
  ok(not out:find("bk_map", 1, true), out)
  out = shell(BKLUA .. [[ -e 'bk_map({1}, function() error("x") end)']])
  ok(out:find("in function 'bk_map'", 1, true), out)
  out = shell(BKLUA .. [[ -e 'local m = bk.map; m({1}, function() error("x") end)']])
  ok(out:find("in function 'bk.map'", 1, true), "through a local: the module's name: " .. out)
  out = shell(BKLUA .. [[ -e 'bk.array{1}:map(function() error("x") end)']])
  ok(out:find("in function 'bk.map'", 1, true), out)
end)

test("bklua starts without Foundation, libxml2 or libedit; the first XMLParser parse loads libxml2 (libbkxml.so), never Foundation", function()
  -- libedit is loaded when the prompt starts (Tests/repl drives it).
  local out = shell(BKLUA .. [[ -e '
    local function loaded(name)
      local f = assert(io.open("/proc/self/maps")); local maps = f:read("a"); f:close()
      return maps:find(name, 1, true) ~= nil
    end
    print(loaded("libFoundation"), loaded("libicu"), loaded("libxml2"), loaded("libedit"))
    print(bk.XMLParser("<a/>"):parse(), loaded("libxml2"), loaded("libFoundation"))']])
  eq(out, "false\tfalse\tfalse\tfalse\ntrue\ttrue\tfalse\n")
end)

test("bk.XMLParser parses <?pi?> (no data) and a NOTATION with no public id (Foundation's XMLParser crashed the process)", function()
  -- In a child bklua: a crash is a signal exit there, not the runner's.
  local out, code = shell(BKLUA .. [[ -e '
    for _, document in ipairs({ "<a><?pi?></a>", "<!DOCTYPE a [<!NOTATION n SYSTEM \"x\">]><a/>" }) do
      local p, log = bk.XMLParser(document), {}
      p.delegate:implementMethod("parserFoundProcessingInstructionWithTarget", function(_, target, data)
        log[#log + 1] = "pi " .. target .. " " .. tostring(data)
      end)
      p.delegate:implementMethod("parserDidStartElement", function(_, name) log[#log + 1] = "start " .. name end)
      p.delegate:implementMethod("parserDidEndElement", function(_, name) log[#log + 1] = "end " .. name end)
      print(p:parse(), p.parserError, table.concat(log, ", "))
    end']])
  eq(code, 0, out:sub(1, 300))
  eq(out, "true\tnil\tstart a, pi pi nil, end a\ntrue\tnil\tstart a, end a\n")
end)

test("XMLParserDelegate (made on first use) is predeclared in a fresh state, and a script's own replaces it", function()
  local out = shell(BKLUA .. [[ -e '
    local builtin = bk.protocol("XMLParserDelegate")
    print(builtin.name, builtin.methods.parserDidStartElement ~= nil)
    print(bk.XMLParser("<a/>").delegate.protocol == builtin)']])
  eq(out, "XMLParserDelegate\ttrue\ntrue\n")
  out = shell(BKLUA .. [[ -e '
    local mine = bk.protocol("XMLParserDelegate", { "parserDidStartElement" })
    local p = bk.XMLParser("<a/>")
    print(p.delegate.protocol == mine, p.delegate.protocol.methods.parserFoundCharacters)']])
  eq(out, "true\tnil\n")
end)
