-- Findings of the fuzzer and the matrix, kept as regression tests (each in a child bklua, so a
-- crash fails the case instead of killing the runner).

local BKLUA = assert(os.getenv("BKLUA"), "BKLUA must name the bklua binary")
-- A memory ceiling for children (a runaway allocation fails instead of swapping); not under
-- sanitizers, which reserve terabytes of address space (scripts/check-sanitizers sets BK_NO_ULIMIT).
local ULIMIT = os.getenv("BK_NO_ULIMIT") and "" or "ulimit -v 4000000; "
local here = (debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$")) or "Tests/lua"

local function run(args)
  return shell(ULIMIT .. "timeout 120 " .. BKLUA .. " " .. args)
end

test("a timer callback re-entering bk.run nests only so deep, then gets an error (no stack overflow)", function()
  -- Each loop callback runs on a Lua thread of its own, so Lua's per-thread C-call guard never saw
  -- this recursion: it crashed with SIGSEGV before the trampoline counted nesting per OS thread.
  local out, code = run(here .. "/reliability/nested_run.lua")
  eq(code, 0, out)
  ok(out:find("C stack overflow (bk calls nested too deeply)", 1, true), out)
  ok(out:find("max depth", 1, true), out)
end)

test("direct recursion through a helper still gets Lua's own stack overflow error", function()
  local out, code = run([[-e "local function f() bk.each({1}, f) end print(pcall(f))"]])
  eq(code, 0, out)
  ok(out:find("false\t", 1, true) and out:find("stack overflow", 1, true), out)
end)

test("an onError handler raising a non-string error is described, not printed as '?'", function()
  local out, code = run([[-e "bk.onError(function() error({}) end) bk.performBlock(function() error('first') end, 0)"]])
  eq(code, 1, out)  -- the handler failed: the default reporter printed both, which fails the run
  ok(out:find("error in error handler: (error object is a table value)", 1, true), out)
  ok(out:find("first", 1, true), out)
end)
