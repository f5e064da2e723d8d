#!/usr/bin/env python3
"""Tests of scripts/check-boundary on small trees with planted calls, so the check cannot rot into
one that passes everything. Prints `N passed, N failed` (scripts/test's runner kind)."""
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHECK = os.path.join(ROOT, "scripts", "check-boundary")
HEADERS = "Sources/CLuaShim/include"


def run_on(files):
    """Runs the check on a tree holding the real shim headers and `files` (path -> text)."""
    tree = tempfile.mkdtemp()
    try:
        shutil.copytree(os.path.join(ROOT, HEADERS), os.path.join(tree, HEADERS))
        for path, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(tree, path)), exist_ok=True)
            with open(os.path.join(tree, path), "w", encoding="utf-8") as f:
                f.write(text)
        done = subprocess.run([sys.executable, CHECK, tree], capture_output=True, text=True)
        return done.returncode, done.stdout + done.stderr
    finally:
        shutil.rmtree(tree)


PLANTED = "func f(_ stack: LuaStack) {\n    lua_settop(stack.L, 0)\n}\n"
CASES = []


def case(function):
    CASES.append(function)
    return function


@case
def a_raw_lua_call_in_a_family_folder_fails():
    status, out = run_on({"Sources/BlocksBridge/Timers/Planted.swift": PLANTED})
    assert status == 1, out
    assert "Sources/BlocksBridge/Timers/Planted.swift:2: raw Lua C API call 'lua_settop'" in out, out


@case
def lauxlib_and_luaopen_calls_fail_in_bklua_benchmarks_and_examples():
    status, out = run_on({
        "Sources/bklua/A.swift": "let r = luaL_ref(L, idx)\n",
        "Benchmarks/bkbench/B.swift": "_ = luaopen_base(L)\n",
        "examples/host/C.swift": "x(); lua_pushnil(L)\n",
    })
    assert status == 1, out
    for expected in ("A.swift:1: raw Lua C API call 'luaL_ref'", "B.swift:1: raw Lua C API call 'luaopen_base'",
                     "C.swift:1: raw Lua C API call 'lua_pushnil'"):
        assert expected in out, out


@case
def shim_calls_on_a_state_fail_and_plain_shim_calls_pass():
    status, out = run_on({"Sources/BlocksBridge/Workers/P.swift":
                          "bk_gc_settle(stack.L)\nbk_pushcfunction(L, f)\n"
                          "let fd = bk_loop_pipe(&fds)\nlet r = bk_stop_requested(rt)\n"})
    assert status == 1, out
    assert "P.swift:1: raw Lua C API call 'bk_gc_settle'" in out, out
    assert "P.swift:2: raw Lua C API call 'bk_pushcfunction'" in out, out
    assert "bk_loop_pipe" not in out and "bk_stop_requested" not in out, out


@case
def the_owning_folder_may_call_anything():
    status, out = run_on({"Sources/BlocksBridge/Lua/LuaStack.swift": PLANTED + "bk_gc_settle(L)\n"})
    assert status == 0, out


@case
def comments_strings_and_types_are_not_calls():
    status, out = run_on({"Sources/BlocksBridge/Host/D.swift":
                          "// lua_settop(L, 0)\n/* luaL_ref(L, t) */\nlet s = \"lua_call(L)\"\n"
                          "let n = lua_Integer(3)\nlet m = \"\"\"\nlua_error(L)\n\"\"\"\n"
                          "stack.push(cFunction: bk_recordtraceback)\n"})
    assert status == 0, out


@case
def tests_are_not_checked():
    status, out = run_on({"Tests/BlocksBridgeTests/T.swift": PLANTED})
    assert status == 0, out


passed = failed = 0
for test in CASES:
    try:
        test()
        passed += 1
        print(f"ok  {test.__name__}")
    except AssertionError as error:
        failed += 1
        print(f"FAIL {test.__name__}\n{error}")
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
