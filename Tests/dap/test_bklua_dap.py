"""bklua's debugger, driven as an editor drives it: the Debug Adapter Protocol over real pipes
(`bklua --dap`) and a real TCP socket (`bklua --dap-listen`), whole sessions on real scripts.

Run: python3 Tests/dap/test_bklua_dap.py [name-filter]   (BKLUA names the binary)
Prints one line per case and "N passed, N failed"; exits non-zero on a failure.
Under ThreadSanitizer (BK_SANITIZER=thread, set by scripts/check-sanitizers) the sessions marked
`needs_a_poke_in_a_lua_loop` are skipped, each with its reason printed.
"""
import json
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dap_client import Client, DAPError  # noqa: E402
from dap_cases import case, check, line_of, run_cases, scratch, script  # noqa: E402

BKLUA = os.path.abspath(os.environ.get("BKLUA", ".build/debug/bklua"))


def needs_a_poke_in_a_lua_loop(function):
    """The session needs a poke (a pause, breakpoints set while the script runs) to land inside a
    loop of Lua code. ThreadSanitizer holds a signal back until the thread calls a function it
    intercepts, and Debian's liblua is not instrumented: the poke never lands there."""
    function.thread_sanitizer_skip = "a poke (SIGURG) must land in a Lua loop; TSan defers it to an intercepted call"
    return function


def adapter():
    return Client.launch_adapter(BKLUA)


# ---------------------------------------------------------------------------------------------
# Whole sessions over pipes

@case
def a_whole_session_breakpoint_stack_scopes_variables_evaluate_steps_exit():
    path = script("whole.lua", """local M = {}
local counter = 0
local function add(a, b)
  local sum = a + b          -- BP-ADD
  counter = counter + 1
  return sum
end
function M.run(list)
  local total = 0
  for i = 1, #list do
    total = add(total, list[i])   -- CALL-ADD
  end
  local after = total * 2     -- AFTER
  return after
end
local big = {}
for i = 1, 250 do big[i] = i * i end
local nested = { name = "x", inner = { 1, 2, { deep = true } } }
print("result", M.run({ 10, 20, 30 }), #big, nested.name)
""")
    c = adapter()
    try:
        caps, bps = c.start(path, breakpoints={path: [line_of(path, "BP-ADD")]})
        check(caps.get("supportsConditionalBreakpoints") and caps.get("supportsLogPoints"), "capabilities: %r" % caps)
        check(bps[path]["breakpoints"][0]["verified"], "verified: %r" % bps)
        stop = c.stopped("breakpoint")
        check(stop["threadId"] == 1, "thread %r" % stop)
        frames = c.frames()
        check(frames[0]["source"]["path"] == path, "absolute path: %r" % frames[0])
        check(frames[0]["line"] == line_of(path, "BP-ADD"), "line %r" % frames[0])
        check(frames[0]["name"] == "add", "name %r" % frames[0]["name"])
        check(frames[1]["line"] == line_of(path, "CALL-ADD") and frames[1]["name"] in ("run", "M.run"), "caller %r" % frames[1])
        check(frames[-1]["name"] == "main chunk", "bottom: %r" % frames[-1])
        check(all("bk/" not in (f.get("source", {}).get("name") or "") for f in frames), "bridge frames hidden")
        scopes = c.scopes(frames[0]["id"])
        check(set(scopes) >= {"Locals", "Upvalues", "Varargs", "Globals"}, "scopes %r" % list(scopes))
        local = c.locals(frames[0]["id"])
        check(local["a"]["value"] == "0" and local["b"]["value"] == "10", "locals %r" % local)
        ups = {v["name"]: v for v in c.variables(scopes["Upvalues"]["variablesReference"])}
        check(ups["counter"]["value"] == "0", "upvalues %r" % ups)
        glob = {v["name"]: v for v in c.variables(scopes["Globals"]["variablesReference"])}
        check("print" in glob and "string" in glob, "globals")
        # evaluate in the selected frame: watch, hover, repl
        check(c.evaluate("a + b", frames[0]["id"], "watch")["result"] == "10", "watch")
        check(c.evaluate("total", frames[1]["id"], "hover")["result"] == "0", "hover in the caller frame")
        check(c.evaluate("#list", frames[1]["id"])["result"] == "3", "repl")
        # tables: expandable, nested, paged
        t = c.evaluate("nested", frames[-1]["id"])
        check(t["variablesReference"] > 0, "table expandable %r" % t)
        kids = {v["name"]: v for v in c.variables(t["variablesReference"])}
        check(kids["name"]["value"] == '"x"', "child %r" % kids)
        inner = {v["name"]: v for v in c.variables(kids["inner"]["variablesReference"])}
        check(inner["[3]"]["variablesReference"] > 0, "nested %r" % inner)
        big = c.evaluate("big", frames[-1]["id"])
        check(big.get("indexedVariables") == 250, "paged %r" % big)
        page = c.variables(big["variablesReference"], filter="indexed", start=100, count=5)
        check([v["name"] for v in page] == ["[101]", "[102]", "[103]", "[104]", "[105]"], "page %r" % page)
        check(page[0]["value"] == "10201", "page value %r" % page[0])
        # steps: next, next, stepOut lands in the caller
        c.step("next")
        c.stopped("step")
        check(c.frames()[0]["line"] == line_of(path, "BP-ADD") + 1, "next")
        c.step("stepOut")
        c.stopped("step")
        # Back in the caller: Lua reports no new line event for the rest of the line the call was
        # on, so the next is the loop's (line 10) or the line after (a call that ends a line).
        check(c.frames()[0]["line"] in (line_of(path, "CALL-ADD") - 1, line_of(path, "CALL-ADD")), "stepOut: %r" % c.frames()[0])
        check(c.frames()[0]["name"] == "run", "stepOut into run")
        # remove the breakpoint, continue to the end
        c.request("setBreakpoints", {"source": {"path": path}, "breakpoints": []})
        c.request("continue", {"threadId": 1})
        check(c.finish() == 0, "exit status 0")
        check("result\t120\t250\tx\n" in c.output.get("stdout", ""), "stdout as output events: %r" % c.output)
    finally:
        c.close()


@case
def stop_on_entry_args_env_cwd_output_and_exit_status():
    path = script("entry.lua", """local first = 1
io.write("out:", arg[1], ":", os.getenv("BK_DAP_TEST"), "\\n")
io.stderr:write("err line\\n")
io.write("cwd-file:", tostring(io.open("entry.lua") ~= nil), "\\n")
os.exit(3)
""")
    c = adapter()
    try:
        c.start(path, stop_on_entry=True, args=["hello"], cwd=scratch, env={"BK_DAP_TEST": "yes"})
        stop = c.stopped("entry")
        check(c.frames()[0]["line"] == 1, "entry at line 1")
        c.step("stepIn")
        c.stopped("step")
        check(c.frames()[0]["line"] == 2, "stepIn to line 2")
        c.request("continue", {"threadId": 1})
        check(c.finish() == 3, "os.exit(3) is the exit status")
        check("out:hello:yes\n" in c.output.get("stdout", ""), "args and env: %r" % c.output)
        check("cwd-file:true" in c.output.get("stdout", ""), "cwd: %r" % c.output)
        check("err line\n" in c.output.get("stderr", ""), "stderr: %r" % c.output)
    finally:
        c.close()


@case
def an_error_the_script_does_not_catch_fails_the_run():
    path = script("fails.lua", "local x = nil\nprint(x.field)\n")
    c = adapter()
    try:
        c.start(path)
        check(c.finish() == 1, "exit status 1")
        check("attempt to index a nil value" in c.output.get("stderr", ""), "error on stderr: %r" % c.output)
    finally:
        c.close()


def next_from_bp_lands_in_the_caller(path, inside):
    """Stops at BP (then clears it: a recursion would hit it again), steps `next`: the stop must be
    on the CALLER or AFTER line, not on `inside` (a line of the function called next)."""
    c = adapter()
    try:
        c.start(path, breakpoints={path: [line_of(path, "BP")]})
        c.stopped("breakpoint")
        c.request("setBreakpoints", {"source": {"path": path}, "breakpoints": []})
        c.step("next")
        c.stopped("step")
        line = c.frames()[0]["line"]
        check(line in (line_of(path, "CALLER"), line_of(path, "AFTER")),
              "stopped at line %d (%s is %d)" % (line, inside, line_of(path, inside)))
        c.request("continue", {"threadId": 1})
        check(c.finish() == 0, "exit")
    finally:
        c.close()


@case
def next_from_a_functions_last_line_stops_in_its_caller_not_in_the_next_call_on_that_line():
    # f returns and its caller calls g on the same line: g runs at f's depth (in its CallInfo), and
    # next stopped inside g, though the stepped function had returned.
    path = script("return_sibling.lua", """local function f()
  return 1                        -- BP
end
local function g()
  local y = 2                     -- G1
  return y
end
local v = f() + g()               -- CALLER
print(v)                          -- AFTER
""")
    next_from_bp_lands_in_the_caller(path, inside="G1")


@case
def next_over_a_tail_call_of_the_same_function_stops_in_the_caller():
    # f tail-calling itself looked like the stepped frame going on (same source and first line):
    # next stopped at the callee's first line.
    path = script("self_tail.lua", """local function f(n)
  if n == 0 then return "done" end  -- F1
  local m = n - 1
  return f(m)                       -- BP
end
local r = f(3)                      -- CALLER
print("r", r)                       -- AFTER
""")
    next_from_bp_lands_in_the_caller(path, inside="F1")


@case
def step_in_on_bk_async_enters_the_tasks_function():
    # bk.async runs the task's function at once, up to its first wait: stepIn there went to the next
    # line of main, and the function's first lines ran unseen. A task that ends without waiting
    # hands the step back: the next stop is main's next line.
    path = script("stepin_async.lua", """local function work(x)
  local a = x + 1                 -- IN
  if x > 1 then bk.sleep(0) end
  return a
end
local t = bk.async(work, 1)       -- BP
local u = bk.async(work, 2)       -- BP2
print("r", bk.await(t), bk.await(u))  -- LAST
""")
    c = adapter()
    try:
        c.start(path, breakpoints={path: [line_of(path, "BP")]})
        stop = c.stopped("breakpoint")
        c.step("stepIn", stop["threadId"])
        stop = c.stopped("step")
        check(c.frames(stop["threadId"])[0]["line"] == line_of(path, "IN"), "into work: %r" % c.frames(stop["threadId"])[0])
        for expected in ("if x > 1", "return a", "BP2"):  # work ends: back in main
            c.step("stepIn", stop["threadId"])
            stop = c.stopped("step")
            check(c.frames(stop["threadId"])[0]["line"] == line_of(path, expected), "%s: %r" % (expected, c.frames(stop["threadId"])[0]))
        c.request("continue", {"threadId": stop["threadId"]})
        check(c.finish() == 0 and "r\t2\t3" in c.output.get("stdout", ""), "%r" % c.output)
    finally:
        c.close()


@case
def step_in_enters_a_function_and_step_over_does_not():
    path = script("steps.lua", """local function inner(x)
  return x * 2      -- INNER
end
local a = 1         -- START
local b = inner(a)  -- CALL
local c = inner(b)  -- CALL2
print(a, b, c)
""")
    c = adapter()
    try:
        c.start(path, breakpoints={path: [line_of(path, "START")]})
        c.stopped("breakpoint")
        c.step("next")
        c.stopped("step")
        check(c.frames()[0]["line"] == line_of(path, "CALL"), "next to CALL")
        c.step("stepIn")
        c.stopped("step")
        f = c.frames()
        check(f[0]["line"] == line_of(path, "INNER") and f[0]["name"] == "inner", "stepIn: %r" % f[0])
        c.step("stepOut")
        c.stopped("step")
        check(c.frames()[0]["line"] == line_of(path, "CALL2"), "stepOut: %r" % c.frames()[0])
        c.step("next")
        c.stopped("step")
        check(c.frames()[0]["line"] == line_of(path, "CALL2") + 1, "next over a call: %r" % c.frames()[0])
        c.request("continue", {"threadId": 1})
        check(c.finish() == 0, "exit")
    finally:
        c.close()


@case
def step_out_and_next_stop_in_a_caller_that_returns_on_the_line_of_its_call():
    # The caller finishes on the call's line (no new line event there): it stops as it returns.
    path = script("sameline.lua", """local function inner()
  return 1                          -- INNER
end
local function outer() return 10 + inner() end   -- OUTER
local x = outer()
local function g(n)
  if n == 0 then
    return 0                        -- BASE
  end
  return 1 + g(n - 1)               -- RECURSE
end
print(x, g(3))
""")
    c = adapter()
    try:
        c.start(path, breakpoints={path: [line_of(path, "INNER"), line_of(path, "BASE")]})
        c.stopped("breakpoint")
        c.step("stepOut")
        c.stopped("step")
        f = c.frames()
        check(f[0]["name"] == "outer" and f[0]["line"] == line_of(path, "OUTER"), "stepOut of inner: %r" % f[0])
        c.request("continue", {"threadId": 1})
        c.stopped("breakpoint")
        depth = len(c.frames())
        c.step("stepOut")
        c.stopped("step")
        f = c.frames()
        check(f[0]["line"] == line_of(path, "RECURSE") and len(f) == depth - 1, "stepOut of g(0): %r" % f[:2])
        check(c.evaluate("n")["result"] == "1", "in g(1)")
        c.step("next")
        c.stopped("step")
        f = c.frames()
        check(f[0]["line"] == line_of(path, "RECURSE") and len(f) == depth - 2, "next out of g(1): %r" % f[:2])
        c.request("continue", {"threadId": 1})
        check(c.finish() == 0, "exit")
        check("11\t3" in c.output.get("stdout", ""), "output: %r" % c.output)
    finally:
        c.close()


def stop_at_bp_then_next_over_the_next_line(c, path):
    """Starts `path` stopped at its `-- BP` line (breakpoints then cleared), steps to the NEXT line
    and over it: the step must end on the line after NEXT within 10 s."""
    c.start(path, breakpoints={path: [line_of(path, "-- BP")]})
    c.stopped("breakpoint")
    c.request("setBreakpoints", {"source": {"path": path}, "breakpoints": []})
    c.step("next")
    c.stopped("step")
    c.step("next")
    c.stopped("step", timeout=10)
    check(c.frames()[0]["line"] == line_of(path, "NEXT") + 1, "next over the NEXT line: %r" % c.frames()[0])


@case
def next_and_step_out_over_a_loop_from_a_deep_frame_do_not_walk_the_stack_at_every_line():
    # 30,000 levels down, a loop of 200,000 lines: each line used to walk the 30,000 levels (about 20 s a step
    # in a debug build; well under a second now).
    path = script("deep_work.lua", """local function work()
  local s = 0
  for i = 1, 200000 do
    s = s + i                       -- LOOP
  end
  return s
end
local function rec(n)
  if n == 0 then
    local x = 1                     -- BP
    local s = work()                -- NEXT
    return s + x
  end
  return rec(n - 1) + 0
end
print(rec(30000), rec(30000))
""")
    c = adapter()
    try:
        stop_at_bp_then_next_over_the_next_line(c, path)
        c.request("setBreakpoints", {"source": {"path": path}, "breakpoints": [{"line": line_of(path, "LOOP")}]})
        c.request("continue", {"threadId": 1})
        c.stopped("breakpoint")
        c.request("setBreakpoints", {"source": {"path": path}, "breakpoints": []})
        c.step("stepOut")  # the rest of the loop
        c.stopped("step", timeout=10)
        check(c.frames()[0]["line"] == line_of(path, "NEXT") + 1, "stepOut of work(): %r" % c.frames()[0])
        c.request("continue", {"threadId": 1})
        check(c.finish(timeout=60) == 0, "exit")
    finally:
        c.close()


@case
def next_from_a_deep_frame_over_work_many_levels_further_down_does_not_walk_the_stack_at_every_line():
    # As above, but the loop runs 12 levels below the stepped frame: past the levels looked at
    # first, each line walked the 30,000 levels again (minutes); the frames found deeper are kept.
    path = script("deeper_work.lua", """local function work()
  local s = 0
  for i = 1, 200000 do
    s = s + i
  end
  return s
end
local function down(k)
  if k == 0 then return work() + 0 end
  return down(k - 1) + 0
end
local function rec(n)
  if n == 0 then
    local x = 1                     -- BP
    local s = down(12)              -- NEXT
    return s + x
  end
  return rec(n - 1) + 0
end
print(rec(30000))
""")
    c = adapter()
    try:
        stop_at_bp_then_next_over_the_next_line(c, path)
        c.request("continue", {"threadId": 1})
        check(c.finish(timeout=60) == 0, "exit")
    finally:
        c.close()


@case
def next_over_a_self_tail_call_from_a_frame_entered_by_one_stops_in_the_caller():
    # The 2nd and 6th activations of tail() were themselves entered by its tail call: a next over
    # `return tail(n - 1)` ends them too (it went on in the next activation).
    path = script("self_tail.lua", """local function tail(n)
  if n == 0 then return 0 end
  return tail(n - 1)       -- TCALL
end
local a = tail(50)
local b = a + 1            -- AFTER
""")
    for skip in (1, 5):
        c = adapter()
        try:
            c.start(path, breakpoints={path: [line_of(path, "TCALL")]})
            c.stopped("breakpoint")
            for _ in range(skip):
                c.request("continue", {"threadId": 1})
                c.stopped("breakpoint")
            check(c.evaluate("n")["result"] == str(50 - skip), "activation %d" % (skip + 1))
            c.request("setBreakpoints", {"source": {"path": path}, "breakpoints": []})
            c.step("next")
            c.stopped("step")
            line = c.frames()[0]["line"]
            check(line == line_of(path, "AFTER"), "next from activation %d stopped at line %d" % (skip + 1, line))
            c.request("continue", {"threadId": 1})
            check(c.finish() == 0, "exit")
        finally:
            c.close()


@case
def next_over_a_tail_call_stops_in_the_caller_not_in_the_called_function():
    path = script("tail_call.lua", """local function g(x)
  local y = x + 1               -- G1
  return y
end
local function f(x)
  return g(x)                   -- BP
end
local r = f(1)
print("r", r)                   -- AFTER
""")
    c = adapter()
    try:
        c.start(path, breakpoints={path: [line_of(path, "-- BP")]})
        c.stopped("breakpoint")
        c.request("setBreakpoints", {"source": {"path": path}, "breakpoints": []})
        c.step("next")
        c.stopped("step")
        f = c.frames()
        check(f[0]["line"] == line_of(path, "AFTER"), "next over `return g(x)`: %r" % f[0])
        c.request("continue", {"threadId": 1})
        check(c.finish() == 0, "exit")
    finally:
        c.close()


