"""bklua's interactive REPL, driven in a pseudo-terminal.

Run: python3 Tests/repl/test_bklua_repl.py [name-filter]   (BKLUA names the binary, LUA the stock lua5.4)
Prints one line per case and "N passed, N failed"; exits non-zero on a failure.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pty_session import Session  # noqa: E402

BKLUA = os.environ.get("BKLUA", ".build/debug/bklua")
LUA = os.environ.get("LUA", "lua5.4")
scratch = tempfile.mkdtemp(prefix="bklua-repl-")
cases = []


def case(function):
    cases.append(function)
    return function


def start(history=None, args=()):
    """A REPL with its own history file (or none)."""
    env = {"BKLUA_HISTORY": history if history is not None else ""}
    session = Session([BKLUA, *args], env=env)
    session.expect(r"^Lua 5\.4.*\nBlocksBridge \d+\.\d+\.\d+ .*\n> ")
    return session


def has(expression):
    """Whether `expression` is true in bklua (features other families bring)."""
    result = subprocess.run([BKLUA, "-e", "io.write(tostring(" + expression + "))"],
                            capture_output=True, text=True, timeout=30)
    return result.stdout == "true"


def answer(session, line, expected, shown=None):
    """Types `line` + Enter and waits for it (as `shown`, when Tab changes it), the output line
    `expected` (a regex; None for no output) and the next prompt."""
    session.send(line + "\r")
    session.expect(re.escape(shown or line) + r"\n" + ("" if expected is None else expected + r"\n") + r"> ")


@case
def typing_an_expression_prints_it():
    s = start()
    try:
        answer(s, "1 + 2", "3")
        answer(s, "=10 * 10", "100")
        answer(s, "'a', nil, true", r'"a"\tnil\ttrue')
        answer(s, "x = 5", None)  # a statement prints nothing
        answer(s, "x", "5")
    finally:
        s.close()


@case
def statements_print_nothing_and_errors_keep_the_repl():
    s = start()
    try:
        answer(s, "y = 7", None)
        s.send("error('boom')\r")
        s.expect(r"^stdin:1: boom\nstack traceback:")
        answer(s, "y", "7")
        s.send("x = = 1\r")
        s.expect(r"unexpected symbol near '='")
        answer(s, "y + 1", "8")
    finally:
        s.close()


@case
def tables_are_pretty_printed():
    s = start()
    try:
        answer(s, "{1, 2, x = {y = 's'}, [10] = true, ['a b'] = 1}",
               re.escape('{ 1, 2, [10] = true, ["a b"] = 1, x = { y = "s" } }'))
        answer(s, "{}", re.escape("{}"))
        # Cycles are shown as references to the table's first showing.
        answer(s, "t = {name = 'loop'}; t.self = t", None)
        answer(s, "t", re.escape('<1>{ name = "loop", self = <1> }'))
        # Past the depth limit, contents are elided.
        answer(s, "{{{{{{{{{1}}}}}}}}}", r"\{ \{ \{ \{ \{ \{ \{\.\.\.\} \} \} \} \} \} \}")
        # Long tables go on indented lines, keys sorted.
        s.send("{zeta = string.rep('z', 40), alpha = string.rep('a', 40), mid = {1, 2}}\r")
        s.expect(r'\n\{\n  alpha = "a{40}",\n  mid = \{ 1, 2 \},\n  zeta = "z{40}"\n\}\n> ')
        # Long lists stop after 200 elements.
        answer(s, "r = {}; for i = 1, 1000 do r[i] = i end", None)
        s.send("r\r")
        s.expect(r"\n  200,\n  \.\.\.\n\}\n> ")
        # Named metatables and __tostring.
        answer(s, "setmetatable({}, {__tostring = function() return 'custom!' end})", "custom!")
        answer(s, "setmetatable({1}, {__name = 'Point'})", re.escape("Point{ 1 }"))
        answer(s, "'tab\\tquote\"'", re.escape('"tab\\tquote\\""'))
        answer(s, "'\\255é\\0' .. 1", re.escape('"\\255é\\0001"'))  # bytes that are not UTF-8 escaped
        answer(s, "{['a b'] = 1, [1.5] = 2, [true] = 3}", re.escape('{ [1.5] = 2, ["a b"] = 1, [true] = 3 }'))
        if has("bk.null ~= nil"):
            answer(s, "bk.null", "null")
    finally:
        s.close()


@case
def objects_with_tostring_print_by_it():
    s = start()
    try:
        # A metatable's __tostring wins over its __name: the object is not expanded.
        answer(s, "setmetatable({1}, {__name = 'Point', __tostring = function() return 'P' end})", "P")
        answer(s, "{setmetatable({}, {__name = 'N', __tostring = load'return 1'})}", re.escape("{ 1 }"))
        if has("bk.async ~= nil"):
            answer(s, "bk.async(function() end)", re.escape("bk.Task(finished)"))
            answer(s, "bk.cancelled", "cancelled")
            answer(s, "bk.debounce(print, 1)", re.escape("bk.Debounced(idle)"))
            answer(s, "bk.throttle(print, 1)", re.escape("bk.Throttled(idle)"))
        if has("bk.dynamicDelegate ~= nil"):
            answer(s, "p = bk.protocol('P', {})", None)
            answer(s, "bk.dynamicDelegateForProtocol({}, p)", r"bk\.DynamicDelegate \(P\): 0x[0-9a-f]+")
        # Collections keep their expanded form.
        if has("bk.set ~= nil"):
            answer(s, "bk.set{1, 2}", re.escape("bk.set{ 1, 2 }"))
            answer(s, "bk.array{}", re.escape("bk.array{}"))
        # A __tostring that fails (or returns no string) fails the printing as tostring would.
        s.send("setmetatable({}, {__tostring = function() return {} end})\r")
        s.expect(r"\nerror calling 'print' \('__tostring' must return a string\)\n> ")
        s.send("setmetatable({}, {__tostring = function() error('nope', 0) end})\r")
        s.expect(r"\nerror calling 'print' \(nope\)\n> ")
        answer(s, "1 + 1", "2")
    finally:
        s.close()


@case
def results_are_coloured_on_a_terminal_unless_no_color():
    s = start()
    try:
        answer(s, "'s', 1, nil", r'"s"\t1\tnil')
        assert b'\x1b[32m"s"\x1b[0m\t\x1b[36m1\x1b[0m\t\x1b[35mnil\x1b[0m' in s.data, s.data
    finally:
        s.close()
    s = Session([BKLUA], env={"BKLUA_HISTORY": "", "NO_COLOR": "1"})
    try:
        s.expect(r"> ")
        answer(s, "'s', 1", r'"s"\t1')
        assert b'"s"\t1' in s.data, s.data
    finally:
        s.close()


@case
def a_multi_line_function_definition_works():
    s = start()
    try:
        s.send("function sq(x)\r")
        s.expect(r"^>> ")
        s.send("  return x * x\r")
        s.expect(r"^>> ")
        s.send("end\r")
        s.expect(r"^> ")
        answer(s, "sq(7)", "49")
        s.send("t = {\r")
        s.expect(r"^>> ")
        s.send("1, 2}\r")
        s.expect(r"^> ")
        answer(s, "#t", "2")
        s.send("for i = 1, 2 do\r")  # Ctrl-D on a `>>` line ends the chunk as it is
        s.expect(r"\n>> ")
        s.send("\x04")
        s.expect(r"\nstdin:1: 'end' expected near <eof>\n> ")
        answer(s, "#t", "2")
    finally:
        s.close()


@case
def history_survives_a_restart():
    path = os.path.join(scratch, "history")
    s = start(history=path)
    try:
        answer(s, "marker = 4242", None)
        answer(s, "=marker + 1", "4243")
        s.send("\x04")
        assert s.wait_exit() == 0
    finally:
        s.close()
    assert "marker = 4242" in open(path).read().replace("\\040", " ")
    s = start(history=path)
    try:
        s.send("\x1b[A")  # up arrow: the last line of the previous session, as typed
        s.expect(r"=marker \+ 1")
        time.sleep(0.2)
        s.send("\x1b[A")  # the one before (libedit redraws only what changed: run it to see)
        time.sleep(0.2)
        s.send("\r")
        s.expect(r"\n> ")
        answer(s, "marker", "4242")
    finally:
        s.close()


@case
def history_keeps_the_last_thousand_entries():
    path = os.path.join(scratch, "long-history")
    with open(path, "w") as f:
        f.write("_HiStOrY_V2_\n" + "".join("n\\040=\\040%d\n" % i for i in range(1500)))
    s = start(history=path)
    try:
        answer(s, "last = 1", None)
        s.send("\x04")
        assert s.wait_exit() == 0
    finally:
        s.close()
    entries = open(path).read().splitlines()[1:]
    assert len(entries) == 1000, len(entries)
    assert entries[-1] == "last\\040=\\0401", entries[-1]
    assert entries[0] == "n\\040=\\040501", entries[0]


@case
def an_empty_history_variable_disables_history():
    path = os.path.join(scratch, "unused-history")
    s = Session([BKLUA], env={"BKLUA_HISTORY": "", "HOME": scratch})
    try:
        s.expect(r"^> ")
        answer(s, "1", "1")
    finally:
        s.close()
    assert not os.path.exists(path)
    assert not os.path.exists(os.path.join(scratch, ".bklua_history"))


@case
def underscore_holds_the_last_result():
    s = start()
    try:
        answer(s, "6 * 7", "42")
        answer(s, "_ + 1", "43")
        answer(s, "x = 1", None)  # a statement returns nothing: _ stays
        answer(s, "_", "43")
        answer(s, "'a', 'b'", r'"a"\t"b"')
        answer(s, "_", '"a"')     # the first of several values
    finally:
        s.close()


def reference_entry(name):
    """The entry of bk.NAME in docs/reference.md: its heading up to the next heading."""
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../docs/reference.md")) as f:
        lines = f.read().split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith("### bk." + name + "("))
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("#"))
    return "\n".join(lines[start:end]).rstrip("\n")


@case
def help_prints_a_functions_reference_entry():
    s = start()
    try:
        for line, name in (("help(bk.map)", "map"), ("help(bk_select)", "select"),
                           (":help performBlock", "performBlock"), ("help('bk.any')", "any")):
            s.send(line + "\r")
            s.expect(re.escape(line) + r"\n" + re.escape(reference_entry(name)) + r"\n> ")
        answer(s, "help(print)", r"help: not a bk function \(function\)\n.*")
        answer(s, ":help nosuch", re.escape("help: no reference entry for bk.nosuch"))
    finally:
        s.close()


@case
def pasted_tabs_are_text_not_completion():
    s = start()
    try:
        # Bracketed paste: the terminal wraps pasted text in ESC[200~ ... ESC[201~. Unwrapped,
        # the Tab would complete `xp` to `xpcall`.
        s.send("\x1b[200~xp\t= 42\x1b[201~")
        time.sleep(0.3)
        s.send("\r")
        s.expect(r"\n> ")
        answer(s, "xp", "42")
        answer(s, "xpcall ~= 42", "true")
        # Keys that start with ESC but are no paste marker still work (Left arrow).
        s.send("y = 1\x1b[D2\r")  # moves before the 1: y = 21
        s.expect(r"\n> ")
        answer(s, "y", "21")
    finally:
        s.close()


@case
def method_completion_lists_each_method_once():
    s = start()
    try:
        answer(s, "f = function() end", None)
        answer(s, "Cls = {greet = f, bk_greet = f, bk_other = print, wave = f}", None)
        answer(s, "o = setmetatable({}, {__index = Cls})", None)
        s.send("o:\t\t")
        listing = s.expect(r"\n(o:bk_other +o:greet +o:wave) *\n")
        assert "bk_greet" not in listing.group(1), listing.group(1)
        s.send("\x15")  # Ctrl-U: drop the line
        s.send("o:bk_\t\t")  # asked for by name, the bk_ ones are listed
        s.expect(r"\no:bk_greet +o:bk_other *\n")
    finally:
        s.close()


@case
def tab_completes_globals_fields_and_methods():
    s = start()
    try:
        answer(s, "print(string.fo\t('%05d', 7))", "00007", shown="print(string.format('%05d', 7))")
        answer(s, "print(type(bk_insta\t))", "function", shown="print(type(bk_installGlobals))")
        if has("bk_map ~= nil"):
            s.send("f = bk_ma\t")
            if has("bk_match ~= nil"):
                s.send("\t")  # ambiguous: the second Tab lists the candidates
                s.expect(r"\nbk_map +bk_match")
            s.send("p\t\r")
            s.expect(r"f = bk_map\n> ")
            answer(s, "f == bk.map", "true")
        # Methods after ':' follow __index chains; fields after '.' in nested tables.
        answer(s, "Base = {greet = function(self) return 'hi' end}", None)
        answer(s, "obj = setmetatable({}, {__index = Base})", None)
        answer(s, "obj:gre\t()", '"hi"', shown="obj:greet()")
        answer(s, "cfg = {inner = {value = 3}}", None)
        answer(s, "cfg.inner.val\t", "3", shown="cfg.inner.value")
        if has("bk.scheduledTimerWithTimeInterval ~= nil"):
            # A bridged object's properties and methods.
            answer(s, "tm = bk.timerWithTimeInterval(1, print, false)", None)
            answer(s, "tm.isVal\t", "true", shown="tm.isValid")
            answer(s, "tm:inval\t()", None, shown="tm:invalidate()")
        answer(s, "s = 'x'", None)
        answer(s, "s:upp\t()", '"X"', shown="s:upper()")
    finally:
        s.close()


@case
def timers_fire_at_the_prompt_without_garbling_the_line():
    if not has("bk.scheduledTimerWithTimeInterval ~= nil"):
        print("  (skipped: no bk.scheduledTimerWithTimeInterval in this build)")
        return
    s = start()
    try:
        s.send("t = bk.scheduledTimerWithTimeInterval(0.5, function() print('tick') end, false)\r")
        s.expect(r"^> ")
        s.send("x = 12")
        s.expect(r"x = 12")
        s.expect(r"tick\n> x = 12", timeout=10)  # printed above the prompt, the line drawn again
        s.send(" + 1\r")
        s.expect(r"\n> ")
        answer(s, "x", "13")
        # Output without a newline still leaves the prompt on a row of its own; a timer that
        # prints nothing leaves the screen alone.
        answer(s, "bk.performBlock(function() io.write('partial') end, 0.3)", r"bk\.BlockHandle.*")
        s.send("y = 1")
        s.expect(r"partial\n> y = 1", timeout=10)
        s.send("\r")
        s.expect(r"\n> ")
        if has("bk.performBlockInBackground ~= nil"):
            # Printed by a block on another thread while the prompt waits.
            answer(s, "bk.performBlockInBackground(function() print('from afar') end, 0.4)", r"bk\.BlockHandle.*")
            s.send("z = 5")
            s.expect(r"from afar\n> z = 5", timeout=10)
            s.send("\r")
            s.expect(r"\n> ")
            answer(s, "z", "5")
        answer(s, "u = bk.scheduledTimerWithTimeInterval(0.1, function() end, true)", None)
        time.sleep(0.5)
        answer(s, "u:invalidate()", None)
        assert "> > " not in s.text, "a silent timer redrew the prompt:\n" + s.text
    finally:
        s.close()


@case
def ctrl_c_is_not_lost_to_a_hook_that_runs_at_every_instruction():
    # The bridge's hook hub reapplies its hook after each call of the script's hook; a Ctrl-C landing
    # in that instant had its stop hook replaced and was lost (about one in three with a count of 1).
    s = start()
    try:
        answer(s, "h = function() end; debug.sethook(h, '', 1)", None)
        for _ in range(8):
            s.send("while true do end\r")
            s.expect(r"while true do end\n")
            time.sleep(0.3)
            s.send("\x03")
            s.expect(r"interrupted!", timeout=5)
            s.expect(r"\n> ")
        answer(s, "debug.gethook() == h", "true")
    finally:
        s.close()


@case
def ctrl_c_interrupts_running_code_and_clears_the_line():
    s = start()
    try:
        s.send("while true do end\r")
        s.expect(r"while true do end\n")
        time.sleep(1)  # running by now (a second Ctrl-C would end bklua, as in lua5.4)
        s.send("\x03")
        s.expect(r"interrupted!")
        s.expect(r"\n> ")
        answer(s, "1 + 1", "2")
        # A hook of the user's (or a sandbox's limits) is still there afterwards.
        answer(s, "h = function() end; debug.sethook(h, '', 1000)", None)
        s.send("while true do end\r")
        s.expect(r"while true do end\n")
        time.sleep(1)
        s.send("\x03")
        s.expect(r"interrupted!")
        s.expect(r"\n> ")
        answer(s, "debug.gethook() == h", "true")
        answer(s, "debug.sethook()", None)
        s.send("junk")
        s.expect(r"junk")
        s.send("\x03")  # at the prompt: the line is dropped
        s.expect(r"\n> ")
        answer(s, "2 + 2", "4")
        if has("bk.run ~= nil and bk.scheduledTimerWithTimeInterval ~= nil"):
            # bk.run waits in Swift, out of the debug hook's reach: Ctrl-C stops the loop too.
            answer(s, "t = bk.scheduledTimerWithTimeInterval(0.2, function() end, true)", None)
            s.send("bk.run()\r")
            s.expect(r"bk\.run\(\)\n")
            time.sleep(1)
            s.send("\x03")
            s.expect(r"interrupted!")
            s.expect(r"\n> ")
            answer(s, "t:invalidate()", None)
        s.send("for i = 1, 2 do\r")  # a multi-line chunk is dropped too
        s.expect(r"\n>> ")
        s.send("\x03")
        s.expect(r"\n> ")
        answer(s, "3 + 3", "6")
    finally:
        s.close()


@case
def ctrl_c_that_lands_in_a_script_hook_still_interrupts():
    """The stop hook Ctrl-C sets while the user's hook runs survives the hook hub's own update."""
    s = start()
    try:
        # Nearly all the time is spent inside the hook, so that is where Ctrl-C lands.
        answer(s, "function slow() local t = os.clock() + .02 repeat until os.clock() > t end", None)
        answer(s, "debug.sethook(slow, 'l')", None)
        s.send("while true do end\r")
        s.expect(r"while true do end\n")
        time.sleep(1)
        s.send("\x03")
        s.expect(r"interrupted!", timeout=10)
        s.expect(r"\n> ")
        answer(s, "debug.sethook()", None)
        answer(s, "1 + 1", "2")
    finally:
        s.close()


@case
def await_at_the_prompt_and_ctrl_c_cancels_the_awaited_task():
    if not has("bk.await ~= nil"):
        print("  (skipped: no bk.await in this build)")
        return
    s = start()
    try:
        answer(s, "t = bk.async(function() bk.sleep(0.05) return 6 * 7 end)", None)
        answer(s, "bk.await(t)", "42")
        answer(s, "bk.sleep(0.01)", None)
        answer(s, "slow = bk.async(function() bk.sleep(100) end)", None)
        s.send("bk.await(slow)\r")
        s.expect(r"bk\.await\(slow\)\n")
        time.sleep(1)
        s.send("\x03")
        s.expect(r"interrupted")
        s.expect(r"\n> ")
        answer(s, "slow.isCancelled", "true")
        answer(s, "bk.pending()", "0")
    finally:
        s.close()


@case
def ctrl_c_is_reported_one_way_wherever_it_stops_the_command():
    """In Lua code (the hook), in bk.run() (the loop in Swift) and in bk.await (the tasks engine)."""
    if not has("bk.await ~= nil and bk.run ~= nil"):
        print("  (skipped: no bk.await in this build)")
        return
    s = start()
    try:
        answer(s, "t = bk.scheduledTimerWithTimeInterval(0.2, function() end, true)", None)
        answer(s, "slow = bk.async(function() bk.sleep(100) end)", None)
        for command in ["while true do end", "bk.run()", "bk.await(slow)"]:
            s.send(command + "\r")
            s.expect(re.escape(command) + r"\n")
            time.sleep(1)
            s.send("\x03")
            s.expect(r"^(\^C)?interrupted!\n> ")
        answer(s, "t:invalidate()", None)
        assert "stack traceback" not in s.text and "stdin:1: interrupted" not in s.text, s.text
    finally:
        s.close()


@case
def an_awaited_task_error_at_the_prompt_shows_no_engine_frames():
    if not has("bk.await ~= nil"):
        print("  (skipped: no bk.await in this build)")
        return
    s = start()
    try:
        answer(s, "t = bk.async(function() bk.sleep(0.01) error('server error') end)", None)
        s.send("x = bk.await(t)\r")
        s.expect(r"stdin:1: server error\nstack traceback:\n\t\[C\]: in function 'error'\n"
                 r"\tstdin:1: in function <stdin:1>\n\t\(awaited\)\n\tstdin:1: in main chunk\n")
        s.expect(r"\n> ")
        assert "bk/TaskEngine.lua" not in s.text, s.text
    finally:
        s.close()


@case
def ctrl_c_while_awaiting_a_worker_or_a_channel_cancels_the_wait():
    if not has("bk.worker ~= nil and bk.await ~= nil"):
        print("  (skipped: no bk.worker in this build)")
        return
    s = start()
    try:
        answer(s, "w = bk.worker(function() while true do end end)", None)
        s.send("bk.await(w)\r")
        s.expect(r"bk\.await\(w\)\n")
        time.sleep(1)
        s.send("\x03")
        s.expect(r"interrupted")
        s.expect(r"\n> ")
        answer(s, "w.isCancelled", "true")
        answer(s, "ch = bk.channel()", None)
        s.send("ch:receive()\r")
        s.expect(r"ch:receive\(\)\n")
        time.sleep(1)
        s.send("\x03")
        s.expect(r"interrupted")
        s.expect(r"\n> ")
        answer(s, "bk.pending()", "0")
    finally:
        s.close()


@case
def os_exit_in_a_block_at_the_prompt_keeps_its_output_and_status():
    if not has("bk.performBlock ~= nil"):
        print("  (skipped: no bk.performBlock in this build)")
        return
    s = start()
    try:
        answer(s, "bk.performBlock(function() print('bye'); os.exit(3) end, 0.3)", r"bk\.BlockHandle.*")
        s.send("abc")
        assert s.wait_exit() == 3, "exit status %r" % s.status
        s.expect(r"bye\n> abc\n$")
    finally:
        s.close()


@case
def ctrl_d_exits_zero():
    s = start()
    try:
        s.send("\x04")
        assert s.wait_exit() == 0, "exit status %r" % s.status
    finally:
        s.close()


@case
def non_terminal_stdin_keeps_lua_c_behaviour():
    # No prompt, no colours: stdin is run as a script, as lua.c does.
    source = "x = 6\nprint(x * 7)\nfunction f()\nreturn 1 end\nprint(f())\n"
    for args in ([], ["-"]):
        outputs = []
        for program in (BKLUA, LUA):
            result = subprocess.run([program, *args], input=source, capture_output=True, text=True,
                                    timeout=30)
            outputs.append((result.stdout, result.returncode))
        assert outputs[0] == outputs[1], "with %r: bklua %r, lua %r" % (args, outputs[0], outputs[1])
        assert "\x1b" not in outputs[0][0]
    # -i reads lines with lua.c's plain prompts and prints results with `print`.
    result = subprocess.run([BKLUA, "-i"], input="x = 6\nx * 7\n's', {}\n", capture_output=True,
                            text=True, timeout=30)
    assert re.fullmatch(r"Lua 5\.4.*\nBlocksBridge .*\n> > 42\n> s\ttable: 0x[0-9a-f]+\n> \n", result.stdout), result.stdout
    if has("bk.performBlock ~= nil"):
        # Blocks due run between lines.
        result = subprocess.run([BKLUA, "-i"], input="bk.performBlock(function() print('ran') end, 0)\nx = 1\n",
                                capture_output=True, text=True, timeout=30)
        assert re.fullmatch(r"Lua 5\.4.*\nBlocksBridge .*\n> bk\.BlockHandle.*\nran\n> > \n", result.stdout), result.stdout


def main():
    only = sys.argv[1] if len(sys.argv) > 1 else ""
    passed = failed = 0
    for function in cases:
        if only not in function.__name__:
            continue
        try:
            function()
            passed += 1
            print("ok   " + function.__name__)
        except Exception:
            failed += 1
            print("FAIL " + function.__name__)
            traceback.print_exc()
    shutil.rmtree(scratch, ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
