"""bklua's debugger read by a second, independent DAP client: dap-python (PyPI `dap-python`, imported
as `dap`), a sans-I/O client whose own code frames the requests and whose pydantic models parse
every response and event bklua sends. Whole sessions over real pipes (`bklua --dap`, launch) and a
real TCP socket (`bklua --dap-listen 127.0.0.1:0 --dap-wait`, attach), on a script with a task and
an error a pcall catches. A message that does not parse, a field no model knows, a `seq` out of
order, or a request left unanswered fails the case.

Run: .build/dap-venv/bin/python Tests/dap/test_dap_python_client.py [name-filter]
(scripts/test makes the virtualenv, with the versions it pins; BKLUA names the binary.)
Prints one line per case and "N passed, N failed"; exits non-zero on a failure.
"""
import os
import re
import select
import socket
import subprocess
import tempfile
import time

from dap.base import ErrorResponse, Response
from dap.client import Client
from dap.handler import Handler
from dap import events, responses, types
from pydantic import BaseModel, TypeAdapter

from dap_cases import case, check, line_of, run_cases, scratch, script

BKLUA = os.path.abspath(os.environ.get("BKLUA", ".build/debug/bklua"))
TIMEOUT = float(os.environ.get("DAP_TIMEOUT", "20"))


# ---------------------------------------------------------------------------------------------
# dap-python 0.5.0's own mistakes, each against the spec (microsoft.github.io/debug-adapter-protocol),
# worked around here and nowhere else; everything else is the library's code as it ships.

# Its handler validates these responses (which the spec gives no body, or an optional one) with
# models that are whole `Response`s, against the body alone: every answer to them fails, whatever an
# adapter sends. They are validated against the whole message, as the models are written.
WHOLE_RESPONSES = {
    "attach": responses.Attached,
    "launch": responses.LaunchDone,
    "configurationDone": responses.ConfigurationDone,
    "setExceptionBreakpoints": responses.SetExceptionBreakpointsResponse,
    "next": responses.NextResponse,
    "stepIn": responses.StepInDone,
    "stepOut": responses.StepOutDone,
    "pause": responses.Paused,
    "disconnect": responses.Disconnected,
    "terminate": responses.Terminated,
}
BREAKPOINTS = TypeAdapter(list[types.Breakpoint])
# Stricter than the spec but not mended, as bklua always sends these: Breakpoint.id and
# OutputEvent.category are required (the spec: optional); StoppedEvent.reason is a closed list (the
# spec: any string).


class CheckedHandler(Handler):
    """The library's handler, which also hands every raw message to `session.arrived` (the sequence
    check, the unknown-field check) and mends the library's mistakes above."""

    def __init__(self, client, session):
        super().__init__(client)
        self.session = session

    def _parse_message(self, data):
        self.session.arrived(data)
        return super()._parse_message(data)

    def handle_response(self, response):
        if response.success and response.command in WHOLE_RESPONSES:
            request = self.client._pending_requests.pop(response.request_seq)
            check(request.command == response.command, "answers %r: %r" % (request.command, response))
            model = WHOLE_RESPONSES[response.command].model_validate(response.model_dump())
            if isinstance(response.body, dict) and "breakpoints" in response.body:
                BREAKPOINTS.validate_python(response.body["breakpoints"])
            return model
        if response.success and response.command == "setFunctionBreakpoints":
            # The library reads the answer's items as FunctionBreakpoint (all optional, so anything
            # passes); the spec's are Breakpoint.
            BREAKPOINTS.validate_python((response.body or {}).get("breakpoints"))
        if response.success and response.command == "exceptionInfo":
            # The spec's field is `exceptionId`; the library's model spells it `exceptionID`.
            body = dict(response.body or {})
            check("exceptionId" in body and "exceptionID" not in body, "exceptionInfo: %r" % body)
            body["exceptionID"] = body.pop("exceptionId")
            self.client._pending_requests.pop(response.request_seq)
            model = responses.ExceptionInfoResponse.model_validate(body)
            self.session.renamed[id(model)] = {"exceptionId": "exceptionID"}
            return model
        return super().handle_response(response)

    def handle_event(self, event):
        if event.body is None:
            # The spec's events without a body (initialized; terminated, whose body is optional): the
            # library validates None against their models and fails; they are read as empty.
            event = event.model_copy(update={"body": {}})
        if event.event == "stopped" and isinstance(event.body, dict) and "hitBreakpointIds" in event.body:
            # The spec's hitBreakpointIds are numbers (Breakpoint.id); the library's model wants strings.
            ids = event.body["hitBreakpointIds"]
            check(isinstance(ids, list) and all(type(i) is int for i in ids), "hitBreakpointIds: %r" % ids)
            return events.StoppedEvent.model_validate(dict(event.body, hitBreakpointIds=[str(i) for i in ids]))
        return super().handle_event(event)