@case
def next_over_a_call_that_recurses_deep_stops_on_the_next_line():
    # The step's checks probe one level, not the stack's depth: a depth read at each of the
    # recursion's lines and returns took minutes at this depth (6 s at 20,000).
    path = script("deep_next.lua", """local function deep(n) if n == 0 then return 0 end return 1 + deep(n - 1) end
local x = 1         -- BEFORE
local y = deep(100000)
print(x, y)         -- AFTER
""")
    c = adapter()
    try:
        c.start(path, breakpoints={path: [line_of(path, "BEFORE")]})
        c.stopped("breakpoint")
        c.step("next")
        c.stopped("step")
        c.step("next")
        c.stopped("step")
        check(c.frames()[0]["line"] == line_of(path, "AFTER"), "after the call: %r" % c.frames()[0])
        c.request("continue", {"threadId": 1})
        check(c.finish() == 0, "exit")
    finally:
        c.close()


@case
@needs_a_poke_in_a_lua_loop
def pause_stops_an_endless_loop_and_set_variable_ends_it():
    path = script("endless.lua", """local running = true
local n = 0
while running do n = n + 1 end
print("ended after", n > 0)
""")
    c = adapter()
    try:
        c.start(path)
        time.sleep(0.3)
        c.request("pause", {"threadId": 1})
        c.stopped("pause")
        f = c.frames()
        check(f[0]["line"] == 3, "paused in the loop: %r" % f[0])
        scopes = c.scopes(f[0]["id"])
        r = c.request("setVariable", {"variablesReference": scopes["Locals"]["variablesReference"],
                                      "name": "running", "value": "false"})["body"]
        check(r["value"] == "false", "setVariable: %r" % r)
        check(c.evaluate("running")["result"] == "false", "the local changed")
        c.request("continue", {"threadId": 1})
        check(c.finish() == 0, "exit")
        check("ended after\ttrue" in c.output.get("stdout", ""), "loop ended: %r" % c.output)
    finally:
        c.close()


@case
def conditions_hit_conditions_and_log_points():
    path = script("cond.lua", """local seen = {}
for i = 1, 20 do
  seen[#seen + 1] = i   -- COND
  local twice = i * 2   -- LOG
  local x = twice       -- HIT
end
""")
    c = adapter()
    try:
        c.start(path, breakpoints={path: [
            {"line": line_of(path, "COND"), "condition": "i == 7"},
            {"line": line_of(path, "LOG"), "logMessage": "i is {i}, twice {i * 2}"},
            {"line": line_of(path, "HIT"), "hitCondition": "15"},
        ]})
        c.stopped("breakpoint")
        check(c.evaluate("i")["result"] == "7", "condition i == 7")
        c.request("continue", {"threadId": 1})
        c.stopped("breakpoint")
        check(c.frames()[0]["line"] == line_of(path, "HIT") and c.evaluate("i")["result"] == "15", "hit count 15")
        c.request("continue", {"threadId": 1})
        check(c.finish() == 0, "exit")
        console = c.output.get("console", "")
        check("i is 1, twice 2\n" in console and "i is 20, twice 40\n" in console, "log points: %r" % console)
    finally:
        c.close()


@case
def function_breakpoints_by_global_and_dotted_name():
    path = script("funcs.lua", """Shapes = { area = {} }
function Shapes.area.square(s)
  return s * s           -- SQUARE
end
function greet(name)
  return "hi " .. name   -- GREET
end
local alias = greet
print(Shapes.area.square(3), greet("a"))
print(alias("b"), pcall(greet, "c"), bk.map({ "d" }, greet)[1])
""")
    c = adapter()
    try:
        c.start(path, functions=["Shapes.area.square", "greet"])
        c.stopped("function breakpoint")
        f = c.frames()
        check(f[0]["line"] == line_of(path, "SQUARE") - 1 or f[0]["line"] == line_of(path, "SQUARE"), "square: %r" % f[0])
        # greet by its name, then through an alias, pcall and a helper's block: the same function.
        for how in ("greet", "alias", "pcall", "bk.map"):
            c.request("continue", {"threadId": 1})
            c.stopped("function breakpoint")
            check(c.frames()[0]["line"] in (line_of(path, "GREET") - 1, line_of(path, "GREET")), "%s: %r" % (how, c.frames()[0]))
        c.request("continue", {"threadId": 1})
        check(c.finish() == 0, "exit")
    finally:
        c.close()


@case
def a_function_breakpoint_hits_a_function_called_many_times_before_its_name_reached_it():
    # Call events of a closure called before are answered from the call cache, which looks the
    # names up by their key strings: the name is still looked up at each call, never remembered.
    path = script("late_name.lua", """local function a(x) return x end
local function b(x) return x end
local n = 0
for i = 1, 100 do n = n + a(i) + b(i) end
Tools = { f = b }
a(1)
Tools.f = a
local before = 1      -- BEFORE
a(2)                  -- CALL
Tools = nil
a(3)
print("end", n)
""")
    c = adapter()
    try:
        c.start(path, functions=["Tools.f"])
        stop = c.stopped("function breakpoint")
        frames = c.frames(stop["threadId"])
        check(frames[1]["line"] == line_of(path, "CALL"), "stopped below line %d" % frames[1]["line"])
        check(c.evaluate("x", frame=frames[0]["id"])["result"] == "2", "the call of a(2)")
        c.request("continue", {"threadId": stop["threadId"]})
        check(c.finish() == 0, "exit: no other stop")
    finally:
        c.close()


@case
def a_script_that_rewrites_the_function_breakpoints_key_strings_makes_no_crash_and_no_wrong_stop():
    # The keys live in the registry, where a script can reach them: entries it added were read past
    # the names the C side has (a crash), and one it rewrote named another function (a wrong stop).
    path = script("names_tampered.lua", """function greet() return 1 end
function other() return 2 end
greet()                 -- FIRST
local keys
for k, v in pairs(debug.getregistry()) do
  if type(v) == "table" and type(v[1]) == "table" and v[1][1] == "greet" then keys = v end
end
assert(keys, "the key strings' table")
for i = 2, 1000 do keys[i] = { "other" } end
keys[1][1] = "other"
for i = 1, 100 do other() end
print("done")
""")
    c = adapter()
    try:
        c.start(path, functions=["greet"])
        stop = c.stopped("function breakpoint")
        check(c.frames(stop["threadId"])[1]["line"] == line_of(path, "FIRST"), "%r" % c.frames(stop["threadId"])[:2])
        c.request("continue", {"threadId": stop["threadId"]})
        check(c.finish() == 0, "exit (stopped again: %r)" % [e for e in c.seen if e["event"] == "stopped"][1:])
        check("done" in c.output.get("stdout", ""), "%r" % c.output)
    finally:
        c.close()


@case
def function_breakpoints_reach_methods_through_index_tables_and_refuse_names_that_cannot():
    # An instance finds its class's methods through __index (a table, read raw: no metamethod runs
    # in the hook); a name with an empty part or a ':' before its last part can reach nothing.
    path = script("methods.lua", """Account = {}; Account.__index = Account
Savings = setmetatable({}, { __index = Account }); Savings.__index = Savings
function Account:deposit(n)
  self.balance = self.balance + n   -- DEPOSIT
end
acct = setmetatable({ balance = 0 }, Savings)
loop = setmetatable({}, {}); getmetatable(loop).__index = loop
acct:deposit(5)
print(acct.balance)
""")
    c = adapter()
    try:
        c.initialize()
        seq = c.send("launch", {"program": path})
        asked = ["acct:deposit", "loop.missing", "a..b", "a.", "a:b.c", ":deposit", " acct:deposit", "acct. deposit",
                 "acct\v", "acct\f.x"]
        r = c.request("setFunctionBreakpoints", {"breakpoints": [{"name": n} for n in asked]})
        answers = r["body"]["breakpoints"]
        check([a["verified"] for a in answers] == [True, True] + [False] * 8, "%r" % answers)
        check(all("dotted name" in a.get("message", "") for a in answers[2:6]), "%r" % answers)
        check(all("blanks around a part" in a.get("message", "") for a in answers[6:]), "%r" % answers)
        c.request("configurationDone")
        c.response(seq)
        c.stopped("function breakpoint")
        check(c.frames()[0]["line"] in (line_of(path, "DEPOSIT") - 1, line_of(path, "DEPOSIT")), "%r" % c.frames()[0])
        c.request("continue", {"threadId": 1})
        check(c.finish() == 0, "exit")
        check("5" in c.output.get("stdout", ""), "%r" % c.output)
    finally:
        c.close()


@case
def function_breakpoints_past_4096_bytes_of_names_all_hit():
    # 120 names of about 70 bytes (8 KB): every one is checked, the last as well as the first.
    names = ["handler_%s_%03d" % ("x" * 56, i) for i in range(120)]
    path = script("manyfuncs.lua", "".join("function %s() return %d end\n" % (n, i) for i, n in enumerate(names))
                  + "print(%s(), %s())\n" % (names[0], names[-1]))
    c = adapter()
    try:
        c.start(path, functions=names)
        for expected in (1, 120):
            c.stopped("function breakpoint")
            check(c.frames()[0]["line"] == expected, "stopped at %r, not line %d" % (c.frames()[0], expected))
            c.request("continue", {"threadId": 1})
        check(c.finish() == 0, "exit")
    finally:
        c.close()


def first_stop_is_hit(path, n, variable):
    """Runs `path` with a breakpoint on its BP line that stops at its n-th hit: the run stops there
    (every hit before it counted) with `variable` == n."""
    c = adapter()
    try:
        c.start(path, breakpoints={path: [{"line": line_of(path, "BP"), "hitCondition": str(n)}]})
        c.stopped("breakpoint")
        check(c.evaluate(variable)["result"] == str(n), "the hit number %d is at %s == %d" % (n, variable, n))
        c.request("continue", {"threadId": 1})
        check(c.finish() == 0, "exit")
    finally:
        c.close()


@case
def a_function_at_the_address_of_a_collected_one_still_gets_its_breakpoints():
    # Call events are answered by the called closure's address after its first call. 64 closures
    # without breakpoints are called, then collected; 64 of another function, kept alive, take
    # their freed memory. Each must hit: none may pass for the collected one it replaced.
    path = script("reused.lua", """local function warm() return 0 end
for _ = 1, 40 do warm() end
local function makeA() return function() return 1 end end
local function makeB()
  return function(i)
    return i -- BP
  end
end
for _ = 1, 64 do local a = makeA(); a(); a() end
collectgarbage()
collectgarbage()
local keep = {}
for i = 1, 64 do
  local b = makeB()
  keep[i] = b
  b(i)
end
""")
    first_stop_is_hit(path, 64, "i")


@case
def a_script_that_empties_the_registrys_tables_does_not_make_breakpoints_missed():
    # The closures the call cache answers for are held where a script that empties the tables it
    # finds in the registry does not reach: collected, their addresses went to closures of a
    # function with a breakpoint, which the cache then answered for (about 60 of 200 missed).
    path = script("wipe.lua", """local function make_a() return function(x) return x + 1 end end
local function make_b() return function(x)
  return x + 2   -- BP
end end
for i = 1, 40 do make_a()(i) end
local a = make_a()
for i = 1, 5 do a(i) end
for k, v in pairs(debug.getregistry()) do
  if type(k) == "userdata" and type(v) == "table" then
    local held = false
    for i = 1, 64 do if type(rawget(v, i)) == "function" then held = true end end
    if held then for i = 1, 64 do rawset(v, i, nil) end end
  end
end
a = nil
collectgarbage()
collectgarbage()
for i = 1, 200 do make_b()(i) end
""")
    first_stop_is_hit(path, 200, "x")


@case
def a_function_on_the_same_lines_as_the_one_that_made_it_gets_its_breakpoints():
    # makeB and the function it returns both start on line 1 and end on line 3; only the second
    # has code on line 2. Called first, makeB's "no breakpoint here" must not answer for it.
    path = script("samerange.lua", """local function makeB() return function(i)
  return i -- BP
end end
for i = 1, 3 do makeB()(i) end
""")
    c = adapter()
    try:
        c.start(path, breakpoints={path: [{"line": line_of(path, "BP")}]})
        for i in (1, 2, 3):
            c.stopped("breakpoint")
            check(c.evaluate("i")["result"] == str(i), "hit %d" % i)
            c.request("continue", {"threadId": 1})
        check(c.finish() == 0, "exit")
    finally:
        c.close()


@case
def a_breakpoint_in_a_block_of_bk_map_shows_the_helpers_caller_and_no_bridge_frames():
    path = script("helpers.lua", """local function double(list)
  return bk.map(list, function(x)
    return x * 2         -- BLOCK
  end)
end
local out = double({ 1, 2, 3 })
local sorted = bk.sorted({ 3, 1, 2 }, function(a, b)
  return a < b           -- SORTBLOCK
end)
print(#out, sorted[1])
""")
    c = adapter()
    try:
        c.start(path, breakpoints={path: [line_of(path, "BLOCK"), line_of(path, "SORTBLOCK")]})
        c.stopped("breakpoint")
        f = c.frames()
        check(f[0]["line"] == line_of(path, "BLOCK"), "in the block")
        lua_frames = [x for x in f if "source" in x and "path" in x["source"]]
        check(lua_frames[1]["name"] == "double", "the helper's caller below: %r" % f)
        check(all(x.get("source", {}).get("path", path) == path for x in f), "no bridge chunks: %r" % f)
        c.request("setBreakpoints", {"source": {"path": path}, "breakpoints": [{"line": line_of(path, "SORTBLOCK")}]})
        c.request("continue", {"threadId": 1})
        c.stopped("breakpoint")
        f = c.frames()
        check(f[0]["line"] == line_of(path, "SORTBLOCK"), "in the toolbox's block: %r" % f[0])
        check(f[0]["name"] == "function <helpers.lua:%d>" % (line_of(path, "SORTBLOCK") - 1),
              "named by its place, not by the bridge's local: %r" % f[0])
        check(all("bk/" not in (x.get("source", {}).get("name") or "") for x in f), "toolbox frames hidden: %r" % f)
        check(any(x["line"] == line_of(path, "SORTBLOCK") - 1 - 0 or x["line"] == 7 for x in f[1:]), "caller line: %r" % f)
        c.request("setBreakpoints", {"source": {"path": path}, "breakpoints": []})
        c.request("continue", {"threadId": 1})
        check(c.finish() == 0, "exit")
    finally:
        c.close()


@case
def next_over_bk_sleep_in_a_task_stops_on_that_tasks_next_line():
    path = script("tasks.lua", """local log = {}
local function worker(name, delay)
  log[#log + 1] = name .. " start"   -- START-A
  bk.sleep(delay)                     -- SLEEP
  log[#log + 1] = name .. " end"     -- AFTER
end
local a = bk.async(function() worker("a", 0.05) end)
local b = bk.async(function()
  for i = 1, 3 do
    log[#log + 1] = "b " .. i         -- B-LOOP
    bk.sleep(0.01)
  end
end)
bk.awaitAll({ a, b })
print(table.concat(log, ","))
""")
    c = adapter()
    try:
        c.start(path, breakpoints={path: [line_of(path, "SLEEP")]})
        stop = c.stopped("breakpoint")
        task = stop["threadId"]
        check(task != 1, "a task is a thread of its own: %r" % stop)
        threads = c.request("threads")["body"]["threads"]
        check(any(t["id"] == task and t["name"].startswith("task ") for t in threads), "named: %r" % threads)
        check(any(e["event"] == "thread" and e["body"]["threadId"] == task for e in c.seen), "thread event")
        c.request("setBreakpoints", {"source": {"path": path}, "breakpoints": []})
        c.step("next", thread=task)
        check(c.stopped("step")["threadId"] == task, "the same task")
        f = c.frames(task)
        check(f[0]["line"] == line_of(path, "AFTER"), "next over bk.sleep: %r" % f[0])
        check(c.evaluate("name")["result"] == '"a"', "in task a")
        check(c.evaluate("#log")["result"] == "4", "b ran meanwhile: %r" % c.evaluate("table.concat(log, ',')"))
        c.request("continue", {"threadId": 1})
        check(c.finish() == 0, "exit")
    finally:
        c.close()


@case
def a_next_in_a_task_that_is_cancelled_is_not_taken_up_by_a_coroutine_at_its_address():
    # The step is bound to the task's coroutine. Cancelled, it was collected and a new coroutine
    # took its address: the step then stopped on the main code's line that resumed that one. The
    # cancel ends the task's function (bk.cancelled is raised in it): the step stops at the next
    # line that runs, the main code's after t:cancel(), and nothing of it is left after that.
    path = script("cancelled_step.lua", """local function sleeper()
  local a = 1
  bk.sleep(5)          -- SLEEP
  return a
end
local function other(i)
  local z = i
  return z
end
local t = bk.async(sleeper)
bk.sleep(0.5)
t:cancel()
pcall(bk.await, t)     -- AFTER-CANCEL
t = nil
collectgarbage()
collectgarbage()
for i = 1, 2000 do
  local co = coroutine.create(other)
  coroutine.resume(co, i)
end
local done = true      -- END
""")
    c = adapter()
    try:
        c.start(path, breakpoints={path: [line_of(path, "SLEEP")]})
        stop = c.stopped("breakpoint")
        c.request("setBreakpoints", {"source": {"path": path}, "breakpoints": [{"line": line_of(path, "END")}]})
        c.step("next", stop["threadId"])
        stop = c.stopped()
        line = c.frames(stop["threadId"])[0]["line"]
        check(stop["reason"] == "step" and line == line_of(path, "AFTER-CANCEL"), "stopped by %s at line %d" % (stop["reason"], line))
        c.request("continue", {"threadId": stop["threadId"]})
        stop = c.stopped()
        line = c.frames(stop["threadId"])[0]["line"]
        check(stop["reason"] == "breakpoint" and line == line_of(path, "END"), "stopped by %s at line %d" % (stop["reason"], line))
        c.request("continue", {"threadId": stop["threadId"]})
        check(c.finish() == 0, "exit")
    finally:
        c.close()


def steps_from_a_breakpoint_stop_at(path, at, steps, want):
    """A session stopped at marker `at` (its breakpoint then cleared) takes `steps` and must stop at
    marker `want`; then it runs to its end."""
    c = adapter()
    try:
        c.start(path, breakpoints={path: [line_of(path, at)]})
        stop = c.stopped("breakpoint")
        c.request("setBreakpoints", {"source": {"path": path}, "breakpoints": []})
        for step in steps:
            c.step(step, stop["threadId"])
            stop = c.stopped("step")
        line = c.frames(stop["threadId"])[0]["line"]
        check(line == line_of(path, want), "%s from %s stopped at line %d, not %s" % (steps, at, line, want))
        c.request("continue", {"threadId": stop["threadId"]})
        check(c.finish() == 0, "exit")
    finally:
        c.close()


@case
def a_step_off_the_end_of_a_task_that_waited_stops_at_the_main_codes_next_line():
    # The task's last resume comes from the loop (the task waited): the step went with that
    # resumer, which ends with no line of the script's, and was lost (a next or stepOut too: the
    # task's function has no caller of the script's to stop in).
    path = script("task_end.lua", """local t = bk.async(function()
  bk.sleep(0.1)
  return 1             -- BP
end)
local r = bk.await(t)
print("end", r)        -- END
""")
    for step in ("stepIn", "next", "stepOut"):
        steps_from_a_breakpoint_stop_at(path, "BP", [step], "END")


