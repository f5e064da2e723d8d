"""What the DAP test files share: the cases they register, the scratch folder their scripts are
written to, markers found by line, and checks that fail a case with a message."""
import os
import shutil
import sys
import tempfile
import time
import traceback

scratch = os.path.realpath(tempfile.mkdtemp(prefix="bklua-dap-"))
cases = []


def case(function):
    cases.append(function)
    return function


def check(condition, what):
    if not condition:
        raise AssertionError(what)


def script(name, text):
    path = os.path.join(scratch, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def line_of(path, marker):
    with open(path) as f:
        for number, line in enumerate(f, 1):
            if marker in line:
                return number
    raise AssertionError("no line with %r" % marker)


def run_cases():
    """Runs the registered cases whose names contain argv[1] (all without it): one line each, then
    "N passed, N failed"; exits non-zero on a failure. Under ThreadSanitizer (BK_SANITIZER=thread)
    a case marked `thread_sanitizer_skip` is skipped, with its reason printed."""
    pattern = sys.argv[1] if len(sys.argv) > 1 else ""
    under_tsan = os.environ.get("BK_SANITIZER", "") == "thread"
    passed = failed = skipped = 0
    for function in cases:
        if pattern not in function.__name__:
            continue
        if under_tsan and getattr(function, "thread_sanitizer_skip", None):
            skipped += 1
            print("skip %s (ThreadSanitizer: %s)" % (function.__name__, function.thread_sanitizer_skip))
            continue
        start = time.time()
        try:
            function()
            passed += 1
            print("ok   %s (%.1f s)" % (function.__name__, time.time() - start))
        except Exception:
            failed += 1
            print("FAIL %s (%.1f s)" % (function.__name__, time.time() - start))
            traceback.print_exc(file=sys.stdout)
        sys.stdout.flush()
    shutil.rmtree(scratch, ignore_errors=True)
    if skipped:
        print("%d skipped under ThreadSanitizer" % skipped)
    print("%d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)