def unknown_fields(model, raw, where, renamed=None):
    """Fields of `raw` that the model it was parsed into does not know (pydantic drops them)."""
    found = []
    if isinstance(model, BaseModel) and isinstance(raw, dict):
        fields = type(model).model_fields
        for key, value in raw.items():
            name = (renamed or {}).get(key, key)
            if name not in fields:
                found.append("%s.%s" % (where, key))
            else:
                found += unknown_fields(getattr(model, name), value, "%s.%s" % (where, key))
    elif isinstance(model, list) and isinstance(raw, list):
        for i, (m, r) in enumerate(zip(model, raw)):
            found += unknown_fields(m, r, "%s[%d]" % (where, i))
    return found


class Session:
    """One connection, driven by the library's Client: its request builders and framing out, its
    handler and models in. `reader`/`writer` move bytes, nothing else."""

    def __init__(self, fileno, reader, writer, process=None, sock=None, from1=True):
        self.fileno, self.reader, self.writer = fileno, reader, writer
        self.process, self.sock = process, sock
        # The constructor queues `initialize` (seq 1) with the library's own client capabilities.
        self.client = Client("bklua", client_id="bk-dap-python", client_name="dap-python tests",
                             lines_start_at1=from1, columns_start_at1=from1, path_format="path")
        self.client.handler = CheckedHandler(self.client, self)
        self.responses = {}      # request seq -> (raw, model)
        self.events = []         # (raw, model), in order
        self.unread = 0          # events[unread:] not yet taken by wait_event
        self.problems = []       # what the library or the checks found
        self.renamed = {}
        self.last_seq = 0
        self.initialize_answered = False
        self.current = None
        self.closed = False
        self.flush()

    @classmethod
    def launch_adapter(cls, from1=True):
        err = tempfile.TemporaryFile()
        process = subprocess.Popen([BKLUA, "--dap"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err)
        out = process.stdout.fileno()
        session = cls(out, lambda: os.read(out, 65536), process.stdin, process=process, from1=from1)
        session.stderr = err
        return session

    @classmethod
    def connect(cls, port, process, hold=0):
        """`hold`: seconds between connecting and sending `initialize`."""
        sock = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
        time.sleep(hold)
        writer = sock.makefile("wb", buffering=0)
        return cls(sock.fileno(), lambda: sock.recv(65536), writer, process=process, sock=sock)

    # --- the wire ---

    def flush(self):
        data = self.client.send()
        if data:
            self.writer.write(bytes(data))
            self.writer.flush()

    def arrived(self, raw):
        """Every message, before the library parses it: seq counts 1, 2, 3... (the spec: each
        message's seq is one more than the sender's previous one), and no event comes before the
        initialize response (the spec: "the debug adapter is not allowed to send any requests or
        events to the client until it has responded with an initialize response")."""
        self.current = raw
        if raw.get("type") == "event" and not self.initialize_answered:
            self.problems.append("an event before the initialize response: %r" % raw)
        if raw.get("type") == "response" and raw.get("command") == "initialize":
            self.initialize_answered = True
        if raw.get("seq") != self.last_seq + 1:
            self.problems.append("seq %r after %d: %r" % (raw.get("seq"), self.last_seq, raw))
        if isinstance(raw.get("seq"), int):
            self.last_seq = raw["seq"]

    def pump(self, deadline):
        """Reads what has arrived (waiting until `deadline`) and parses it with the library."""
        left = deadline - time.time()
        if self.closed or left <= 0:
            return False
        ready, _, _ = select.select([self.fileno], [], [], left)
        if not ready:
            return False
        data = self.reader()
        if not data:
            self.closed = True
        parsed = self.client.receive(data)
        while True:
            try:
                model = next(parsed)
            except StopIteration:
                break
            except Exception as error:  # a validation error (or the library's own assert)
                self.problems.append("%r did not parse: %s" % (self.current, error))
                parsed = self.client.receive(b"")  # the handler consumed that message; go on
                continue
            self.record(self.current, model)
        return True

    def record(self, raw, model):
        body = raw if isinstance(model, Response) else raw.get("body", {})
        extra = unknown_fields(model, body if body is not None else {}, raw.get("command") or raw.get("event"),
                               self.renamed.get(id(model)))
        if extra:
            self.problems.append("fields no model knows: %s in %r" % (", ".join(extra), raw))
        if raw.get("type") == "response":
            self.responses[raw["request_seq"]] = (raw, model)
        else:
            self.events.append((raw, model))

    # --- requests and events ---

    def answer(self, seq, ok=True):
        """The library's model of the answer to request `seq` (after sending what is queued)."""
        self.flush()
        deadline = time.time() + TIMEOUT
        while seq not in self.responses:
            if not self.pump(deadline) and (self.closed or time.time() >= deadline):
                raise AssertionError("no answer to request %d (%s)" % (seq, self.problems))
        raw, model = self.responses.pop(seq)
        if ok:
            check(raw["success"] and not isinstance(model, ErrorResponse), "failed: %r" % raw)
        return model

    def wait_event(self, name, where=None):
        deadline = time.time() + TIMEOUT
        while True:
            while self.unread < len(self.events):
                raw, model = self.events[self.unread]
                self.unread += 1
                if raw["event"] == name and (where is None or where(model)):
                    return model
            if not self.pump(deadline) and (self.closed or time.time() >= deadline):
                raise AssertionError("no %r event (seen %r; %s)" % (
                    name, [r["event"] for r, _ in self.events][-12:], self.problems))

    def stopped(self, reason):
        return self.wait_event("stopped", lambda e: e.reason == reason)

    def output(self, category):
        return "".join(m.output for r, m in self.events if r["event"] == "output" and m.category == category)

    def close(self):
        if self.sock is not None:
            self.sock.close()
        if self.process is None:
            return
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for f in (self.process.stdin, self.process.stdout):
            if f is not None:
                f.close()

    def clean(self):
        """Nothing the library or the checks found, and every request answered."""
        check(not self.problems, "\n  ".join(["what dap-python's reading found:"] + self.problems))
        check(not self.client._pending_requests, "unanswered: %r" % self.client._pending_requests)


# ---------------------------------------------------------------------------------------------
# The script: a task whose loop calls a function through pcall (it raises once) and another directly.

TASKS = """local results = {}
local function square(x)
  local y = x * x                          -- SQUARE
  return y                                 -- RETURN
end
local function risky(n)
  if n == 2 then error("bad " .. n) end    -- RISKY
  return n
end
local task = bk.async(function()
  for i = 1, 3 do
    local ok, err = pcall(risky, i)        -- PCALL
    results[#results + 1] = ok and square(i) or "caught"   -- USE
    bk.sleep(0.01)                         -- SLEEP
  end
  return #results
end)
local count = bk.await(task)
print("results", count, table.concat(results, ","))
"""


def inspect_the_stop(s, path, thread, frame_name):
    """threads, stackTrace, scopes, variables and evaluate at the conditional breakpoint (i == 3)."""
    threads = s.answer(s.client.threads())
    check(isinstance(threads, responses.ThreadsResponse), "threads: %r" % threads)
    check(any(t.id == thread and t.name.startswith("task") for t in threads.threads), "the task: %r" % threads)
    trace = s.answer(s.client.stack_trace(thread))
    check(isinstance(trace, responses.StackTraceResponse), "stackTrace: %r" % trace)
    top = trace.stackFrames[0]
    check(top.line == line_of(path, "USE") and top.source.path == path, "the breakpoint's line: %r" % top)
    check(frame_name(top.name), "the task's function: %r" % top.name)
    scopes = s.answer(s.client.scopes(top.id))
    check(isinstance(scopes, responses.ScopesResponse), "scopes: %r" % scopes)
    names = {scope.name: scope for scope in scopes.scopes}
    check({"Locals", "Upvalues", "Globals"} <= set(names), "scopes: %r" % list(names))
    local = s.answer(s.client.variables(names["Locals"].variablesReference))
    check(isinstance(local, responses.VariablesResponse), "variables: %r" % local)
    values = {v.name: v.value for v in local.variables}
    check(values.get("i") == "3" and values.get("ok") == "true", "the condition i == 3 held: %r" % values)
    ups = s.answer(s.client.variables(names["Upvalues"].variablesReference))
    results = [v for v in ups.variables if v.name == "results"]
    check(results and results[0].variablesReference > 0, "results, expandable: %r" % ups)
    items = s.answer(s.client.variables(results[0].variablesReference))
    check([v.value for v in items.variables] == ["1", '"caught"'], "results so far: %r" % items)
    sources = s.answer(s.client.loaded_sources())
    check(isinstance(sources, responses.LoadedSourcesResponse) and path in [x.path for x in sources.sources],
          "loadedSources: %r" % sources)
    value = s.answer(s.client.evaluate("i * 10", frame_id=top.id, context="watch"))
    check(isinstance(value, responses.EvaluateResponse) and value.result == "30", "evaluate: %r" % value)
    table = s.answer(s.client.evaluate("results", frame_id=top.id, context="hover"))
    check(table.variablesReference > 0, "a table evaluates expandable: %r" % table)
    wrong = s.answer(s.client.evaluate("i +", frame_id=top.id, context="repl"), ok=False)
    check(isinstance(wrong, ErrorResponse) and wrong.body.error is not None, "a syntax error: an ErrorResponse: %r" % wrong)
    return top


def step(s, command, thread):
    s.answer(getattr(s.client, command)(thread))
    stop = s.stopped("step")
    check(stop.threadId == thread, "%s stays on the task: %r" % (command, stop))
    return s.answer(s.client.stack_trace(thread, levels=1)).stackFrames[0]


def steps(s, path, thread):
    """stepIn into square, next, stepOut back to the task's function, next to bk.sleep's line."""
    top = step(s, "step_in", thread)
    check(top.name == "square" and top.line == line_of(path, "SQUARE"), "stepIn: %r" % top)
    top = step(s, "next", thread)
    check(top.line == line_of(path, "RETURN"), "next: %r" % top)
    top = step(s, "step_out", thread)
    check(top.line in (line_of(path, "USE"), line_of(path, "SLEEP")), "stepOut: %r" % top)
    if top.line == line_of(path, "USE"):
        top = step(s, "next", thread)
    check(top.line == line_of(path, "SLEEP"), "next to bk.sleep: %r" % top)


@case
def launch_over_pipes_a_whole_session_every_message_parses():
    path = script("tasks_pipes.lua", TASKS)
    s = Session.launch_adapter()
    try:
        caps = s.answer(1)  # the library's initialize
        check(isinstance(caps, responses.Initialized) and caps.supportsConditionalBreakpoints, "capabilities: %r" % caps)
        check([f.filter for f in caps.exceptionBreakpointFilters or []] == ["uncaught", "all"], "filters: %r" % caps)
        s.wait_event("initialized")
        # The library's launch() sends only noDebug: bklua's arguments go through its send_request.
        launch = s.client.send_request("launch", {"program": path, "stopOnEntry": False})
        bps = s.answer(s.client.set_breakpoints({"path": path}, [{"line": line_of(path, "USE"), "condition": "i == 3"}]))
        check(isinstance(bps, responses.SetBreakpointsResponse) and bps.breakpoints[0].verified, "verified: %r" % bps)
        s.answer(s.client.set_exception_breakpoints(["all"], None, None))
        s.answer(s.client.configuration_done())
        s.answer(launch)

        # The error the pcall catches stops first ("all"), in the task.
        stop = s.stopped("exception")
        thread = stop.threadId
        check(thread != 1 and "bad 2" in (stop.text or ""), "in the task, at the error: %r" % stop)
        check(any(r["event"] == "thread" and m.reason == "started" and m.threadId == thread for r, m in s.events),
              "a thread event for the task")
        info = s.answer(s.client.exception_info(thread))
        check(info.breakMode == "always" and "bad 2" in (info.description or ""), "exceptionInfo: %r" % info)
        frames = s.answer(s.client.stack_trace(thread)).stackFrames
        # The spec: "If attribute `source` is missing or doesn't exist, `column` is 0" (pcall's frame).
        check(any(f.name == "pcall" for f in frames), "pcall's frame: %r" % frames)
        check(all((f.column == 0) == (f.source is None) for f in frames), "columns: %r" % frames)
        top = frames[0]
        # (a function pcall calls has no name Lua can find: "function <file:line>")
        check(top.line == line_of(path, "RISKY") and top.source.path == path, "where it was raised: %r" % top)
        s.answer(s.client.set_exception_breakpoints([], None, None))
        s.answer(s.client.continue_(thread))

        # The conditional breakpoint: not at i == 1, at i == 3.
        stop = s.stopped("breakpoint")
        check(stop.threadId == thread and stop.hitBreakpointIds == [str(bps.breakpoints[0].id)], "hit: %r" % stop)
        inspect_the_stop(s, path, thread, lambda name: name not in ("main chunk", "risky", "square"))
        steps(s, path, thread)
        s.answer(s.client.set_breakpoints({"path": path}, []))
        s.answer(s.client.continue_(thread))
        exited = s.wait_event("exited")
        check(exited.exitCode == 0, "exit status: %r" % exited)
        s.wait_event("terminated")
        check(any(r["event"] == "thread" and m.reason == "exited" and m.threadId == thread for r, m in s.events),
              "the task's thread exited")
        check("results\t3\t1,caught,9\n" in s.output("stdout"), "stdout as output events: %r" % s.output("stdout"))
        s.answer(s.client.disconnect())
        s.clean()
    finally:
        s.close()


@case
def attach_over_tcp_with_dap_listen_and_dap_wait_every_message_parses():
    path = script("tasks_tcp.lua", TASKS)
    process, port = listen(path, "--dap-wait")
    s = Session.connect(port, process)
    try:
        check(isinstance(s.answer(1), responses.Initialized), "initialize")
        s.wait_event("initialized")
        s.answer(s.client.attach())
        s.answer(s.client.set_breakpoints({"path": path}, [{"line": line_of(path, "USE"), "condition": "i == 3"}]))
        # "uncaught": the error the pcall catches does not stop.
        s.answer(s.client.set_exception_breakpoints(["uncaught"], None, None))
        s.answer(s.client.configuration_done())
        stop = s.stopped("breakpoint")
        thread = stop.threadId
        check(thread != 1, "in the task: %r" % stop)
        check(not any(r["event"] == "stopped" and m.reason == "exception" for r, m in s.events), "no stop at the caught error")
        inspect_the_stop(s, path, thread, lambda name: name not in ("main chunk", "risky", "square"))
        steps(s, path, thread)
        s.answer(s.client.set_breakpoints({"path": path}, []))
        s.answer(s.client.continue_(thread))
        check(s.wait_event("exited").exitCode == 0, "exit status 0")
        s.wait_event("terminated")
        s.answer(s.client.disconnect())
        out, _ = process.communicate(timeout=TIMEOUT)
        check(process.returncode == 0 and b"results\t3\t1,caught,9\n" in out, "the script's own stdout: %r" % out)
        s.clean()
    finally:
        if process.poll() is None:
            process.kill()
        s.close()


@case
def log_points_output_and_pause_in_an_endless_loop_every_message_parses():
    path = script("loop.lua", """local n, running = 0, true
while running do
  n = n + 1                                -- LOOP
  if n == 3 then io.write("three\\n") end
end
print("left the loop", n >= 3)
""")
    s = Session.launch_adapter()
    try:
        s.answer(1)
        s.wait_event("initialized")
        launch = s.client.send_request("launch", {"program": path})
        s.answer(s.client.set_breakpoints({"path": path}, [
            {"line": line_of(path, "LOOP"), "logMessage": "n is {n}", "hitCondition": "2"}]))
        s.answer(s.client.configuration_done())
        s.answer(launch)
        logged = s.wait_event("output", lambda e: "n is" in e.output)
        check(isinstance(logged, events.OutputEvent) and logged.output == "n is 1\n", "a log point: %r" % logged)
        s.wait_event("output", lambda e: e.category == "stdout" and "three" in e.output)
        s.answer(s.client.set_breakpoints({"path": path}, []))
        s.answer(s.client.pause(1))
        stop = s.stopped("pause")
        check(stop.threadId == 1, "paused: %r" % stop)
        s.answer(s.client.evaluate("running = false", frame_id=s.answer(s.client.stack_trace(1)).stackFrames[0].id,
                                   context="repl"))
        s.answer(s.client.continue_(1))
        check(s.wait_event("exited").exitCode == 0, "exit status 0")
        s.wait_event("terminated")
        check("left the loop\ttrue" in s.output("stdout"), "stdout: %r" % s.output("stdout"))
        s.answer(s.client.disconnect())
        s.clean()
    finally:
        s.close()


@case
def a_client_counting_lines_and_columns_from_0_gets_them_from_0():
    # initialize's linesStartAt1/columnsStartAt1 false: the client's line n is the file's line n + 1.
    path = script("from0.lua", """local a = 1
local b = a + 1                            -- SECOND
local c = b + 1                            -- THIRD
print("sum", a + b + c)
""")
    third = line_of(path, "THIRD")
    s = Session.launch_adapter(from1=False)
    try:
        s.answer(1)
        s.wait_event("initialized")
        launch = s.client.send_request("launch", {"program": path})
        bps = s.answer(s.client.set_breakpoints({"path": path}, [{"line": third - 1}]))
        check(bps.breakpoints[0].verified and bps.breakpoints[0].line == third - 1, "in the client's numbers: %r" % bps)
        s.answer(s.client.configuration_done())
        s.answer(launch)
        s.stopped("breakpoint")
        top = s.answer(s.client.stack_trace(1)).stackFrames[0]
        check((top.line, top.column) == (third - 1, 0), "the third line, counted from 0: %r" % top)
        check(s.answer(s.client.evaluate("b", frame_id=top.id)).result == "2", "b is set, c is not yet")
        s.answer(s.client.continue_(1))
        check(s.wait_event("exited").exitCode == 0, "exit status 0")
        s.answer(s.client.disconnect())
        s.clean()
    finally:
        s.close()


def listen(path, *flags):
    process = subprocess.Popen([BKLUA, "--dap-listen", "127.0.0.1:0"] + list(flags) + [path],
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    line = process.stderr.readline().decode()
    m = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
    if not m:
        process.kill()
        raise AssertionError("no port announced: %r" % line)
    return process, int(m.group(1))


@case
def seq_counts_1_2_3_from_the_initialize_response_on_each_connection_while_events_race_answers():
    # Tasks start and end on the script's thread (thread events) while the reader thread answers
    # `threads`: each message's seq must still be one more than the one before it, on the wire;
    # and a second client's first message is seq 1 again.
    done = os.path.join(scratch, "busy.done")
    path = script("busy.lua", """local n = 0
while not io.open(%r) do
  bk.await(bk.async(function() n = n + 1 end))
end
print("tasks", n > 0)
""" % done)
    process, port = listen(path)
    try:
        found = []
        for client in ("first", "second"):
            s = Session.connect(port, None, hold=0.3)  # the script's tasks come and go meanwhile
            try:
                s.answer(1)
                s.answer(s.client.attach())
                s.answer(s.client.configuration_done())
                asked = [s.client.threads() for _ in range(300)]
                for seq in asked:
                    s.answer(seq)
                check(any(r["event"] == "thread" for r, _ in s.events), "tasks came and went meanwhile")
                s.answer(s.client.disconnect())
                found += ["%s client: %s" % (client, problem) for problem in s.problems[:4]]
                s.problems = []
                s.clean()
            finally:
                s.close()
        open(done, "w").close()
        check(not found, "\n  ".join(["out of order:"] + found))
        out, _ = process.communicate(timeout=TIMEOUT)
        check(process.returncode == 0 and b"tasks\ttrue" in out, "the script ran on: %r" % out)
    finally:
        if process.poll() is None:
            process.kill()


if __name__ == "__main__":
    run_cases()