@case
def a_step_off_a_tasks_end_stops_in_the_task_that_runs_next():
    # The next line anywhere: a task the loop resumes next had no line events, and the step went
    # past it to the main code.
    path = script("task_next.lua", """local ta = bk.async(function()
  bk.sleep(0.05)
  return 1             -- A-END
end)
local tb = bk.async(function()
  bk.sleep(0.3)
  local b = 2          -- B-NEXT
  return b
end)
print("end", bk.await(tb))
""")
    for step in ("next", "stepIn", "stepOut"):
        steps_from_a_breakpoint_stop_at(path, "A-END", [step], "B-NEXT")


@case
def a_step_in_a_close_handler_that_coroutine_close_runs_stops_after_the_close():
    # The coroutine dies inside coroutine.close, with no resume to end: the step went nowhere.
    path = script("close_step.lua", """local co = coroutine.create(function()
  local guard <close> = setmetatable({}, { __close = function()
    local c1 = 1        -- HANDLER
    local c2 = 2        -- LAST-IN-HANDLER
  end })
  coroutine.yield(1)
end)
coroutine.resume(co)
local ok = coroutine.close(co)   -- CLOSE-CALL
local after = ok       -- AFTER
local wrapped = coroutine.wrap(function()
  local guard <close> = setmetatable({}, { __close = function()
    local w = 1         -- WRAP-HANDLER
  end })
  error("boom")
end)
print(pcall(wrapped))  -- its handler runs as the wrap function closes it
print("end", after)    -- FINAL
""")
    for marker, steps, want in (("HANDLER", ["stepOut"], "AFTER"), ("HANDLER", ["next", "next", "next"], "AFTER"),
                                ("LAST-IN-HANDLER", ["stepIn", "stepIn"], "AFTER"),
                                ("WRAP-HANDLER", ["stepOut"], "FINAL"), ("CLOSE-CALL", ["stepIn"], "HANDLER")):
        steps_from_a_breakpoint_stop_at(path, marker, steps, want)


@case
def a_breakpoint_set_later_stops_in_the_close_handler_of_a_coroutine_that_raised():
    # The coroutine died by its error with no breakpoints set: it had no hook when close ran its
    # handler (a dead coroutine was left as it was).
    path = script("late_handler.lua", """local co = coroutine.create(function()
  local g <close> = setmetatable({}, { __close = function()
    local h = 1          -- HANDLER
  end })
  error("e")
end)
print(coroutine.resume(co))
pcall(error, "stop here")   -- MAIN-BP
print(coroutine.close(co))
""")
    c = adapter()
    try:
        c.start(path, exceptions=["all"])
        stop = c.stopped("exception")
        line = c.frames(stop["threadId"])[0]["line"]
        if line != line_of(path, "MAIN-BP"):  # the coroutine's own error first
            c.request("continue", {"threadId": stop["threadId"]})
            stop = c.stopped("exception")
        c.request("setExceptionBreakpoints", {"filters": []})
        c.request("setBreakpoints", {"source": {"path": path}, "breakpoints": [{"line": line_of(path, "HANDLER")}]})
        c.request("continue", {"threadId": stop["threadId"]})
        stop = c.stopped("breakpoint")
        line = c.frames(stop["threadId"])[0]["line"]
        check(line == line_of(path, "HANDLER"), "stopped at line %d" % line)
        c.request("continue", {"threadId": stop["threadId"]})
        check(c.finish() == 0, "exit")
    finally:
        c.close()


@case
def exception_breakpoints_all_stop_at_a_close_whose_handler_raises():
    # Lua runs no message handler for a __close handler's error while a coroutine closes: `all`
    # stops where the close returns it (the handler's frames are gone by then).
    path = script("close_raises.lua", """local co = coroutine.create(function()
  local guard <close> = setmetatable({}, { __close = function()
    error("from the handler")
  end })
  coroutine.yield(1)
end)
coroutine.resume(co)
print(coroutine.close(co))   -- CLOSE
local f = coroutine.wrap(function()
  local guard <close> = setmetatable({}, { __close = function()
    error("from the wrap's handler")
  end })
  error("first")            -- FIRST
end)
print(pcall(f))             -- WRAP
""")
    c = adapter()
    try:
        c.start(path, exceptions=["all"])
        seen = []
        for _ in range(3):
            stop = c.stopped("exception")
            info = c.request("exceptionInfo", {"threadId": stop["threadId"]})["body"]
            seen.append((c.frames(stop["threadId"])[0]["line"], info.get("description", "") + " " + str(stop.get("text"))))
            c.request("continue", {"threadId": stop["threadId"]})
        want = [line_of(path, "CLOSE"), line_of(path, "FIRST"), line_of(path, "WRAP")]
        check([line for line, _ in seen] == want, "stops %r" % seen)
        check("from the handler" in seen[0][1] and "from the wrap's handler" in seen[2][1], "texts %r" % seen)
        check(c.finish() == 0, "exit")
    finally:
        c.close()


@case
def exception_breakpoints_all_stop_again_on_an_error_equal_to_one_a_close_returned():
    # close returns its handler's error (nothing unwinds): it stayed "shown", and the same string
    # raised next in that thread did not stop.
    path = script("close_then_raise.lua", """local co = coroutine.create(function()
  local x <close> = setmetatable({}, { __close = function() error("boom", 0) end })
  coroutine.yield()
end)
coroutine.resume(co)
print("close", coroutine.close(co))      -- CLOSE
print("pcall", pcall(error, "boom", 0))  -- RAISE
""")
    c = adapter()
    try:
        c.start(path, exceptions=["all"])
        lines = []
        for _ in range(2):
            stop = c.stopped("exception")
            lines.append(c.frames(stop["threadId"])[0]["line"])
            c.request("continue", {"threadId": stop["threadId"]})
        check(lines == [line_of(path, "CLOSE"), line_of(path, "RAISE")], "stops %r" % lines)
        check(c.finish() == 0, "exit")
    finally:
        c.close()


@case
@needs_a_poke_in_a_lua_loop
def a_pause_stops_an_endless_close_handler_a_wrap_function_runs():
    # The wrap function's close of its failed coroutine ran the handler with the coroutine not
    # recorded as the running thread: the pause's poke went to the caller, which never ran again.
    path = script("wrap_spin.lua", """local function body()
  local x <close> = setmetatable({}, { __close = function()
    local n = 0
    while true do n = n + 1 end   -- LOOP
  end })
  error("e")
end
print(pcall(coroutine.wrap(body)))
""")
    c = adapter()
    try:
        c.start(path)
        time.sleep(0.5)
        c.request("pause", {"threadId": 1})
        stop = c.stopped("pause")
        line = c.frames(stop["threadId"])[0]["line"]
        check(line == line_of(path, "LOOP"), "paused at line %d" % line)
        c.request("terminate", {})
    finally:
        c.close()


@case
def a_step_in_enters_a_coroutine_wrap_function_a_helper_resumes():
    # bk.select's walk is the bridge's Lua: its resume of the script's wrap function was taken for
    # the tasks engine's, and the stepIn ran past the block.
    path = script("wrap_block.lua", """local isEven = coroutine.wrap(function(x)
  while true do
    local even = x % 2 == 0   -- BODY
    x = coroutine.yield(even)
  end
end)
isEven(0)
local evens = bk.select({ 1, 2, 3, 4 }, isEven)   -- CALL
print("end", #evens)
""")
    c = adapter()
    try:
        c.start(path, breakpoints={path: [line_of(path, "CALL")]})
        stop = c.stopped("breakpoint")
        c.request("setBreakpoints", {"source": {"path": path}, "breakpoints": []})
        c.step("stepIn", stop["threadId"])
        stop = c.stopped("step")
        line = c.frames(stop["threadId"])[0]["line"]
        check(line == line_of(path, "BODY"), "stepIn stopped at line %d" % line)
        c.request("continue", {"threadId": stop["threadId"]})
        check(c.finish() == 0, "exit")
        check("end\t2" in c.output.get("stdout", ""), "output %r" % c.output)
    finally:
        c.close()


@case
def another_tasks_stop_ends_a_pending_next_over_bk_sleep():
    path = script("step_ended.lua", """local function a()
  local x = 1        -- A-BP
  bk.sleep(0.2)      -- A-SLEEP
  x = x + 1          -- A-NEXT
  return x
end
local function b()
  bk.sleep(0.02)
  local y = 1        -- B-BP
  return y
end
local ta, tb = bk.async(a), bk.async(b)
print(bk.await(ta), bk.await(tb))
""")
    c = adapter()
    try:
        c.start(path, breakpoints={path: [line_of(path, "A-SLEEP"), line_of(path, "B-BP")]})
        a = c.stopped("breakpoint")["threadId"]
        c.step("next", thread=a)  # over bk.sleep: task b hits its breakpoint meanwhile
        stop = c.stopped()
        check(stop["reason"] == "breakpoint" and stop["threadId"] != a, "b's stop: %r" % stop)
        check(c.frames(stop["threadId"])[0]["line"] == line_of(path, "B-BP"), "at b's breakpoint")
        c.request("continue", {"threadId": stop["threadId"]})
        # As documented: the other stop ended a's step, so a runs to its end without stopping.
        check(c.finish() == 0, "exit without another stop")
        check(not any(e["event"] == "stopped" and e["body"].get("reason") == "step" for e in c.seen), "no step stop")
        check("2\t1" in c.output.get("stdout", ""), "stdout: %r" % c.output)
    finally:
        c.close()


@case
@needs_a_poke_in_a_lua_loop
def breakpoints_set_while_running_hit_in_a_function_already_running_and_in_a_waiting_task():
    path = script("late_breakpoints.lua", """local go, done, ticks = false, false, 0
local task = bk.async(function()
  while not done do
    ticks = ticks + 1                 -- TASK
    bk.sleep(0.001)
  end
end)
local function spin()
  local n = 0
  while not go do
    n = n + 1                         -- SPIN
  end
  return n
end
spin()
bk.await(task)
print("ticks", ticks > 0)
""")
    c = adapter()
    try:
        c.start(path)
        time.sleep(0.3)  # spin() runs; the task waits in bk.sleep, its function on its stack
        c.request("setBreakpoints", {"source": {"path": path},
                                     "breakpoints": [{"line": line_of(path, "SPIN")}, {"line": line_of(path, "TASK")}]})
        stop = c.stopped("breakpoint")
        check(stop["threadId"] == 1 and c.frames()[0]["line"] == line_of(path, "SPIN"), "in spin(): %r" % stop)
        c.evaluate("go = true")
        c.request("setBreakpoints", {"source": {"path": path}, "breakpoints": [{"line": line_of(path, "TASK")}]})
        c.request("continue", {"threadId": 1})
        stop = c.stopped("breakpoint")
        task = stop["threadId"]
        check(task != 1 and c.frames(task)[0]["line"] == line_of(path, "TASK"), "in the task: %r" % stop)
        c.evaluate("done = true", frame=c.frames(task)[0]["id"])
        c.request("setBreakpoints", {"source": {"path": path}, "breakpoints": []})
        c.request("continue", {"threadId": task})
        check(c.finish() == 0, "exit")
        check("ticks\ttrue" in c.output.get("stdout", ""), "output: %r" % c.output)
    finally:
        c.close()


SLEEP_LOOP = """local function loop()
  local n = 0
  while n < 200 do
    bk.sleep(0.02)
    n = n + 1          -- LOOP
  end
  return n
end
if ... == "worker" then print(bk.await(bk.worker(loop))) else print(loop()) end
"""


@case
def the_first_breakpoint_set_while_a_loop_waits_in_bk_sleep_hits_in_main_a_worker_and_on_attach():
    # No breakpoint before: the poke lands in the loop's own code while the waiting function sits
    # on the main thread's (or the worker's) stack, which must still get its line events.
    path = script("sleep_loop.lua", SLEEP_LOOP)
    line = line_of(path, "LOOP")
    for where in ("main", "worker"):
        c = adapter()
        try:
            c.start(path, args=[where])
            time.sleep(0.3)
            c.request("setBreakpoints", {"source": {"path": path}, "breakpoints": [{"line": line}]})
            e = c.stopped("breakpoint")
            check(c.frames(e["threadId"])[0]["line"] == line and (e["threadId"] == 1) == (where == "main"),
                  "%s: %r" % (where, e))
        finally:
            c.close()
    # An editor attaching to the running loop (no --dap-wait) sets the breakpoint as it configures.
    process, port = listen(path, wait=False)
    c = Client.connect(port, process=process)
    try:
        time.sleep(0.3)
        c.initialize()
        c.request("attach", {})
        c.configure({path: [line]})
        e = c.stopped("breakpoint")
        check(c.frames(e["threadId"])[0]["line"] == line, "attached: %r" % e)
    finally:
        c.close()
        process.kill()
        process.wait()


EXCEPTIONS = """local ok, err = pcall(function()
  error("caught one")                  -- CAUGHT
end)
local ok2 = pcall(bk.map, { 1, 2 }, function(x)
  if x == 2 then error("in block") end   -- BLOCK
  return x
end)
local function fail()
  error({ code = 7 })                  -- FINAL
end
print("before the end", ok, ok2)
fail()
"""


@case
def exception_breakpoints_all_stop_where_errors_are_raised_even_caught_and_in_blocks():
    path = script("exceptions.lua", EXCEPTIONS)
    c = adapter()
    try:
        c.start(path, exceptions=["all"])
        e = c.stopped("exception")
        check("caught one" in e.get("text", ""), "caught: %r" % e)
        check(c.frames()[0]["line"] == line_of(path, "CAUGHT"), "where raised: %r" % c.frames()[0])
        c.request("continue", {"threadId": 1})
        e = c.stopped("exception")
        check("in block" in e.get("text", ""), "in bk.map's block: %r" % e)
        f = c.frames()
        check(f[0]["line"] == line_of(path, "BLOCK"), "in the block: %r" % f[0])
        seen_final = False
        for _ in range(4):
            c.request("continue", {"threadId": 1})
            e = c.stopped("exception")
            if "uncaught" in e.get("description", ""):
                seen_final = True
                break
        check(seen_final, "the uncaught error stops too")
        check(c.frames()[0]["line"] == line_of(path, "FINAL"), "final: %r" % c.frames()[0])
        check("error object" in e.get("text", ""), "a table error: %r" % e)
        check(c.evaluate("1 + 1")["result"] == "2", "evaluate at an exception")
        c.request("continue", {"threadId": 1})
        check(c.finish() == 1, "exit status 1")
        check("before the end\tfalse\tfalse" in c.output.get("stdout", ""), "pcall results unchanged: %r" % c.output)
    finally:
        c.close()


@case
def exception_breakpoints_uncaught_ignore_errors_a_pcall_catches():
    path = script("exceptions2.lua", EXCEPTIONS)
    c = adapter()
    try:
        c.start(path, exceptions=["uncaught"])
        e = c.stopped("exception")
        check(c.frames()[0]["line"] == line_of(path, "FINAL"), "only the uncaught one: %r / %r" % (e, c.frames()[0]))
        c.request("continue", {"threadId": 1})
        check(c.finish() == 1, "exit status 1")
    finally:
        c.close()


@case
def threads_list_every_live_task_by_name_with_thread_events_as_tasks_start_and_end():
    path = script("livetasks.lua", """local function spin(n)
  for _ = 1, n do bk.sleep(0.01) end
end
local hot = bk.async(function() spin(100000) end)      -- HOT
local quick = bk.async(function() return 1 end)         -- QUICK
local waiting = bk.async(function() bk.sleep(0.05) end) -- WAITING
local here = 1                                          -- HERE
bk.await(waiting)
hot:cancel()
pcall(bk.await, hot)
local later = 2                                         -- LATER
print("tasks done", quick ~= nil)
""")
    c = adapter()
    try:
        c.start(path, breakpoints={path: [line_of(path, "HERE"), line_of(path, "LATER")]})
        check(c.stopped("breakpoint")["threadId"] == 1, "stopped in the main code")
        threads = {t["name"]: t["id"] for t in c.request("threads")["body"]["threads"]}
        hot, waiting = "task livetasks.lua:%d" % line_of(path, "HOT"), "task livetasks.lua:%d" % line_of(path, "WAITING")
        check(threads.get("main") == 1, "main: %r" % threads)
        check(hot in threads and waiting in threads, "the live tasks, suspended and never stopped: %r" % threads)
        check(not any("%d" % line_of(path, "QUICK") in name for name in threads), "an ended task is gone: %r" % threads)
        started = [e["body"]["threadId"] for e in c.seen if e["event"] == "thread" and e["body"]["reason"] == "started"]
        exited = [e["body"]["threadId"] for e in c.seen if e["event"] == "thread" and e["body"]["reason"] == "exited"]
        check(len(started) == 3 and threads[hot] in started and threads[waiting] in started, "started: %r" % started)
        check(len(exited) == 1 and exited[0] not in threads.values(), "the quick task exited: %r" % exited)
        c.request("continue", {"threadId": 1})
        c.stopped("breakpoint")
        after = {t["name"]: t["id"] for t in c.request("threads")["body"]["threads"]}
        check(list(after) == ["main"], "the awaited and the cancelled task ended: %r" % after)
        exited = [e["body"]["threadId"] for e in c.seen if e["event"] == "thread" and e["body"]["reason"] == "exited"]
        check(threads[hot] in exited and threads[waiting] in exited, "exited events: %r" % exited)
        c.request("continue", {"threadId": 1})
        check(c.finish() == 0, "exit")
        check("tasks done\ttrue" in c.output.get("stdout", ""), "output %r" % c.output)
    finally:
        c.close()


TASK_ERRORS = """local t = bk.async(function(inner)
  local ok = pcall(bk.map, { 1, 2 }, function(x)
    if x == 2 then error("block in task") end   -- BLOCK
    return x
  end)
  bk.sleep(0.01)
  error("task failed: " .. inner)               -- RAISE
end, 41)
local ok, err = pcall(bk.await, t)
print("awaited", ok)
"""


@case
def exception_breakpoints_uncaught_stop_where_a_task_raises_an_error_nothing_in_it_catches():
    path = script("taskerror.lua", TASK_ERRORS)
    c = adapter()
    try:
        caps, _ = c.start(path, exceptions=["uncaught"])
        check(caps.get("supportsExceptionInfoRequest"), "capabilities: %r" % caps)
        e = c.stopped("exception")
        check("task failed: 41" in e.get("text", ""), "the task's error: %r" % e)
        check(e["threadId"] != 1, "the task's thread: %r" % e)
        threads = {t["id"]: t["name"] for t in c.request("threads")["body"]["threads"]}
        check(threads.get(e["threadId"]) == "task taskerror.lua:1", "named: %r" % threads)
        f = c.frames(e["threadId"])
        check(f[0]["line"] == line_of(path, "RAISE") and f[0]["source"]["path"] == path, "where raised: %r" % f[0])
        check(c.evaluate("inner", f[0]["id"], "watch")["result"] == "41", "the task's locals")
        info = c.request("exceptionInfo", {"threadId": e["threadId"]})["body"]
        check("task failed: 41" in info["description"] and info["breakMode"] == "unhandled", "exceptionInfo: %r" % info)
        c.request("continue", {"threadId": 1})
        check(c.finish() == 0, "exit status 0 (the await's pcall caught it)")
        check("awaited\tfalse" in c.output.get("stdout", ""), "output %r" % c.output)
    finally:
        c.close()


@case
def exception_breakpoints_all_stop_in_a_tasks_helper_block_and_where_the_task_raises():
    path = script("taskerror2.lua", TASK_ERRORS)
    c = adapter()
    try:
        c.start(path, exceptions=["all"])
        seen, code = [], None
        while code is None and len(seen) < 10:
            e = c.events.get(timeout=20)
            check(e is not None, "the session ended early: %r" % seen)
            if e["event"] == "exited":
                code = e["body"]["exitCode"]
            elif e["event"] == "stopped":
                f = c.frames(e["body"]["threadId"])
                seen.append((e["body"].get("text", ""), e["body"]["threadId"], f[0]["line"]))
                c.request("continue", {"threadId": 1})
        blocks = [x for x in seen if "block in task" in x[0]]
        raised = [x for x in seen if "task failed: 41" in x[0] and x[2] == line_of(path, "RAISE")]
        check(blocks and blocks[0][2] == line_of(path, "BLOCK") and blocks[0][1] != 1, "the block's error in the task: %r" % seen)
        check(raised and raised[0][1] != 1, "the task's own error where raised: %r" % seen)
        check(code == 0, "exit %r" % code)
    finally:
        c.close()


COROUTINE_STEPS = """local function body()
  local a = 1   -- CO_BP
  return a      -- CO_RET
end
local r = coroutine.wrap(body)()
print("back", r)          -- AFTER_WRAP
local r2 = coroutine.wrap(body)()
print("back again", r2)   -- AFTER_WRAP2
local gen = coroutine.create(function()
  coroutine.yield(1)      -- YIELD
  print("never")
end)
coroutine.resume(gen)
coroutine.close(gen)      -- AFTER_RESUME
print("end")
"""


def step_to_main(c, command, thread, path, marker):
    """Steps `thread` and checks that the stop is in the main code at `marker`'s line."""
    c.step(command, thread)
    e = c.stopped("step", timeout=10)
    f = c.frames(e["threadId"])
    check(e["threadId"] == 1 and f[0]["line"] == line_of(path, marker), "%s to %s: %r %r" % (command, marker, e, f[0]))


@case
def a_step_that_leaves_a_coroutine_by_return_or_yield_stops_in_its_resumer():
    path = script("costeps.lua", COROUTINE_STEPS)
    c = adapter()
    try:
        c.start(path, breakpoints={path: [line_of(path, "CO_BP"), line_of(path, "YIELD")]})
        # next over the coroutine's last line (its return)
        e = c.stopped("breakpoint")
        c.step("next", e["threadId"])
        e = c.stopped("step")
        check(c.frames(e["threadId"])[0]["line"] == line_of(path, "CO_RET"), "next in the coroutine")
        step_to_main(c, "next", e["threadId"], path, "AFTER_WRAP")
        # stepOut of a coroutine.wrap body
        c.request("continue", {"threadId": 1})
        step_to_main(c, "stepOut", c.stopped("breakpoint")["threadId"], path, "AFTER_WRAP2")
        # next over a yield whose coroutine is never resumed
        c.request("continue", {"threadId": 1})
        e = c.stopped("breakpoint")
        check(c.frames(e["threadId"])[0]["line"] == line_of(path, "YIELD"), "at the yield")
        step_to_main(c, "next", e["threadId"], path, "AFTER_RESUME")
        c.request("continue", {"threadId": 1})
        check(c.finish() == 0, "exit")
    finally:
        c.close()


@case
def step_in_on_a_line_that_resumes_a_coroutine_enters_it():
    path = script("stepin_co.lua", """local co = coroutine.create(function(a)
  local x = a + 1                   -- IN1
  return x
end)
local ok, v = coroutine.resume(co, 1)  -- BP1
local gen = coroutine.wrap(function()
  coroutine.yield(10)               -- IN2
end)
local w = gen()                     -- BP2
print("done", ok, v, w)             -- AFTER
""")
    c = adapter()
    try:
        c.start(path, breakpoints={path: [line_of(path, "BP1"), line_of(path, "BP2")]})
        for resume, inside in (("BP1", "IN1"), ("BP2", "IN2")):
            stop = c.stopped("breakpoint")
            check(c.frames(stop["threadId"])[0]["line"] == line_of(path, resume), "at %s" % resume)
            c.step("stepIn", thread=stop["threadId"])
            stop = c.stopped("step")
            f = c.frames(stop["threadId"])
            check(f[0]["line"] == line_of(path, inside), "stepIn at %s entered the coroutine: %r" % (resume, f[0]))
            c.request("continue", {"threadId": stop["threadId"]})
        check(c.finish() == 0, "exit")
        check("done\ttrue\t2\t10" in c.output.get("stdout", ""), "%r" % c.output)
    finally:
        c.close()


@case
def every_thread_started_has_exited_by_the_end_of_the_run():
    path = script("threads_end.lua", """for i = 1, 3 do
  local co = coroutine.create(function()
    return i   -- CO
  end)
  coroutine.resume(co)
end
local pending = bk.async(function() bk.sleep(3600) end)  -- a task that never ends
print("end")
os.exit(0)
""")
    c = adapter()
    try:
        c.start(path, breakpoints={path: [line_of(path, "CO")]})
        for _ in range(3):
            stop = c.stopped("breakpoint")
            c.request("continue", {"threadId": stop["threadId"]})
        check(c.finish() == 0, "exit")
        started = {e["body"]["threadId"] for e in c.seen if e["event"] == "thread" and e["body"]["reason"] == "started"}
        exited = {e["body"]["threadId"] for e in c.seen if e["event"] == "thread" and e["body"]["reason"] == "exited"}
        check(len(started) >= 4 and started == exited, "started %r, exited %r" % (sorted(started), sorted(exited)))
    finally:
        c.close()


@case
def a_step_out_of_a_coroutine_stops_in_a_resumer_that_returns_on_the_resume_line():
    path = script("stepout_co_same.lua", """local co = coroutine.create(function()
  return 42                         -- BP
end)
local function h() return 1 + select(2, coroutine.resume(co)) end   -- RESUMER
local function k() return h() * 2 end
print(k())
""")
    for step in ("stepOut", "next"):
        c = adapter()
        try:
            c.start(path, breakpoints={path: [line_of(path, "-- BP")]})
            stop = c.stopped("breakpoint")
            c.step(step, thread=stop["threadId"])
            stop = c.stopped("step")
            f = c.frames(stop["threadId"])
            check(f[0]["line"] == line_of(path, "RESUMER") and f[0]["name"] == "h", "%s: %r" % (step, f[0]))
            c.request("continue", {"threadId": stop["threadId"]})
            check(c.finish() == 0, "exit")
        finally:
            c.close()


@case
def a_coroutine_that_stopped_and_ended_gets_a_thread_exited_event():
    path = script("cothreads.lua", """for i = 1, 3 do
  local co = coroutine.wrap(function()
    local v = i * 2   -- STOP
    return v
  end)
  co()
end
""")
    c = adapter()
    try:
        c.start(path, breakpoints={path: [line_of(path, "STOP")]})
        ids = []
        for _ in range(3):
            e = c.stopped("breakpoint")
            check(e["threadId"] != 1 and e["threadId"] not in ids, "a thread of its own: %r" % e)
            ids.append(e["threadId"])
            c.request("continue", {"threadId": e["threadId"]})
        check(c.finish() == 0, "exit")
        exited = [e["body"]["threadId"] for e in c.seen if e["event"] == "thread" and e["body"]["reason"] == "exited"]
        check(ids[0] in exited and ids[1] in exited, "the ended coroutines' threads exited: %r of %r" % (exited, ids))
    finally:
        c.close()


COROUTINE_ERRORS = """local co = coroutine.create(function(x)
  local y = x + 1
  error("in coroutine " .. y)                      -- CO_RAISE
end)
local ok, err = coroutine.resume(co, 1)
print("resumed", ok, err)
local w = coroutine.wrap(function() error({ code = 3 }) end)   -- WRAP_RAISE
local ok2, err2 = pcall(w)
print("wrapped", ok2, err2.code)
local t = bk.async(function()
  bk.map({ 1 }, function() error("escapes the task") end)     -- TASK_BLOCK
end)
print("awaited", pcall(bk.await, t))
"""


def exception_stops(c, limit=12):
    """Continues from each stop until the run exits: [(text, description, threadId, line)], code."""
    seen = []
    while len(seen) < limit:
        e = c.events.get(timeout=20)
        check(e is not None, "the session ended early: %r" % seen)
        if e["event"] == "exited":
            return seen, e["body"]["exitCode"]
        if e["event"] == "stopped":
            b = e["body"]
            f = c.frames(b["threadId"])
            seen.append((b.get("text", ""), b.get("description", ""), b["threadId"], f[0]["line"] if f else None))
            c.request("continue", {"threadId": 1})
    raise DAPError("more than %d stops: %r" % (limit, seen))


@case
def a_nan_raised_as_an_error_stops_once():
    # NaN is not equal to itself: the record of the error shown compared it raw, and the wrap's call
    # stopped again for the error its coroutine had stopped at.
    path = script("nan_error.lua", """print("nan", pcall(coroutine.wrap(function() error(0/0) end)))
print("table", pcall(coroutine.wrap(function() error({}) end)))
""")
    c = adapter()
    try:
        c.start(path, exceptions=["all"])
        seen, code = exception_stops(c)
        check(code == 0 and len(seen) == 2, "one stop each: %r" % seen)
    finally:
        c.close()


@case
def closing_the_dead_coroutine_at_its_error_stop_leaves_resume_its_error():
    # The stop comes inside coroutine.resume and wrap; an evaluation there may close the coroutine.
    path = script("close_at_stop.lua", """local co = coroutine.create(function(a)
  error({ code = a })
end)
CO = co
local ok, e = coroutine.resume(co, 7)
print("1st", ok, type(e), e and e.code, coroutine.status(co))
print("2nd", coroutine.resume(co))
CO = coroutine.wrap(function() error("from wrap") end)
print("wrap", pcall(CO))
""")
    c = adapter()
    try:
        c.start(path, exceptions=["all"])
        for round in range(2):
            stop = c.stopped("exception")
            frame = c.frames(stop["threadId"])[0]["id"]
            locals_ref = c.scopes(frame)["Locals"]["variablesReference"]
            c.evaluate("type(CO) == 'thread' and coroutine.close(CO) or CO and pcall(CO)", frame)
            # The frame is gone with the coroutine: no locals (not getlocal's 'level out of range').
            r = c.request("variables", {"variablesReference": locals_ref}, ok=False)
            check(r["success"] and (round == 1 or r["body"]["variables"] == []), "locals of a closed coroutine: %r" % r)
            c.request("continue", {"threadId": stop["threadId"]})
        check(c.finish() == 0, "exit")
        out = c.output.get("stdout", "")
        check("1st\tfalse\ttable\t7\tdead" in out, "resume returned the error: %r" % out)
        check("2nd\tfalse\tcannot resume dead coroutine" in out, "then dead: %r" % out)
        check("wrap\tfalse\t" in out and "from wrap" in out, "wrap raised its error: %r" % out)
    finally:
        c.close()


@case
def under_the_all_filter_pcall_and_xpcall_give_what_lua_s_own_give():
    # error's levels, nested pcalls' depth and a message handler that raises: as stock lua5.4 runs it.
    path = script("all_same.lua", """print("level", pcall(error, "msg", 2))
local function nest(n) if n == 0 then return 0 end local ok, r = pcall(nest, n - 1) if not ok then error(r, 0) end return r + 1 end
print("nest", pcall(nest, 180))
print("xpcall", xpcall(function() error("first") end, function(m) error({}) end))
print("args", xpcall(function(...) return select("#", ...), ... end, print, 1, nil, 3))
print("inner", xpcall(function() error("second") end, function(e) pcall(error, "inner"); error({}) end))
""")
    expected = subprocess.run([os.environ.get("LUA", "lua5.4"), path], capture_output=True, text=True, timeout=20).stdout
    c = adapter()
    try:
        c.start(path, exceptions=["all"])
        stops = 0
        while stops < 20:
            try:
                stop = c.stopped("exception", timeout=5)
            except DAPError:
                break
            stops += 1
            c.request("continue", {"threadId": stop["threadId"]})
        exited = [e["body"]["exitCode"] for e in c.seen if e["event"] == "exited"]
        check(exited == [0], "exit: %r" % exited)
        check(c.output.get("stdout", "") == expected, "%r, lua5.4: %r" % (c.output.get("stdout"), expected))
        # error("msg", 2) and "first"; the handler's own error (Lua calls the handler again for it,
        # about a hundred times) is not another stop. Then "second" and the "inner" error of the
        # handler's first run, not of its retries (a pcall in the handler made each retry two stops).
        check(stops == 4, "stops: %d" % stops)
    finally:
        c.close()


@case
def a_resume_lua_refuses_is_no_error_of_the_coroutine():
    # Resuming the running main thread, a normal coroutine or a dead one: resume returns false and a
    # message, but no coroutine died. They stopped post mortem, in a made-up thread for main.
    path = script("resume_refused.lua", """local main = coroutine.running()
print("1", coroutine.resume(main))
local A
local B = coroutine.create(function() print("2", coroutine.resume(A)) end)
A = coroutine.create(function() coroutine.resume(B) end)
coroutine.resume(A)
print("3", coroutine.resume(A))
local dies = coroutine.create(function() error("died") end)
print("4", coroutine.resume(dies))
print("5", coroutine.resume(dies))
""")
    c = adapter()
    try:
        c.start(path, exceptions=["all"])
        stop = c.stopped("exception")  # the one coroutine that dies: "died", in its own thread
        info = c.request("exceptionInfo", {"threadId": stop["threadId"]})["body"]
        check(stop["threadId"] != 1 and "died" in info["description"], "%r %r" % (stop, info))
        c.request("continue", {"threadId": stop["threadId"]})
        check(c.finish() == 0, "exit")
        out = c.output.get("stdout", "")
        check(out.count("cannot resume") == 4 and "4\tfalse" in out, "%r" % out)
        check(len([e for e in c.seen if e["event"] == "stopped"]) == 1, "one stop: %r" % [e for e in c.seen if e["event"] == "stopped"])
    finally:
        c.close()


@case
def an_error_the_bridge_reported_is_a_new_error_when_raised_again():
    # An observer's error is caught and reported by the bridge (the loop goes on): the same message
    # raised again, by the observer or by the script, stops again.
    path = script("reported_again.lua", """local t = { x = 0 }
bk.addObserverForKeyPath(t, "x", function() error("observer failed", 0) end)   -- RAISE
for i = 1, 3 do t.x = i end
error("observer failed", 0)   -- UNCAUGHT
""")
    c = adapter()
    try:
        c.start(path, exceptions=["all"])
        lines = []
        for _ in range(4):
            stop = c.stopped("exception")
            lines.append(c.frames(stop["threadId"])[0]["line"])
            c.request("continue", {"threadId": stop["threadId"]})
        check(lines == [line_of(path, "RAISE")] * 3 + [line_of(path, "UNCAUGHT")], "stops at %r" % lines)
        check(c.finish() == 1, "exit 1")
    finally:
        c.close()


@case
def clipped_texts_are_cut_between_utf8_characters():
    path = script("clip_utf8.lua", """local msg = "é日本 " .. string.rep("a", 3990) .. "日本語のテキスト"
pcall(error, msg, 0)
local jp = string.rep("日本語", 50)   -- 450 bytes: a value is clipped at 400
local x = 1                         -- BP
print("done")
""")
    c = adapter()
    try:
        c.start(path, breakpoints={path: [line_of(path, "-- BP")]}, exceptions=["all"])
        stop = c.stopped("exception")
        # Clipped inside 日 (4000 bytes), it came as "\u00e6\u0097..." for every byte: mojibake.
        check(stop["text"].startswith("é日本 aaa") and stop["text"].endswith("..."), "%r" % stop["text"][:20])
        c.request("continue", {"threadId": 1})
        c.stopped("breakpoint")
        value = c.locals(c.frames()[0]["id"])["jp"]["value"]
        check(value.startswith('"日本語日本語') and value.endswith('..."'), "%r" % value[:20])
        c.request("continue", {"threadId": 1})
        check(c.finish() == 0, "exit")
    finally:
        c.close()


@case
def exception_breakpoints_all_stop_once_per_error_also_in_coroutines_the_script_resumes():
    path = script("coerrors.lua", COROUTINE_ERRORS)
    c = adapter()
    try:
        c.start(path, exceptions=["all"])
        e = c.stopped("exception")
        check("in coroutine 2" in e.get("text", "") and e["threadId"] != 1, "resume's error, in its thread: %r" % e)
        f = c.frames(e["threadId"])
        check(f[0]["line"] == line_of(path, "CO_RAISE"), "where raised: %r" % f[0])
        check(c.evaluate("y", frame=f[0]["id"])["result"] == "2", "the coroutine's locals, post mortem")
        c.request("continue", {"threadId": 1})
        seen, code = exception_stops(c)
        check(code == 0, "exit %r" % code)
        check("resumed\tfalse\t" in c.output.get("stdout", "") and "wrapped\tfalse\t3" in c.output.get("stdout", ""),
              "resume's and wrap's results unchanged: %r" % c.output)
        wrapped = [x for x in seen if x[3] == line_of(path, "WRAP_RAISE")]
        check(len(wrapped) == 1 and not any("error object" in x[0] and x[3] != line_of(path, "WRAP_RAISE") for x in seen),
              "wrap's error stops once, where raised: %r" % seen)
        block = [x for x in seen if "escapes the task" in x[0] and x[2] != 1]
        check(len(block) == 1 and block[0][3] == line_of(path, "TASK_BLOCK"),
              "the block's error stops once in the task, not again as the task's failure: %r" % seen)
    finally:
        c.close()
    # uncaught: resume and pcall catch theirs; the task's error stops once, as the task's failure.
    c = adapter()
    try:
        c.start(path, exceptions=["uncaught"])
        seen, code = exception_stops(c)
        check(code == 0, "exit %r" % code)
        check(len(seen) == 1 and "escapes the task" in seen[0][0] and "task" in seen[0][1], "uncaught: %r" % seen)
    finally:
        c.close()


@case
def variables_show_frozen_and_observed_collections_and_bridged_objects_properties():
    path = script("collections.lua", """local frozen = bk.freeze(bk.array({ 10, 20, 30 }))
local list = {}
for i = 1, 250 do list[i] = i * 2 end
local frozenBig = bk.freeze(bk.orderedSet(list))
local observed = bk.dictionary({ name = "x", size = 3 })
local wide = bk.dictionary({})
for i = 1, 300 do wide[string.format("k%03d", i)] = i end
bk.addObserverForKeyPath(observed, "name", function() end)
local handle = bk.performBlock(function() end, 60)
local crafted = bk.performBlock(function() end, 60)
handle:cancel()
crafted:cancel()
debug.setmetatable(crafted, { __name = "Crafted", __bkproperties = { "fine", "raises", "loops", "after" },
  __index = function(_, k)
    if k == "raises" then error("getter raised") end
    if k == "loops" then while true do end end
    return 1
  end })
local hostile = setmetatable({ 7 }, { __index = function() while true do end end,
  __pairs = function() while true do end end, __len = function() error("len") end })
local here = 1   -- HERE
print("done")
""")
    c = adapter()
    try:
        c.start(path, breakpoints={path: [line_of(path, "HERE")]})
        c.stopped("breakpoint")
        local = c.locals(c.frames()[0]["id"])
        # a frozen bk.array: its elements (the view itself is an empty table)
        check(local["frozen"]["variablesReference"] > 0, "frozen %r" % local["frozen"])
        kids = {v["name"]: v["value"] for v in c.variables(local["frozen"]["variablesReference"])}
        check(kids.get("[1]") == "10" and kids.get("[3]") == "30", "frozen elements: %r" % kids)
        # a large frozen ordered set: paged
        big = local["frozenBig"]
        check(big.get("indexedVariables") == 250, "paged: %r" % big)
        page = c.variables(big["variablesReference"], filter="indexed", start=200, count=3)
        check([(v["name"], v["value"]) for v in page] == [("[201]", "402"), ("[202]", "404"), ("[203]", "406")], "page %r" % page)
        # a large dictionary: its key count, and pages of its keys
        check(local["wide"].get("namedVariables") == 300, "wide: %r" % local["wide"])
        page = c.variables(local["wide"]["variablesReference"], filter="named", start=10, count=3)
        check([(v["name"], v["value"]) for v in page] == [("k011", "11"), ("k012", "12"), ("k013", "13")], "named page %r" % page)
        # an observed dictionary: the observed key moved out of the table, still shown
        kids = {v["name"]: v["value"] for v in c.variables(local["observed"]["variablesReference"])}
        check(kids.get("name") == '"x"' and kids.get("size") == "3", "observed: %r" % kids)
        check("(2)" in local["observed"]["value"], "observed count: %r" % local["observed"])
        # a bridged Swift object: its exported properties by name and value
        check(local["handle"]["value"].startswith("bk.BlockHandle"), "handle %r" % local["handle"])
        kids = {v["name"]: v["value"] for v in c.variables(local["handle"]["variablesReference"])}
        check(kids.get("isCancelled") == "true" and kids.get("isFinished") in ("true", "false"), "properties: %r" % kids)
        check(kids.get("queue", "").startswith("bk.Queue") or "queue" in kids, "queue property: %r" % kids)
        # crafted metamethods: raise, never end; the debugger answers, in time
        started = time.time()
        kids = {v["name"]: v["value"] for v in c.variables(local["crafted"]["variablesReference"])}
        check(time.time() - started < 10, "in time")
        check(kids.get("fine") == "1" and "getter raised" in kids.get("raises", ""), "crafted: %r" % kids)
        check("ran too long" in kids.get("loops", "") and "not read" in kids.get("after", ""), "crafted loop: %r" % kids)
        kids = {v["name"]: v["value"] for v in c.variables(local["hostile"]["variablesReference"])}
        check(kids.get("[1]") == "7", "a hostile table read raw: %r" % kids)
        check(c.evaluate("1 + 1")["result"] == "2", "the session still works")
        c.request("continue", {"threadId": 1})
        check(c.finish() == 0, "exit")
    finally:
        c.close()


# ---------------------------------------------------------------------------------------------
# TCP

def listen(script_path, *extra, wait=True, options=()):
    """bklua --dap-listen 0 [--dap-wait] OPTIONS script EXTRA: the process and its port."""
    args = [BKLUA, "--dap-listen", "0"] + (["--dap-wait"] if wait else []) + list(options) + [script_path] + list(extra)
    process = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    line = process.stderr.readline().decode()
    m = re.search(r"listening on [\d.]+:(\d+)", line)
    if not m:
        process.kill()
        raise AssertionError("no port announced: %r" % line)
    return process, int(m.group(1))



def leave_over_tcp_while_stopped(path, marker, stops, expected, next_client=False):
    """Attaches over TCP with a breakpoint at `marker`, waits for `stops` stops, then closes the
    socket: the script must go on and finish with `expected` in its stdout. `next_client`: another
    client is already waiting (connected, initialize sent) as the first leaves."""
    process, port = listen(path)
    c = Client.connect(port, process=process)
    waiting = None
    try:
        c.initialize()
        c.request("attach", {})
        c.configure({path: [line_of(path, marker)]})
        for _ in range(stops):
            c.stopped("breakpoint")
        if next_client:
            waiting = Client.connect(port, process=process)
            waiting.send("initialize", {"adapterID": "bklua"})
        c.sock.shutdown(2)
        c.sock.close()
        out, _ = process.communicate(timeout=20)
        check(process.returncode == 0 and expected in out, "the script finished: %r" % out)
    finally:
        if waiting is not None:
            waiting.close()
        if process.poll() is None:
            process.kill()

@case
def an_answer_to_a_client_that_left_does_not_go_to_the_next_one():
    path = script("late_answer.lua", """local n = 0
for i = 1, 2 do
  n = n + i    -- BP
end
print("n", n)
""")
    process, port = listen(path)
    a = Client.connect(port, process=process)
    b = None
    try:
        a.initialize()
        a.request("attach", {})
        a.configure({path: [line_of(path, "BP")]})
        a.stopped("breakpoint")
        frame = a.frames()[0]["id"]
        # An evaluation that takes a second; meanwhile b connects and a leaves.
        a.send("evaluate", {"expression": "(function() local t = os.clock() while os.clock() - t < 1 do end return 42 end)()",
                            "frameId": frame, "context": "repl"})
        time.sleep(0.2)
        b = Client.connect(port, process=process)
        b.send("initialize", {"adapterID": "bklua"})
        a.sock.shutdown(2)
        a.sock.close()
        check(b.response(1)["success"], "b is served")
        out, _ = process.communicate(timeout=20)
        check(b"n\t3" in out, "the script went on: %r" % out)
        b.thread.join(5)
        stray = [r for r in b.responses.values() if r.get("command") == "evaluate"]
        check(not stray, "b got the answer to a's request: %r" % stray)
    finally:
        for c in (a, b):
            if c is not None:
                c.close()
        if process.poll() is None:
            process.kill()


@case
def pause_while_stopped_ends_the_running_evaluation_and_not_the_next_run():
    path = script("pause_eval.lua", """local x = 1
local y = 2                         -- BP
print("done", x, y)
""")
    c = adapter()
    try:
        c.start(path, breakpoints={path: [line_of(path, "-- BP")]})
        stop = c.stopped("breakpoint")
        frame = c.frames()[0]["id"]
        started = time.time()
        seq = c.send("evaluate", {"expression": "(function() while true do end end)()", "frameId": frame, "context": "repl"})
        time.sleep(0.3)
        c.request("pause", {"threadId": stop["threadId"]})
        r = c.response(seq, timeout=15)
        # Ended by the pause, well before its own 5 s limit would.
        check(not r["success"] and "paused" in r.get("message", "") and time.time() - started < 4, "%r" % r)
        check(c.evaluate("x + 1")["result"] == "2", "the next evaluation runs")
        c.request("continue", {"threadId": 1})
        check(c.finish() == 0, "no pause left for the run: it ends")
        check("done\t1\t2" in c.output.get("stdout", ""), "%r" % c.output)
    finally:
        c.close()


@case
def attach_over_tcp_with_dap_listen_and_dap_wait():
    path = script("listen.lua", """local total = 0
for i = 1, 5 do
  total = total + i    -- LOOP
end
print("total", total)
""")
    process, port = listen(path)
    c = Client.connect(port, process=process)
    try:
        c.initialize()
        c.request("attach", {})
        c.configure({path: [{"line": line_of(path, "LOOP"), "condition": "i == 4"}]})
        c.stopped("breakpoint")
        check(c.evaluate("total")["result"] == "6", "total before i == 4")
        c.request("continue", {"threadId": 1})
        check(c.finish() == 0, "exit over TCP")
        out = process.stdout.read().decode()
        check("total\t15" in out, "the script's own stdout stays its own: %r" % out)
    finally:
        c.close()


@case
@needs_a_poke_in_a_lua_loop  # the profiler's samples are pokes too
def under_profile_the_debuggers_own_evaluations_are_not_sampled_as_the_scripts_code():
    path = script("profiled.lua", """local function hot() local s = 0 for i = 1, 3e6 do s = s + i end return s end
local x = hot()
x = x + 1   -- BP
print("x", x)
""")
    folded = os.path.join(scratch, "profiled.folded")
    process, port = listen(path, options=["--profile=" + folded])
    c = Client.connect(port, process=process)
    try:
        c.initialize()
        c.request("attach", {})
        c.configure({path: [line_of(path, "BP")]})
        c.stopped("breakpoint")
        # Three times hot's work, in the debug console: it used to be most of the script's profile.
        # (Ten times ran past the evaluation's 5 s limit under AddressSanitizer.)
        c.evaluate("(function() local s = 0 for i = 1, 1e7 do s = s + i end return s end)()", c.frames()[0]["id"])
        c.request("continue", {"threadId": 1})
        check(c.finish() == 0, "the run ends")
        process.communicate(timeout=20)
        with open(folded) as f:
            text = f.read()
        check("(hot)" in text, "the script's hot function is sampled: %r" % text)
        check("evaluate" not in text and "[Swift] next" not in text, "the debugger's work is left out: %r" % text)
    finally:
        c.close()
        if process.poll() is None:
            process.kill()


@case
@needs_a_poke_in_a_lua_loop
def a_client_attaching_late_can_pause_a_running_loop_and_leave_it_running():
    path = script("late.lua", """local n = 0
local stop = false
io.stderr:write("looping\\n")
while not stop do n = n + 1 end
print("stopped at", n > 0)
""")
    process, port = listen(path, wait=False)
    c = Client.connect(port, process=process)
    try:
        c.initialize()
        c.request("attach", {})
        c.configure()
        # In the loop, not before it (a pause that comes first stops on the script's first line).
        check(process.stderr.readline() == b"looping\n", "the script runs its loop")
        c.request("pause", {"threadId": 1})
        c.stopped("pause")
        c.evaluate("stop = true")
        check(c.evaluate("stop")["result"] == "true", "evaluate wrote the local")
        c.request("continue", {"threadId": 1})
        check(c.finish() == 0, "exit")
    finally:
        c.close()


@case
def the_sandbox_time_limit_still_ends_an_endless_loop_while_a_debugger_is_attached():
    path = script("limited.lua", """local function never()
  return 1            -- NEVER
end
local n = 0
while true do n = n + 1 end
""")
    process, port = listen(path, options=["--time-limit", "0.5"])
    c = Client.connect(port, process=process)
    try:
        c.initialize()
        c.request("attach", {})
        c.configure({path: [line_of(path, "NEVER")]})
        code = c.finish(timeout=20)
        check(code == 1, "the limit ended the run: %r" % code)
        err = process.stderr.read().decode()
        check("time limit exceeded" in err, "stderr: %r" % err)
    finally:
        c.close()


@case
def time_stopped_and_evaluations_do_not_count_against_the_limits():
    path = script("limits_stopped.lua", """local s = 0
for i = 1, 10 do s = s + i end
s = s + 1   -- BP
for i = 1, 1e5 do s = s + i end
print("done", s)
""")
    for options in (["--time-limit", "1"], ["--instruction-limit", "2000000"]):
        process, port = listen(path, options=options)
        c = Client.connect(port, process=process)
        try:
            c.initialize()
            c.request("attach", {})
            c.configure({path: [line_of(path, "BP")]})
            c.stopped("breakpoint")
            if options[0] == "--time-limit":
                time.sleep(1.5)  # a user looking at the stop, longer than the whole limit
            else:  # an evaluation over the budget fails on its own; the script's budget is as it was
                r = c.evaluate("(function() local s = 0 for i = 1, 5e6 do s = s + i end return s end)()", ok=False)
                check(not r["success"] or "limit" in r["body"].get("result", ""), "evaluate: %r" % r)
            c.request("continue", {"threadId": 1})
            out, err = process.communicate(timeout=20)
            check(process.returncode == 0 and b"done" in out, "%s: %r %r %r" % (options, process.returncode, out, err))
        finally:
            c.close()
            if process.poll() is None:
                process.kill()
                process.wait()


@case
def a_stopped_workers_time_does_not_count_against_the_time_limit_of_the_code_awaiting_it():
    path = script("limits_worker_stopped.lua", """local function body()
  local s = 0
  for i = 1, 10 do s = s + i end
  s = s + 1   -- BP
  return s
end
print("done", bk.await(bk.worker(body)))
""")
    process, port = listen(path, options=["--time-limit", "1"])
    c = Client.connect(port, process=process)
    try:
        c.initialize()
        c.request("attach", {})
        c.configure({path: [line_of(path, "BP")]})
        stop = c.stopped("breakpoint")
        check(stop["threadId"] != 1, "stopped in the worker: %r" % stop)
        time.sleep(1.5)  # the main code awaits the worker meanwhile, longer than the whole limit
        c.request("continue", {"threadId": stop["threadId"]})
        out, err = process.communicate(timeout=20)
        check(process.returncode == 0 and b"done\t56" in out, "%r %r %r" % (process.returncode, out, err))
    finally:
        c.close()
        if process.poll() is None:
            process.kill()
            process.wait()


@case
def breakpoints_in_a_fifo_or_a_binary_chunk_are_answered_without_reading_them_as_code():
    # Placing breakpoints reads the file: a FIFO would block the adapter, and a forged binary chunk
    # is not something Lua's loader checks. Both are answered as asked, at once.
    fifo = os.path.join(scratch, "breakpoints.fifo")
    if not os.path.exists(fifo):
        os.mkfifo(fifo)
    source = script("binary_src.lua", "local x = 1\nprint(x)\n")
    binary = os.path.join(scratch, "binary.luac")
    subprocess.run(["luac5.4", "-o", binary, source], check=True)
    with open(binary, "r+b") as f:  # its body made garbage
        f.seek(40)
        f.write(b"\xff" * 64)
    path = script("plain.lua", "print('ran')\n")
    c = adapter()
    try:
        c.start(path)
        for other in (fifo, binary):
            r = c.request("setBreakpoints", {"source": {"path": other}, "breakpoints": [{"line": 1}, {"line": 2}]}, timeout=10)
            check([b["line"] for b in r["body"]["breakpoints"]] == [1, 2], "%s: %r" % (other, r["body"]))
        check(c.finish() == 0, "exit")
    finally:
        c.close()


@case
def malformed_hit_conditions_and_long_function_names_are_refused_with_a_reason():
    path = script("hits_refused.lua", """local n = 0
for i = 1, 4 do
  n = n + i   -- BP
end
print("n", n)
""")
    c = adapter()
    try:
        line = line_of(path, "BP")
        c.initialize()
        seq = c.send("launch", {"program": path})
        asked = ["abc", "% 0", "2.5", "0x2", "0", "< 1", "<= 0", "% 9223372036854775807", ">= 3"]
        r = c.request("setBreakpoints", {"source": {"path": path},
                                         "breakpoints": [{"line": line, "hitCondition": h} for h in asked]})
        answers = r["body"]["breakpoints"]
        check([a["verified"] for a in answers] == [False] * 7 + [True, False], "%r" % answers)
        check(all("expected N" in a.get("message", "") for a in answers[:4]), "%r" % answers)
        check(all("never holds" in a.get("message", "") for a in answers[4:7]), "%r" % answers)
        # One breakpoint a line: the run has ">= 3" alone.
        r = c.request("setBreakpoints", {"source": {"path": path}, "breakpoints": [{"line": line, "hitCondition": ">= 3"}]})
        check(r["body"]["breakpoints"][0]["verified"], "%r" % r["body"])
        r = c.request("setFunctionBreakpoints", {"breakpoints": [{"name": "f" * 250}, {"name": "g", "hitCondition": "x"}]})
        answers = r["body"]["breakpoints"]
        check(not answers[0]["verified"] and "199 bytes" in answers[0]["message"], "%r" % answers[0])
        check(not answers[1]["verified"] and "expected N" in answers[1]["message"], "%r" % answers[1])
        c.request("configurationDone")
        c.response(seq)
        for _ in range(2):  # >= 3: the third and fourth hits
            stop = c.stopped("breakpoint")
            c.request("continue", {"threadId": stop["threadId"]})
        check(c.finish() == 0, "exit")
    finally:
        c.close()


@case
def loaded_sources_list_the_files_that_ran():
    path = script("sources.lua", "local x = 1\nlocal y = 2\n")
    c = adapter()
    try:
        c.start(path, stop_on_entry=True)
        c.stopped("entry")
        sources = c.request("loadedSources")["body"]["sources"]
        check(any(s["path"] == path for s in sources), "sources %r" % sources)
        c.request("continue", {"threadId": 1})
        check(c.finish() == 0, "exit")
    finally:
        c.close()


# ---------------------------------------------------------------------------------------------
# A callback can do anything: evaluate and conditions that misbehave, a client that misbehaves

HOSTILE = """local t = setmetatable({}, { __tostring = function() error("tostring raised") end,
                               __index = function() error("index raised") end })
local obj = setmetatable({}, { __gc = function() if bk then pcall(bk.sleep, 0) end end })
obj = nil
local n = 0
for i = 1, 3 do
  n = n + i          -- HERE
end
print("done", n)
"""


@case
def evaluate_that_raises_yields_loops_or_collects_never_breaks_the_session():
    path = script("hostile.lua", HOSTILE)
    c = adapter()
    try:
        c.start(path, breakpoints={path: [line_of(path, "HERE")]})
        c.stopped("breakpoint")
        for expression, expect in [
            ("error('plain')", "plain"),
            ("error({})", "error object"),
            ("error(setmetatable({}, {__tostring = function() error('x') end}))", "error object"),
            ("error()", "error object"),
            ("t.x", "index raised"),
            ("tostring(t)", "tostring raised"),
            ("coroutine.yield(1)", "yield"),
            ("coroutine.close(coroutine.running())", ""),
            ("collectgarbage() or 'ok'", None),
            ("bk.sleep(0.01)", None),
            ("debug.sethook(function() error('hooked') end, 'l')", None),
            ("(function() while true do end end)()", "ran too long"),
            ("string.rep('x', 100)", None),
            ("@@@ not lua", "syntax"),
        ]:
            r = c.evaluate(expression, ok=False)
            if expect is not None and expect != "":
                text = r.get("message") or r.get("result") or ""
                check(expect.lower() in text.lower() or (expect == "syntax" and "expected" in text),
                      "%s -> %r" % (expression, r))
        # Still a working session: locals, a step, the end.
        check(c.evaluate("n")["result"] in ("0", "1", "3", "6"), "still answers")
        for bad in ["error('c')", "coroutine.yield()", "while true do end", "nil + 1"]:
            c.request("setBreakpoints", {"source": {"path": path}, "breakpoints": [{"line": line_of(path, "HERE"), "condition": bad}]})
        c.request("setBreakpoints", {"source": {"path": path}, "breakpoints": []})
        c.request("continue", {"threadId": 1})
        check(c.finish(timeout=40) == 0, "the script ran to its end")
        check("done\t6" in c.output.get("stdout", ""), "output %r" % c.output)
    finally:
        c.close()


@case
def an_evaluation_cannot_run_the_loop_behind_the_stopped_scripts_back():
    # bk.sleep in an evaluation ran the loop: the script's other tasks and timers ran inside the
    # stop, under the evaluation's time limit, which killed a task that ran long.
    path = script("eval_loop.lua", """local ticks = 0
local t = bk.async(function()
  bk.sleep(0.01)
  ticks = ticks + 1
  return "done"
end)
local x = 1   -- STOP
local result = bk.await(t)
print("end", ticks, result)
""")
    c = adapter()
    try:
        c.start(path, breakpoints={path: [line_of(path, "STOP")]})
        c.stopped("breakpoint")
        r = c.evaluate("bk.sleep(0.1)", ok=False)
        text = r.get("message") or r.get("body", {}).get("result", "")
        check("cannot wait on the loop while stopped in the debugger" in text, "evaluate: %r" % r)
        check(c.evaluate("ticks")["result"] == "0", "the task did not run during the stop")
        c.request("continue", {"threadId": 1})
        check(c.finish() == 0, "exit")
        check("end\t1\tdone" in c.output.get("stdout", ""), "output: %r" % c.output)
    finally:
        c.close()


@case
def conditions_that_raise_yield_or_loop_stop_with_a_message_and_the_run_goes_on():
    path = script("badcond.lua", """local hits = 0
for i = 1, 4 do
  hits = hits + 1     -- HERE
end
print("hits", hits)
""")
    c = adapter()
    try:
        c.start(path, breakpoints={path: [{"line": line_of(path, "HERE"), "condition": "error({}) or coroutine.yield() or (function() while true do end end)()"}]})
        c.stopped("breakpoint")  # a broken condition stops, and says why
        check("condition failed" in c.output.get("console", ""), "console: %r" % c.output)
        c.request("setBreakpoints", {"source": {"path": path}, "breakpoints": []})
        c.request("continue", {"threadId": 1})
        check(c.finish(timeout=40) == 0, "exit")
    finally:
        c.close()


@case
def an_evaluation_that_catches_the_limit_error_still_ends_with_a_message():
    # The 5 s limit raises inside the evaluation; a pcall there catches it and loops again: the
    # limit must hold anyway (every instruction raises until the evaluation has ended).
    loop = "(function() while true do pcall(function() while true do end end) end end)()"
    path = script("pcallloop.lua", """local n = 0
for i = 1, 3 do
  n = n + i   -- HERE
end
print("done", n)
""")
    c = adapter()
    try:
        c.start(path, breakpoints={path: [line_of(path, "HERE")]})
        c.stopped("breakpoint")
        started = time.time()
        r = c.request("evaluate", {"expression": loop, "frameId": 1, "context": "repl"}, ok=False, timeout=20)
        check(not r["success"] and "ran too long" in r.get("message", ""), "evaluate: %r" % r)
        check(time.time() - started < 10, "ended in %.1f s" % (time.time() - started))
        check(c.evaluate("n")["result"] == "0", "the session still answers")
        # The same expression as a breakpoint's condition: it fails, and a failed condition stops.
        c.request("setBreakpoints", {"source": {"path": path}, "breakpoints": [{"line": line_of(path, "HERE"), "condition": loop}]})
        c.request("continue", {"threadId": 1})
        c.stopped("breakpoint", timeout=20)
        check("ran too long" in c.output.get("console", ""), "console: %r" % c.output)
        c.request("setBreakpoints", {"source": {"path": path}, "breakpoints": []})
        c.request("continue", {"threadId": 1})
        check(c.finish(timeout=40) == 0, "exit")
        check("done\t6" in c.output.get("stdout", ""), "output %r" % c.output)
    finally:
        c.close()


@case
def an_evaluation_past_its_limit_fails_even_when_it_catches_the_limit_in_a_coroutine():
    # Only the thread the limit hit raised at every instruction: code that caught the error from a
    # coroutine of its own went on, returned normally, or left a task of its own running forever.
    path = script("eval_catch.lua", """local n = 0
for i = 1, 3 do
  n = n + i   -- HERE
end
print("done", n)
""")
    c = adapter()
    try:
        c.start(path, breakpoints={path: [line_of(path, "HERE")]})
        c.stopped("breakpoint")
        caught = "select(2, pcall(coroutine.wrap(function() while true do end end))) == bk.cancelled and 'survived'"
        r = c.request("evaluate", {"expression": caught, "frameId": 1, "context": "repl"}, ok=False, timeout=20)
        check(not r["success"] and "ran too long" in r.get("message", ""), "evaluate: %r" % r)
        task = ("bk.async(function() pcall(coroutine.wrap(function() while true do end end)); bk.sleep(0); "
                "print('the task lives on'); while true do end end) and 'started'")
        r = c.request("evaluate", {"expression": task, "frameId": 1, "context": "repl"}, ok=False, timeout=20)
        check(not r["success"] and "ran too long" in r.get("message", ""), "evaluate: %r" % r)
        c.request("setBreakpoints", {"source": {"path": path}, "breakpoints": []})
        c.request("continue", {"threadId": 1})
        check(c.finish(timeout=30) == 0, "exit")
        check("lives on" not in c.output.get("stdout", "") and "done\t6" in c.output.get("stdout", ""), "%r" % c.output)
    finally:
        c.close()


@case
def an_evaluation_past_its_limit_skips_an_xpcall_message_handler_that_loops():
    # The limit's error is raised from the hook, and Lua runs the message handler there, with hooks
    # off: a handler that looped could never be stopped (the evaluation, and the run, hung).
    path = script("eval_handler.lua", """local n = 0
for i = 1, 3 do
  n = n + i   -- HERE
end
print("done", n)
""")
    looping = "xpcall(function() while true do end end, function(m) while true do end end)"
    for exceptions in (None, ["all"]):  # Lua's xpcall, guarded; the debugger's own, for `all`
        c = adapter()
        try:
            c.start(path, breakpoints={path: [line_of(path, "HERE")]}, exceptions=exceptions)
            c.stopped("breakpoint")
            r = c.request("evaluate", {"expression": looping, "frameId": 1, "context": "repl"}, ok=False, timeout=20)
            check(not r["success"] and "ran too long" in r.get("message", ""), "%r: evaluate %r" % (exceptions, r))
            check(c.evaluate("n")["result"] == "0", "the session still answers")
            c.request("setBreakpoints", {"source": {"path": path}, "breakpoints": []})
            c.request("continue", {"threadId": 1})
            check(c.finish(timeout=30) == 0, "exit")
        finally:
            c.close()


@case
def xpcall_under_a_debugger_nests_as_deep_and_a_c_handler_traces_as_lua_s_own():
    # The guarded xpcall (its handler skipped once an evaluation ran out) called Lua's through a
    # C frame of its own: xpcalls nested half as deep, and debug.traceback as a handler showed it.
    path = script("xpcall_depth.lua", """local depth = 0
local function nest() depth = depth + 1; return xpcall(nest, function(m) return m end) end
nest()
print("depth", depth)
print((select(2, xpcall(error, debug.traceback, "x"))))
""")
    stock = subprocess.run(["lua5.4", path], capture_output=True, text=True, timeout=30).stdout
    c = adapter()
    try:
        c.start(path)
        check(c.finish() == 0, "exit")
        check(c.output.get("stdout", "") == stock, "under the debugger %r, stock %r" % (c.output.get("stdout", ""), stock))
    finally:
        c.close()


@case
@needs_a_poke_in_a_lua_loop
def function_breakpoints_changed_while_finalizers_call_functions_are_read_safely():
    # Rebuilding the names' key strings allocates; a finalizer run then resumed a coroutine whose
    # call event rebuilt them again and freed the names the outer rebuild was reading (ASan sees it).
    path = script("gc_names.lua", """local hits = 0
function target() hits = hits + 1 return 1 end
local function fin()
  local co = coroutine.create(function() return target() end)
  coroutine.resume(co)
end
local t0 = os.clock()
while os.clock() - t0 < 1.5 do
  for i = 1, 50 do setmetatable({}, { __gc = fin }) end
  target()
end
print("done", hits > 0)
""")
    c = adapter()
    try:
        c.start(path, functions=["x%d" % i for i in range(40)])
        for k in range(40):
            names = ["%s%d%s" % ("ab"[k % 2], i, "z" * (k % 7)) for i in range(40)]
            c.request("setFunctionBreakpoints", {"breakpoints": [{"name": n} for n in names]})
            time.sleep(0.02)
        check(c.finish(timeout=60) == 0, "exit")
        check("done\ttrue" in c.output.get("stdout", ""), "%r" % c.output)
    finally:
        c.close()


@case
def a_task_an_evaluation_starts_and_its_limit_stops_ends_as_cancelled():
    # The limit's error failed the task, and the failure (reported at close) failed the run. The
    # loop runs in a coroutine of the task's own: the error the limit raises there is the one the
    # task ends with.
    path = script("eval_task.lua", """local n = 0
for i = 1, 2 do
  n = n + i   -- HERE
end
print("done", n)
""")
    c = adapter()
    try:
        c.start(path, breakpoints={path: [{"line": line_of(path, "HERE"),
                                           "condition": "i == 2 and bk.async(coroutine.wrap(function() while true do end end)) == nil"}]})
        # i == 1: false; i == 2: the limit stops the condition (a failed condition stops, and says
        # why) and the task it started.
        c.stopped("breakpoint", timeout=20)
        check("ran too long" in c.output.get("console", ""), "console: %r" % c.output)
        c.request("setBreakpoints", {"source": {"path": path}, "breakpoints": []})
        c.request("continue", {"threadId": 1})
        check(c.finish(timeout=40) == 0, "exit (stderr: %r)" % c.output.get("stderr", "")[-400:])
        check("done\t3" in c.output.get("stdout", ""), "output %r" % c.output)
        check("evaluation stopped" not in c.output.get("stderr", ""), "reported: %r" % c.output.get("stderr", "")[-400:])
    finally:
        c.close()


@case
def a_stop_on_a_deep_stack_comes_at_once_and_its_frames_are_paged():
    # Each frame read walks the stack from its top: a stop reads the top frames only, the rest as
    # stackTrace pages ask for them (a stack overflow's 200,000 frames took minutes before).
    path = script("deep.lua", """local function rec(d)
  if d == 0 then
    return 0   -- BOTTOM
  end
  return 1 + rec(d - 1)
end
print("deep", rec(5000))
""")
    c = adapter()
    try:
        c.start(path, breakpoints={path: [line_of(path, "BOTTOM")]})
        c.stopped("breakpoint", timeout=20)
        body = c.request("stackTrace", {"threadId": 1, "levels": 20})["body"]
        check(body["totalFrames"] == 5002, "total %r" % body["totalFrames"])
        check(len(body["stackFrames"]) == 20 and body["stackFrames"][0]["line"] == line_of(path, "BOTTOM"), "top %r" % body["stackFrames"][:2])
        body = c.request("stackTrace", {"threadId": 1, "startFrame": 4995})["body"]
        page = body["stackFrames"]
        check([f["name"] for f in page] == ["rec"] * 6 + ["main chunk"], "bottom page %r" % [f["name"] for f in page])
        check(page[-1]["line"] == line_of(path, "print"), "main chunk's line %r" % page[-1])
        # A frame below the ones a stop reads answers as any other: frame 4001 is rec(4000).
        frame = c.request("stackTrace", {"threadId": 1, "startFrame": 4000, "levels": 1})["body"]["stackFrames"][0]
        check(c.evaluate("d", frame=frame["id"])["result"] == "4000", "deep frame's local")
        all_frames = c.request("stackTrace", {"threadId": 1})["body"]
        check(len(all_frames["stackFrames"]) == 1000 and all_frames["totalFrames"] == 5002, "levels 0: one page")
        c.request("continue", {"threadId": 1})
        check(c.finish(timeout=40) == 0, "exit")
        check("deep\t5000" in c.output.get("stdout", ""), "output %r" % c.output)
    finally:
        c.close()
    # A stack overflow stops at once, caught (`all`) or not (`uncaught`).
    for filter_name, call in [("all", "print('caught', pcall(rec))"), ("uncaught", "rec()")]:
        path = script("overflow_%s.lua" % filter_name, "local function rec() return 1 + rec() end\n%s\n" % call)
        c = adapter()
        try:
            c.start(path, exceptions=[filter_name])
            started = time.time()
            stop = c.stopped("exception", timeout=30)
            check(time.time() - started < 10, "%s: stopped after %.1f s" % (filter_name, time.time() - started))
            check("stack overflow" in stop.get("text", ""), "text %r" % stop)
            body = c.request("stackTrace", {"threadId": 1, "levels": 5})["body"]
            check(body["totalFrames"] > 100000 and body["stackFrames"][0]["name"] == "rec", "%s: %r" % (filter_name, body))
            c.request("continue", {"threadId": 1})
            code = c.finish(timeout=40)
            check(code == (0 if filter_name == "all" else 1), "%s: exit %r" % (filter_name, code))
        finally:
            c.close()


@case
def with_breakpoints_set_a_stack_overflow_unwinds_quickly_and_deep_returns_get_their_lines_back():
    # With breakpoints, call events are on, and each return looks down the stack for a frame that
    # needs its lines back: looking all the way down 200,000 frames at each return never ended.
    path = script("overflow_bp.lua", """local function rec(n) return 1 + rec(n + 1) end
local function never()
  return 1   -- NEVER
end
print(pcall(rec, 1))
print("end")
""")
    c = adapter()
    try:
        c.start(path, breakpoints={path: [line_of(path, "NEVER")]}, exceptions=["all"])
        e = c.stopped("exception", timeout=30)
        c.request("continue", {"threadId": e["threadId"]})
        check(c.finish() == 0, "exit")
        check("stack overflow" in c.output.get("stdout", ""), "output: %r" % c.output)
    finally:
        c.close()
    # The look down stops after some levels: a frame that needs its lines back below more levels
    # than that still gets them when the returns reach it.
    path = script("deep_return.lua", """local function hasBreakpoint()
  local x = 1   -- FIRST
  return x
end
local function deep(n) if n == 0 then return hasBreakpoint() + 0 end return deep(n - 1) + 0 end
local function top()
  local v = deep(300)
  return v      -- SECOND
end
print(top())
""")
    c = adapter()
    try:
        c.start(path, breakpoints={path: [line_of(path, "FIRST"), line_of(path, "SECOND")]})
        c.stopped("breakpoint")
        c.request("continue", {"threadId": 1})
        c.stopped("breakpoint")
        check(c.frames()[0]["line"] == line_of(path, "SECOND"), "back in top(): %r" % c.frames()[0])
        c.request("continue", {"threadId": 1})
        check(c.finish() == 0, "exit")
    finally:
        c.close()


@case
def stack_trace_of_a_thread_that_is_not_the_stopped_one_is_empty():
    # Editors ask stackTrace for every thread when all stopped: main (waiting in bk.await) and
    # unknown ids must not answer with the stopped task's frames.
    path = script("taskstack.lua", """local t1 = bk.async(function()
  bk.sleep(0.01)
  local x = 1   -- TASK
  return x
end)
print("awaited", bk.await(t1))
""")
    c = adapter()
    try:
        c.start(path, breakpoints={path: [line_of(path, "TASK")]})
        task = c.stopped("breakpoint")["threadId"]
        check(task != 1, "stopped in the task")
        check(c.frames(task)[0]["line"] == line_of(path, "TASK"), "the task's frames")
        for other in (1, 999, -1):
            body = c.request("stackTrace", {"threadId": other})["body"]
            check(body["stackFrames"] == [] and body["totalFrames"] == 0, "thread %d: %r" % (other, body))
        c.request("continue", {"threadId": task})
        check(c.finish() == 0, "exit")
        check("awaited\t1" in c.output.get("stdout", ""), "output %r" % c.output)
    finally:
        c.close()


@case
def a_negative_start_frame_long_keys_and_braces_in_log_messages_are_handled():
    path = script("wording.lua", """local keys = {[string.rep("k", 100000)] = 1}
local function f(t) return #t end
for i = 1, 2 do
  local x = i   -- HERE
end
print("end")
""")
    c = adapter()
    try:
        # A log message's {expression} may hold braces of its own.
        c.start(path, breakpoints={path: [{"line": line_of(path, "HERE"), "logMessage": "len={f({1, 2})} n={#({1})} i={i}"}]})
        check(c.finish() == 0, "exit")
        check("len=2 n=1 i=1\nlen=2 n=1 i=2\n" in c.output.get("console", ""), "log: %r" % c.output.get("console"))
    finally:
        c.close()
    c = adapter()
    try:
        c.start(path, breakpoints={path: [line_of(path, "HERE")]})
        c.stopped("breakpoint")
        # startFrame below 0 counts from the top, as 0 does.
        body = c.request("stackTrace", {"threadId": 1, "startFrame": -5, "levels": 1})["body"]
        check(len(body["stackFrames"]) == 1 and body["stackFrames"][0]["line"] == line_of(path, "HERE"), "startFrame -5: %r" % body)
        # A long key's name is clipped as values are, and setVariable still finds it.
        ref = c.locals(c.frames()[0]["id"])["keys"]["variablesReference"]
        (key,) = c.variables(ref)
        check(len(key["name"]) < 1000 and key["name"].startswith('["kkk') and key["name"].endswith('..."]'), "name of %d chars" % len(key["name"]))
        c.request("setVariable", {"variablesReference": ref, "name": key["name"], "value": "7"})
        check(c.evaluate("keys[string.rep('k', 100000)]")["result"] == "7", "set through the clipped name")
        c.request("setBreakpoints", {"source": {"path": path}, "breakpoints": []})
        c.request("continue", {"threadId": 1})
        check(c.finish() == 0, "exit")
    finally:
        c.close()


@case
def long_texts_are_clipped_and_luas_own_slots_cannot_be_set():
    path = script("clipped.lua", """local named = setmetatable({}, { __name = string.rep("n", 100000) })
local s = 0
for i = 1.0, 3.0 do
  s = s + i                           -- LOOP
end
error(string.rep("e", 1000000))       -- RAISE
""")
    c = adapter()
    try:
        c.start(path, breakpoints={path: [line_of(path, "LOOP")]}, exceptions=["uncaught"])
        c.stopped("breakpoint")
        c.request("setBreakpoints", {"source": {"path": path}, "breakpoints": []})
        scope = c.scopes(c.frames()[0]["id"])["Locals"]["variablesReference"]
        names = {v["name"]: v for v in c.variables(scope)}
        check(len(names["named"]["value"]) < 300, "a 100,000-character __name: %d" % len(names["named"]["value"]))
        r = c.request("setVariable", {"variablesReference": scope, "name": "(for state)", "value": '"x"'}, ok=False)
        check(not r["success"], "Lua's own loop slot set: %r" % r)
        c.request("continue", {"threadId": 1})
        e = c.stopped("exception")
        info = c.request("exceptionInfo", {"threadId": e["threadId"]})["body"]
        check(len(e.get("text", "")) < 5000 and len(json.dumps(info)) < 20000, "a 1 MB error: %d, %d" % (len(e.get("text", "")), len(json.dumps(info))))
        c.request("continue", {"threadId": 1})
        check(c.finish() == 1, "exit")
    finally:
        c.close()


@case
def garbage_json_and_unknown_requests_get_answers_not_crashes():
    path = script("garbage.lua", "local x = 1\nprint('x', x)\n")
    c = adapter()
    try:
        c.initialize()
        c.send_raw(b"Content-Length: 9\r\n\r\n{not json")
        c.send_raw(b"Content-Length: 2\r\n\r\n[]")
        junk = b'{"type":"event","seq":"x"}'
        c.send_raw(b"Content-Length: %d\r\n\r\n" % len(junk) + junk)
        r = c.request("noSuchRequest", {}, ok=False)
        check(not r["success"], "unknown request fails politely")
        r = c.request("stackTrace", {"threadId": 1}, ok=False)
        check(not r["success"], "stackTrace while running fails politely")
        seq = c.send("launch", {"program": path})
        c.configure()
        check(c.finish() == 0, "still runs the script")
        check("important" in c.output, "garbage was reported: %r" % c.output)
    finally:
        c.close()


@case
def a_huge_content_length_closes_the_connection_without_reading_it():
    c = adapter()
    try:
        c.initialize()
        c.send_raw(b"Content-Length: 99999999999\r\n\r\n{")
        deadline = time.time() + 10
        while not c.closed and time.time() < deadline:
            time.sleep(0.05)
        check(c.closed, "connection closed")
        check(c.process.wait(timeout=10) == 0, "adapter ended")
    finally:
        c.close()


@case
def a_client_that_leaves_mid_stop_lets_the_script_finish_over_tcp():
    path = script("leave.lua", """local n = 0
for i = 1, 3 do
  n = n + i   -- HERE
end
print("finished", n)
""")
    leave_over_tcp_while_stopped(path, "HERE", 1, b"finished\t6")
    # The next client took the connection before the stopped thread woke: it still runs on.
    leave_over_tcp_while_stopped(path, "HERE", 1, b"finished\t6", next_client=True)


@case
def a_client_that_leaves_mid_stop_ends_a_launched_script():
    path = script("leave2.lua", "local n = 0\nwhile true do n = n + 1 end\n")
    c = adapter()
    try:
        c.start(path, breakpoints={path: [2]})
        c.stopped("breakpoint")
        c.process.stdin.close()
        check(c.process.wait(timeout=20) is not None, "adapter ended")
    finally:
        c.close()



@case
def a_launched_program_whose_name_starts_with_a_dash_is_a_file():
    # It used to reach bklua's command line as an option: "-e" ran its first argument as code.
    directory = os.path.join(scratch, "dash")
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "-e"), "w") as f:
        f.write("print('the file ran', ...)\n")
    c = adapter()
    try:
        c.start("-e", cwd=directory, args=["print('ran as code')"])
        check(c.finish() == 0, "exit status")
        out = c.output.get("stdout", "")
        check("the file ran\tprint('ran as code')\n" == out, "the file ran with its argument: %r" % out)
    finally:
        c.close()


@case
def dap_wait_does_not_count_the_wait_for_a_client_against_the_time_limit():
    path = script("waited.lua", "local s = 0\nfor i = 1, 1e5 do s = s + i end\nprint('done', s)\n")
    args = [BKLUA, "--dap-listen", "0", "--dap-wait", "--time-limit", "1", path]
    process = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    m = re.search(r"listening on [\d.]+:(\d+)", process.stderr.readline().decode())
    check(m is not None, "port announced")
    time.sleep(1.5)  # an editor slower than the whole time limit
    c = Client.connect(int(m.group(1)), process=process)
    try:
        c.initialize()
        c.request("attach", {})
        c.configure({})
        check(process.wait(timeout=20) == 0, "the script ran within its limit: %r" % process.stderr.read())
        check("done\t5000050000" in process.stdout.read().decode(), "its output")
    finally:
        c.close()


@case
def a_shadowed_local_has_a_name_of_its_own_and_set_variable_sets_that_one():
    # Both showed as `x`, and setting the outer one set the inner.
    path = script("shadowed.lua", """local x = 1
local y = 0
do
  local x = 2
  do
    local x = 3
    y = x                 -- BP
  end
  print("middle", x)
end
print("outer", x)
""")
    c = adapter()
    try:
        c.start(path, breakpoints={path: [line_of(path, "BP")]})
        stop = c.stopped("breakpoint")
        frame = c.frames(stop["threadId"])[0]["id"]
        ref = c.scopes(frame)["Locals"]["variablesReference"]
        shown = {v["name"]: v["value"] for v in c.variables(ref)}
        check(shown.get("x (shadowed 2)") == "1" and shown.get("x (shadowed)") == "2" and shown.get("x") == "3", "%r" % shown)
        c.request("setVariable", {"variablesReference": ref, "name": "x (shadowed 2)", "value": "10"})
        c.request("setVariable", {"variablesReference": ref, "name": "x (shadowed)", "value": "20"})
        check(c.evaluate("x", frame)["result"] == "3", "the inner x is as it was")
        c.request("continue", {"threadId": stop["threadId"]})
        check(c.finish() == 0, "exit")
        out = c.output.get("stdout", "")
        check("middle\t20" in out and "outer\t10" in out, "%r" % out)
    finally:
        c.close()


@case
def a_big_list_under_many_names_is_counted_once_a_stop():
    # Each of 20 locals aliasing one 3e6-element list counted it again, element by element (and its
    # other keys): the Locals of one stop took seconds (15 s for 5e6).
    path = script("big_aliases.lua", """local big = {}
for i = 1, 3000000 do big[i] = i end
local a1, a2, a3, a4, a5, a6, a7, a8, a9, a10 = big, big, big, big, big, big, big, big, big, big
local b1, b2, b3, b4, b5, b6, b7, b8, b9 = big, big, big, big, big, big, big, big, big
local stop = 1 -- BP
big[3000001] = 0
local stop2 = 2 -- BP2
""")
    c = adapter()
    try:
        c.start(path, breakpoints={path: [line_of(path, "BP"), line_of(path, "BP2")]})
        stop = c.stopped("breakpoint", timeout=30)
        started = time.time()
        local = c.locals(c.frames(stop["threadId"])[0]["id"])
        took = time.time() - started
        check(local["b9"].get("indexedVariables") == 3000000, "%r" % local["b9"])
        check(took < 4, "Locals took %.1f s" % took)
        c.request("continue", {"threadId": stop["threadId"]})
        stop = c.stopped("breakpoint", timeout=30)  # a new stop counts again: the list grew
        local = c.locals(c.frames(stop["threadId"])[0]["id"])
        check(local["a1"].get("indexedVariables") == 3000001, "%r" % local["a1"])
        c.request("continue", {"threadId": stop["threadId"]})
        check(c.finish() == 0, "exit")
    finally:
        c.close()


@case
def each_key_of_a_table_has_a_name_of_its_own_and_set_variable_writes_that_key():
    # 1 and "[1]", a newline and a backslash-n, long keys alike in their first 400 bytes: they showed
    # under one name, and setVariable by it wrote the other key.
    path = script("key_names.lua", """local t = {[1] = "int", ["[1]"] = "str", ["a\\n"] = "newline", ["a\\\\n"] = "backslash",
  [string.rep("a", 450) .. "X"] = "X", [string.rep("a", 450) .. "Y"] = "Y", plain = "p"}
local stop = 1                       -- BP
print(t[1], t["[1]"], t["a\\n"], t["a\\\\n"], t[string.rep("a", 450) .. "X"], t[string.rep("a", 450) .. "Y"], t.plain)
""")
    c = adapter()
    try:
        c.start(path, breakpoints={path: [line_of(path, "BP")]})
        stop = c.stopped("breakpoint")
        ref = c.locals(c.frames(stop["threadId"])[0]["id"])["t"]["variablesReference"]
        kids = {k["name"]: k["value"] for k in c.variables(ref)}
        check(len(kids) == 7, "a name each: %r" % sorted(n[:12] for n in kids))
        check(kids.get("plain") == '"p"' and kids.get("[1]") == '"int"' and kids.get('["[1]"]') == '"str"', "%r" % kids)
        check(kids.get('["a\\n"]') == '"newline"' and kids.get('["a\\\\n"]') == '"backslash"', "%r" % kids)
        for name, value in (("[1]", "1"), ('["[1]"]', "2"), ('["a\\n"]', "3"), ('["a\\\\n"]', "4"), ("plain", "7")):
            c.request("setVariable", {"variablesReference": ref, "name": name, "value": value})
        longs = sorted((n, v) for n, v in kids.items() if n.startswith('["aaaa'))
        check(len(longs) == 2, "%r" % longs)
        for i, (name, value) in enumerate(longs):
            c.request("setVariable", {"variablesReference": ref, "name": name, "value": str(5 + (value == '"Y"'))})
        c.request("continue", {"threadId": stop["threadId"]})
        check(c.finish() == 0, "exit")
        check("1\t2\t3\t4\t5\t6\t7" in c.output.get("stdout", ""), "%r" % c.output)
    finally:
        c.close()


@case
@needs_a_poke_in_a_lua_loop
def a_pause_sent_right_behind_continue_stops_the_run_that_follows():
    # Sent before continue's answer, the pause found the thread still stopped, was taken for "end
    # the running evaluation" (there was none) and dropped: the loop ran on.
    path = script("pause_behind.lua", """local x = 0
while true do
  x = x + 1                      -- BP
end
""")
    c = adapter()
    try:
        c.start(path, breakpoints={path: [line_of(path, "BP")]})
        for _ in range(3):
            stop = c.stopped()
            c.request("setBreakpoints", {"source": {"path": path}, "breakpoints": []})
            resumed = c.send("continue", {"threadId": stop["threadId"]})
            paused = c.send("pause", {"threadId": stop["threadId"]})
            c.response(resumed)
            c.response(paused)
            check(c.stopped(timeout=10)["reason"] == "pause", "a pause stop")
            c.request("setBreakpoints", {"source": {"path": path}, "breakpoints": [{"line": line_of(path, "BP")}]})
            c.request("continue", {"threadId": 1})
        c.request("disconnect", {})
    finally:
        c.close()


@case
@needs_a_poke_in_a_lua_loop
def a_pause_while_a_condition_or_log_point_runs_is_a_pause_stop():
    # The condition's evaluation took the pause (it ended "evaluation stopped ... or was paused"): a
    # breakpoint stop for a failed condition came instead, and after a log point no stop at all.
    path = script("pause_cond.lua", """function SLOW() local t = os.clock() while os.clock() - t < 0.05 do end return false end
local x = 0
while true do
  x = x + 1                      -- BP
end
""")
    for bp in ({"condition": "SLOW()"}, {"logMessage": "{SLOW()}"}):
        bp["line"] = line_of(path, "BP")
        c = adapter()
        try:
            c.start(path, breakpoints={path: [bp]})
            time.sleep(0.5)
            c.request("pause", {"threadId": 1})
            stop = c.stopped(timeout=10)
            check(stop["reason"] == "pause", "%r: %r" % (bp, stop))
            check("evaluation stopped" not in c.output.get("console", ""), "%r: %r" % (bp, c.output.get("console", "")[-300:]))
            c.request("disconnect", {})
        finally:
            c.close()


@case
def conditions_and_log_points_are_not_stops_so_the_time_limit_still_ends_an_endless_loop():
    # A condition that never holds (or a log point) on an endless loop's line: the loop spends nearly
    # all its time in the agent, whose time is the script's. It held the deadlines' clock, and the
    # loop ran forever.
    path = script("limit_condition.lua", """local x = 0
while true do
  x = x + 1                      -- BP
end
""")
    for bp in ({"condition": "x < 0"}, {"logMessage": "{x}"}):
        bp["line"] = line_of(path, "BP")
        process, port = listen(path, options=("--time-limit", "1"))
        c = Client.connect(port, process=process)
        try:
            c.initialize()
            c.request("attach", {})
            c.configure({path: [bp]})
            try:
                status = process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                raise AssertionError("%r: the time limit did not end the loop" % bp)
            check(status == 1 and "time limit exceeded" in process.stderr.read().decode(), "%r: %r" % (bp, status))
        finally:
            c.close()


def timed_to_a_fraction_of_a_second(function):
    function.thread_sanitizer_skip = "a bound under a second: ThreadSanitizer's own exit takes about one"
    return function


@case
@timed_to_a_fraction_of_a_second
def dap_listen_without_a_client_ends_when_the_script_does():
    # It waited a second for a client to leave, when none had come.
    path = script("no_client.lua", "io.stderr:write('ran\\n')\n")
    process, _ = listen(path, wait=False)
    check(process.stderr.readline() == b"ran\n", "ran")
    ended = time.time()
    check(process.wait(timeout=20) == 0, "exit")
    check(time.time() - ended < 0.7, "exited %.2f s after the script ended" % (time.time() - ended))


# ---------------------------------------------------------------------------------------------
# Worker states (bk.worker, the parallelMap pool): a stop there stops that worker only

def ticks(c):
    return c.output.get("stdout", "").count("tick")


def wait_for(what, condition, timeout=20):
    deadline = time.time() + timeout
    while not condition():
        if time.time() > deadline:
            raise AssertionError("timed out waiting for " + what)
        time.sleep(0.02)


def thread_named(c, thread_id):
    threads = c.request("threads")["body"]["threads"]
    return {t["id"]: t["name"] for t in threads}.get(thread_id), threads


WORKER_SCRIPT = """local ticks = 0
local timer = bk.scheduledTimerWithTimeInterval(0.02, function()
  ticks = ticks + 1
  print("tick", ticks)
end, true)
local w = bk.worker(function(n)
  local function add(a, b)
    return a + b             -- ADD-BODY
  end
  local total = 0
  for i = 1, n do
    total = total + i        -- WORKER-BP
    total = add(total, 0)    -- CALL-ADD
  end
  return total               -- WORKER-RETURN
end, 3)
print("result", w:result())
timer:invalidate()
"""


@case
def a_breakpoint_in_a_worker_stops_that_worker_only_while_the_main_loop_runs_on():
    path = script("worker_bp.lua", WORKER_SCRIPT)
    c = adapter()
    try:
        c.start(path, breakpoints={path: [line_of(path, "WORKER-BP")]})
        stop = c.stopped("breakpoint")
        worker = stop["threadId"]
        check(worker != 1 and stop["allThreadsStopped"] is False, "a worker's stop: %r" % stop)
        started = [e["body"] for e in c.seen if e["event"] == "thread"]
        check({"reason": "started", "threadId": worker} in started, "thread started event: %r" % started)
        name, threads = thread_named(c, worker)
        check(name == "worker 1" and any(t["id"] == 1 for t in threads), "threads: %r" % threads)
        frames = c.frames(worker)
        check(frames[0]["line"] == line_of(path, "WORKER-BP") and frames[0]["source"]["path"] == path,
              "the worker's frames: %r" % frames)
        check(len(frames) == 1, "only the worker's function: %r" % frames)
        top = frames[0]["id"]
        check(c.locals(top)["i"]["value"] == "1", "the worker's locals")
        check(c.evaluate("total + 100", frame=top)["result"] == "100", "evaluate in the worker's frame")
        # The main code's timer keeps printing while the worker is stopped.
        before = ticks(c)
        wait_for("ticks while the worker is stopped", lambda: ticks(c) >= before + 3)
        check(c.request("stackTrace", {"threadId": 1}, ok=False)["success"] is False,
              "the main thread runs: no stack")
        c.request("next", {"threadId": worker})
        stop = c.stopped("step")
        check(stop["threadId"] == worker and stop["allThreadsStopped"] is False, "stepped on the worker: %r" % stop)
        check(c.frames(worker)[0]["line"] == line_of(path, "CALL-ADD"), "next: the next line")
        c.request("stepIn", {"threadId": worker})
        c.stopped("step")
        frames = c.frames(worker)
        check(frames[0]["line"] == line_of(path, "ADD-BODY") and len(frames) == 2, "stepIn: into add: %r" % frames)
        c.request("stepOut", {"threadId": worker})
        c.stopped("step")
        frames = c.frames(worker)
        check(len(frames) == 1 and frames[0]["line"] != line_of(path, "ADD-BODY"), "stepOut: back in the worker's function: %r" % frames)
        c.request("setBreakpoints", {"source": {"path": path}, "breakpoints": []})
        r = c.request("continue", {"threadId": worker})
        check(r["body"]["allThreadsContinued"] is False, "continue: %r" % r)
        c.wait_event("thread", where=lambda b: b == {"reason": "exited", "threadId": worker})
        check(c.finish() == 0, "exit")
        check("result\t6" in c.output.get("stdout", ""), "the worker's result: %r" % c.output)
    finally:
        c.close()


@case
def a_breakpoint_in_a_parallel_map_block_stops_one_pool_thread_and_the_others_finish():
    path = script("pool_bp.lua", """bk.setWorkerCount(2)
local ticks = 0
local timer = bk.scheduledTimerWithTimeInterval(0.02, function()
  ticks = ticks + 1
  print("tick", ticks)
end, true)
local function heavy(x)
  local s = 0
  for k = 1, 20000 do s = s + k % 7 end
  if x == 60 then
    s = s + 0                -- POOL-BP
  end
  return x * 2
end
local list = {}
for i = 1, 64 do list[i] = i end
local w = bk.worker(function(list) return bk.parallelMap(list, heavy) end, list)
local results = w:result()
print("done", #results, results[7], results[64])
timer:invalidate()
""")
    c = adapter()
    try:
        c.start(path, breakpoints={path: [line_of(path, "POOL-BP")]})
        stop = c.stopped("breakpoint")
        thread = stop["threadId"]
        check(thread != 1 and stop["allThreadsStopped"] is False, "a pool state's stop: %r" % stop)
        name, threads = thread_named(c, thread)
        check(name is not None and name.startswith("worker pool "), "named pool thread: %r" % threads)
        check(any(t["name"] == "worker 1" for t in threads), "the worker that called parallelMap: %r" % threads)
        frames = c.frames(thread)
        check(frames[0]["line"] == line_of(path, "POOL-BP") and frames[0]["source"]["path"] == path, "pool frames: %r" % frames)
        check(c.evaluate("x", frame=frames[0]["id"])["result"] == "60", "the element")
        before = ticks(c)
        wait_for("ticks while a pool state is stopped", lambda: ticks(c) >= before + 3)
        c.request("continue", {"threadId": thread})
        check(c.finish() == 0, "exit")
        check("done\t64\t14\t128" in c.output.get("stdout", ""), "results: %r" % c.output)
    finally:
        c.close()


@case
@needs_a_poke_in_a_lua_loop
def pause_on_a_worker_thread_stops_its_endless_loop_only():
    path = script("worker_pause.lua", """local ch = bk.channel()
local w = bk.worker(function(ch)
  local stop = false
  ch:send("running")
  while not stop do end      -- SPIN
  return "left the loop"
end, ch)
print("worker", ch:receive())
local ticks = 0
local timer = bk.scheduledTimerWithTimeInterval(0.02, function()
  ticks = ticks + 1
  print("tick", ticks)
end, true)
print("result", w:result())
timer:invalidate()
""")
    c = adapter()
    try:
        c.start(path)
        wait_for("the worker running", lambda: "worker\trunning" in c.output.get("stdout", ""))
        worker = next(e["body"]["threadId"] for e in c.seen if e["event"] == "thread")
        c.request("pause", {"threadId": worker})
        stop = c.stopped("pause")
        check(stop["threadId"] == worker and stop["allThreadsStopped"] is False, "paused the worker: %r" % stop)
        frames = c.frames(worker)
        check(frames[0]["line"] == line_of(path, "SPIN"), "in the loop: %r" % frames)
        before = ticks(c)
        wait_for("ticks while the worker is paused", lambda: ticks(c) >= before + 3)
        c.evaluate("stop = true", frame=frames[0]["id"])
        c.request("continue", {"threadId": worker})
        check(c.finish() == 0, "exit")
        check("result\tleft the loop" in c.output.get("stdout", ""), "the loop ended: %r" % c.output)
    finally:
        c.close()


@case
def a_client_that_leaves_while_workers_are_stopped_lets_them_finish_over_tcp():
    path = script("worker_leave.lua", """local ws = {}
for k = 1, 3 do
  ws[k] = bk.worker(function(k)
    local v = k * 10         -- WORKER-STOP
    return v
  end, k)
end
local sum = 0
for k = 1, 3 do sum = sum + ws[k]:result() end
print("sum", sum)
""")
    leave_over_tcp_while_stopped(path, "WORKER-STOP", 2, b"sum\t60")


@case
def disconnect_and_terminate_while_a_worker_is_stopped_never_hang():
    path = script("worker_end.lua", WORKER_SCRIPT)
    # disconnect without terminating (attach): the worker is let go, the run ends normally
    process, port = listen(path)
    c = Client.connect(port, process=process)
    try:
        c.initialize()
        c.request("attach", {})
        c.configure({path: [line_of(path, "WORKER-BP")]})
        c.stopped("breakpoint")
        c.request("disconnect", {})
        out, _ = process.communicate(timeout=20)
        check(process.returncode == 0 and b"result\t6" in out, "disconnect let the worker finish: %r" % out)
    finally:
        if process.poll() is None:
            process.kill()
        c.close()
    # terminate over pipes: the adapter ends at once
    c = adapter()
    try:
        c.start(path, breakpoints={path: [line_of(path, "WORKER-BP")]})
        c.stopped("breakpoint")
        c.request("terminate", {})
        check(c.process.wait(timeout=20) is not None, "the adapter ended")
    finally:
        c.close()
    # the client's pipe closes while the worker is stopped
    c = adapter()
    try:
        c.start(path, breakpoints={path: [line_of(path, "WORKER-BP")]})
        c.stopped("breakpoint")
        c.process.stdin.close()
        check(c.process.wait(timeout=20) is not None, "the adapter ended")
    finally:
        c.close()


@case
def workers_started_before_a_late_client_and_workers_ending_keep_running():
    path = script("worker_late.lua", """local n = 0
for round = 1, 40 do
  local w = bk.worker(function(r)
    local x = r * 2          -- LATE-BP
    return x
  end, round)
  n = n + w:result()
  bk.sleep(0.02)
end
print("total", n)
""")
    process, port = listen(path, wait=False)
    c = Client.connect(port, process=process)
    try:
        c.initialize()
        c.request("attach", {})
        c.configure({path: [{"line": line_of(path, "LATE-BP"), "condition": "r == 30"}]})
        stop = c.stopped("breakpoint")
        check(stop["threadId"] != 1 and stop["allThreadsStopped"] is False, "stopped in a worker: %r" % stop)
        frames = c.frames(stop["threadId"])
        check(c.evaluate("r", frame=frames[0]["id"])["result"] == "30", "the condition held there")
        ended = [e["body"] for e in c.seen if e["event"] == "thread" and e["body"]["reason"] == "exited"]
        check(len(ended) > 0, "earlier workers ended with thread events: %r" % ended)
        c.request("continue", {"threadId": stop["threadId"]})
        check(c.finish() == 0, "exit")
        out = process.stdout.read().decode()
        check("total\t1640" in out, "every worker's result: %r" % out)
    finally:
        c.close()


@case
def exception_breakpoints_all_and_uncaught_stop_a_worker_and_a_pool_block_on_their_own_threads():
    path = script("worker_errors.lua", """local w = bk.worker(function()
  local t = nil
  return t.x             -- WORKER-ERR
end)
print("worker", pcall(w.result, w))
local list = {}
for i = 1, 64 do list[i] = i end
local ok, e = pcall(bk.worker(function(list)
  return bk.parallelMap(list, function(x)
    for k = 1, 20000 do x = x + 0 end
    if x == 60 then error("sixty") end   -- POOL-ERR
    return x
  end)
end, list).result)
print("pool", ok)
""")
    # Nothing in a worker's state catches what its function or a pool block raises: uncaught there.
    for filter in ("all", "uncaught"):
        c = adapter()
        try:
            c.start(path, exceptions=[filter])
            stop = c.stopped("exception")
            check(stop["threadId"] != 1 and stop["allThreadsStopped"] is False and "local 't'" in stop["text"],
                  "the worker's error: %r" % stop)
            check(c.frames(stop["threadId"])[0]["line"] == line_of(path, "WORKER-ERR"), "where the worker raised")
            c.request("continue", {"threadId": stop["threadId"]})
            while True:
                stop = c.stopped("exception")
                if "sixty" in stop["text"]:
                    break
                c.request("continue", {"threadId": stop["threadId"]})
            name, threads = thread_named(c, stop["threadId"])
            check(name is not None and name.startswith("worker pool"), "a pool thread: %r" % threads)
            check(c.frames(stop["threadId"])[0]["line"] == line_of(path, "POOL-ERR"), "where the block raised")
            c.request("setExceptionBreakpoints", {"filters": []})
            c.request("continue", {"threadId": stop["threadId"]})
            check(c.finish() == 0, "exit")
            check("pool\tfalse" in c.output.get("stdout", ""), "the pool's error reached the caller: %r" % c.output)
        finally:
            c.close()


@case
def exception_breakpoints_all_stop_on_errors_xpcall_catches_in_every_chunk_a_pool_state_runs():
    # A pool state attaches for each chunk: the guard on xpcall, installed at each attach, replaced
    # the debugger's own xpcall (for `all`) from the second chunk on, and those errors did not stop.
    path = script("pool_xpcall.lua", """local list = {}
for i = 1, 64 do list[i] = i end
local r = bk.parallelMap(list, function(x)
  for k = 1, 20000 do x = x + 0 end
  local ok = xpcall(error, function(m) return m end, "caught")   -- CAUGHT
  return x
end)
print("done", #r)
""")
    c = adapter()
    try:
        c.start(path, exceptions=["all"])
        stops = 0
        while stops < 64:
            stop = c.stopped("exception")
            check(c.frames(stop["threadId"])[0]["line"] == line_of(path, "CAUGHT"), "stop %d" % stops)
            stops += 1
            c.request("continue", {"threadId": stop["threadId"]})
        check(c.finish() == 0, "exit (more stops than elements?)")
        check("done\t64" in c.output.get("stdout", ""), "%r" % c.output)
    finally:
        c.close()


# ---------------------------------------------------------------------------------------------
# Large and odd values, pool threads, where breakpoints land

@case
def every_key_of_a_large_dictionary_is_reachable_by_pages_in_sorted_order_and_key_names_are_clipped():
    path = script("bigdict.lua", """local d = {}
for i = 1, 20000 do d["k" .. i] = i end
local huge = {}
for i = 1, 1000000 do huge["h" .. i] = i end
local odd = { ["a\\0b\\1c\\n"] = 1, [("x"):rep(1000)] = 2 }
local here = 1   -- HERE
""")
    c = adapter()
    try:
        c.start(path, breakpoints={path: [line_of(path, "HERE")]})
        c.stopped("breakpoint")
        local = c.locals(c.frames()[0]["id"])
        d = local["d"]
        check(d.get("namedVariables") == 20000, "every key counted: %r" % d)
        names = []
        for start in range(0, 20000, 1500):
            names += [v["name"] for v in c.variables(d["variablesReference"], filter="named", start=start, count=1500)]
        check(len(names) == 20000 and set(names) == {"k%d" % i for i in range(1, 20001)}, "every key once: %d" % len(names))
        check(names == sorted(names), "in sorted order: %r" % names[:20])
        page = c.variables(d["variablesReference"], filter="named", start=15000, count=3)
        check([v["name"] for v in page] == names[15000:15003], "a page is the same slice each time: %r" % page)
        # A page of a 1e6-key dictionary: sorted once (in C), then each page costs its own items.
        huge = local["huge"]
        check(huge.get("namedVariables") == 1000000, "huge: %r" % huge)
        started = time.time()
        first = c.variables(huge["variablesReference"], filter="named", start=0, count=100)
        took = time.time() - started
        last = c.variables(huge["variablesReference"], filter="named", start=999990, count=100)
        check(took < 5 and len(first) == 100 and first[0]["name"] == "h1" and len(last) == 10,
              "1e6 keys: %.2f s, %r ... %r" % (took, first[:2], last[-1:]))
        print("     (first page of a 1e6-key dictionary: %.2f s)" % took)
        # Key names that are not identifiers are quoted: control bytes escaped, long ones clipped.
        odd = {v["name"] for v in c.variables(local["odd"]["variablesReference"])}
        check('["a\\0b\\1c\\n"]' in odd, "control bytes shown escaped: %r" % odd)
        check(max(len(n) for n in odd) <= 407, "a long key clipped: %r" % [len(n) for n in odd])
        c.request("continue", {"threadId": 1})
        check(c.finish() == 0, "exit")
    finally:
        c.close()


def two_to_the_twenty_references_take_minutes_under_tsan(function):
    function.thread_sanitizer_skip = "2^20 variables references take ~40 s in a debug build, many minutes under TSan"
    return function


@case
@two_to_the_twenty_references_take_minutes_under_tsan
def a_stop_refuses_references_past_its_range_rather_than_naming_another_slots():
    path = script("manyrefs.lua", """local t, f = {}, print
for i = 1, 1048600 do t[i] = f end
local here = 1   -- HERE
local after = 2  -- AFTER
""")
    c = adapter()
    try:
        c.start(path, breakpoints={path: [line_of(path, "HERE")]})
        c.stopped("breakpoint")
        t = c.locals(c.frames()[0]["id"])["t"]
        refused, largest = None, 0
        for start in range(0, 1048600, 262144):
            r = c.request("variables", {"variablesReference": t["variablesReference"], "filter": "indexed",
                                        "start": start, "count": 262144}, ok=False)
            if not r["success"]:
                refused = r["message"]
                break
            largest = max([largest] + [v["variablesReference"] for v in r["body"]["variables"]])
        # Frame ids and references of the main state's agent lie below 2^20 (worker slot 1 above).
        check(refused is not None and "variables references" in refused, "refused past the range: %r" % refused)
        check(0 < largest < 1 << 20, "every reference in the main state's range: %d" % largest)
        check(any(v["name"] == "source" for v in c.variables(largest)), "the last one given still answers")
        c.request("next", {"threadId": 1})
        c.stopped("step")
        fresh = c.locals(c.frames()[0]["id"])["t"]["variablesReference"]
        check(0 < fresh < 1000, "a new stop numbers from 1 again: %d" % fresh)
        c.request("continue", {"threadId": 1})
        check(c.finish() == 0, "exit")
    finally:
        c.close()


@case
def a_pool_state_keeps_one_thread_for_every_chunk_it_runs():
    path = script("pool_threads.lua", """bk.setWorkerCount(2)
local data = {}
for i = 1, 64 do data[i] = i end
local r = bk.parallelMap(bk.array(data), function(x)
  local s = 0
  for i = 1, 2e5 do s = s + i end
  return x * 2    -- POOL-BP
end)
print("n", #r)
""")
    c = adapter()
    try:
        c.start(path, breakpoints={path: [line_of(path, "POOL-BP")]})
        pool_threads, listed = set(), True
        for n in range(64):
            stop = c.stopped("breakpoint")
            if stop["threadId"] != 1:
                pool_threads.add(stop["threadId"])
            if n == 40:  # between chunks, a pool state stays listed under its name
                name, threads = thread_named(c, stop["threadId"])
                listed = name is not None and len([t for t in threads if t["name"].startswith("worker pool ")]) == 2
            c.request("continue", {"threadId": stop["threadId"]})
        check(c.finish() == 0, "exit")
        check(len(pool_threads) <= 2, "two pool states, at most two threads: %r" % pool_threads)
        check(listed, "both pool threads listed")
        events = [(e["body"]["reason"], e["body"]["threadId"]) for e in c.seen if e["event"] == "thread"]
        started = [t for r, t in events if r == "started"]
        exited = [t for r, t in events if r == "exited"]
        check(pool_threads <= set(started) and len(started) == 2 and sorted(exited) == sorted(started),
              "one started event per pool state, one exited as it closes: %r" % events)
    finally:
        c.close()


@case
def breakpoints_on_lines_without_code_move_to_the_next_line_with_code_or_are_not_verified():
    module = script("placed_module.lua", """-- a module: loaded after the breakpoints are set
local M = {}

function M.twice(x)
  -- a comment in a function
  return x * 2          -- TWICE
end

return M
-- trailing comment
""")
    path = script("placed.lua", """-- comment line 1

local function f()
  -- inner comment
  return 1              -- RETURN
end
package.path = %r .. "/?.lua;" .. package.path
local M = require("placed_module")
print(f(), M.twice(2))  -- PRINT
""" % scratch)
    c = adapter()
    try:
        _, answers = c.start(path, breakpoints={
            path: [1, line_of(path, "inner comment"), 99999],
            module: [line_of(module, "a comment in"), line_of(module, "trailing comment"), line_of(module, "return M") + 5]})
        main = [(b["verified"], b.get("line"), "message" in b) for b in answers[path]["breakpoints"]]
        # Line 1 comes before `local function f() ... end`, whose closure is made on its `end` line.
        check(main == [(True, line_of(path, "RETURN") + 1, True), (True, line_of(path, "RETURN"), True),
                       (False, 99999, True)], "main file: %r" % answers[path])
        mod = [(b["verified"], b.get("line")) for b in answers[module]["breakpoints"]]
        check(mod[0] == (True, line_of(module, "TWICE")) and mod[1][0] is False and mod[2][0] is False,
              "module: %r" % answers[module])
        stops = []
        while True:
            try:
                stop = c.stopped("breakpoint", timeout=10)
            except DAPError:
                break
            stops.append(c.frames(stop["threadId"])[0]["line"])
            c.request("continue", {"threadId": stop["threadId"]})
        check(stops == [line_of(path, "RETURN") + 1, line_of(path, "RETURN"), line_of(module, "TWICE")],
              "stops where the answers said: %r" % stops)
    finally:
        c.close()



@case
def two_breakpoints_placed_on_one_line_are_answered_as_one_and_blank_conditions_are_none():
    # A log point on a comment line moved onto the line of a plain breakpoint's move: both were
    # answered verified, and the log point silently replaced the breakpoint (no stop). A blank
    # condition was evaluated, gave nothing, and never stopped.
    path = script("one_line.lua", """local n = 0
-- comment A
-- comment B
n = n + 1
print("n", n)
""")
    c = adapter()
    try:
        _, answers = c.start(path, breakpoints={path: [{"line": 2}, {"line": 3, "logMessage": "LOGGED"},
                                                     {"line": 4, "condition": "  "}]})
        got = [(b["verified"], b.get("message", "")) for b in answers[path]["breakpoints"]]
        # The one set on line 4 itself wins; the two moved there are refused, saying why.
        check([v for v, _ in got] == [False, False, True], "%r" % got)
        check(all("has another breakpoint" in m for _, m in got[:2]), "%r" % got)
        stop = c.stopped("breakpoint")
        check(c.frames(stop["threadId"])[0]["line"] == 4, "the blank condition is none: it stops")
        c.request("continue", {"threadId": stop["threadId"]})
        check(c.finish() == 0 and "LOGGED" not in c.output.get("console", ""), "%r" % c.output)
    finally:
        c.close()


@case
def a_script_starting_with_a_byte_order_mark_gets_its_breakpoints_placed():
    # Lua's loader skips a UTF-8 BOM (and then a '#' line); the placement's compile did not, failed,
    # and kept a breakpoint on a comment line where it never stops.
    path = script("bom.lua", "")
    with open(path, "wb") as f:
        f.write(b"\xef\xbb\xbf#!/usr/bin/env bklua\nlocal x = 1\n-- a comment\nx = x + 1  -- AFTER\nprint(x)\n")
    c = adapter()
    try:
        _, answers = c.start(path, breakpoints={path: [3]})
        (b,) = answers[path]["breakpoints"]
        check(b["verified"] and b.get("line") == 4 and "moved" in b.get("message", ""), "%r" % b)
        stop = c.stopped("breakpoint")
        check(c.frames(stop["threadId"])[0]["line"] == 4, "stopped at the line with code")
        c.request("continue", {"threadId": stop["threadId"]})
        check(c.finish() == 0 and "2" in c.output.get("stdout", ""), "%r" % c.output)
    finally:
        c.close()


@case
def a_breakpoint_in_a_file_that_does_not_compile_keeps_its_line_and_says_so():
    # A file being edited (a syntax error now): nothing to place by, and the answer says it.
    broken = script("broken.lua", "local x = \n-- comment\nprint(x\n")
    c = adapter()
    try:
        c.initialize()
        seq = c.send("launch", {"program": broken})
        r = c.request("setBreakpoints", {"source": {"path": broken}, "breakpoints": [{"line": 2}]})
        (b,) = r["body"]["breakpoints"]
        check(b["verified"] and b.get("line") == 2 and "cannot be read or compiled" in b.get("message", ""), "%r" % b)
        # A file bigger than any script (sparse, 2 GB) is not read at all: it was, up to 1 GB.
        huge = script("huge.lua", "")
        os.truncate(huge, 2 << 30)
        started = time.time()
        r = c.request("setBreakpoints", {"source": {"path": huge}, "breakpoints": [{"line": 2}]})
        check(time.time() - started < 3 and "cannot be read" in r["body"]["breakpoints"][0].get("message", ""),
              "%.1f s: %r" % (time.time() - started, r["body"]))
        os.remove(huge)
        # Lines ended by a lone \r (as Lua counts them): line 3 is no longer past the end.
        cr = script("cr_lines.lua", "")
        with open(cr, "wb") as f:
            f.write(b"local x = 1\rx = x + 1\rprint(x)\r")
        r = c.request("setBreakpoints", {"source": {"path": cr}, "breakpoints": [{"line": 3}]})
        check(r["body"]["breakpoints"][0]["verified"] and r["body"]["breakpoints"][0]["line"] == 3, "%r" % r["body"])
        c.request("configurationDone")
        c.response(seq)
        check(c.finish() != 0, "the script does not compile")
    finally:
        c.close()


if __name__ == "__main__":
    run_cases()
