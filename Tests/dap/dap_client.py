"""A Debug Adapter Protocol client for the tests: speaks DAP over real pipes (a `bklua --dap`
process) or a real TCP socket (`bklua --dap-listen`, a host's debug server), the way an editor does.
"""
import json
import os
import queue
import socket
import subprocess
import threading
import time

TIMEOUT = float(os.environ.get("DAP_TIMEOUT", "20"))


class DAPError(Exception):
    pass


class Client:
    """One connection. `request` sends and waits for the response; events are queued, read with
    `wait_event`; `output` collects output events' text by category."""

    def __init__(self, reader, writer, process=None, sock=None):
        self.reader = reader
        self.writer = writer
        self.process = process
        self.sock = sock
        self.seq = 0
        self.responses = {}
        self.events = queue.Queue()
        self.seen = []  # every event, in order
        self.output = {}
        self.lock = threading.Condition()
        self.closed = False
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    # --- starting ---

    @classmethod
    def launch_adapter(cls, bklua, env=None):
        process = subprocess.Popen([bklua, "--dap"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, env=env)
        return cls(process.stdout, process.stdin, process=process)

    @classmethod
    def connect(cls, port, host="127.0.0.1", process=None):
        deadline = time.time() + TIMEOUT
        while True:
            try:
                sock = socket.create_connection((host, port), timeout=TIMEOUT)
                break
            except OSError:
                if time.time() > deadline:
                    raise
                time.sleep(0.05)
        sock.settimeout(None)
        f = sock.makefile("rwb", buffering=0)
        return cls(f, f, process=process, sock=sock)

    # --- wire ---

    def _read(self):
        try:
            while True:
                headers = {}
                while True:
                    line = self.reader.readline()
                    if not line:
                        raise EOFError
                    line = line.decode("ascii").strip()
                    if not line:
                        break
                    name, _, value = line.partition(":")
                    headers[name.strip().lower()] = value.strip()
                n = int(headers["content-length"])
                body = b""
                while len(body) < n:
                    part = self.reader.read(n - len(body))
                    if not part:
                        raise EOFError
                    body += part
                message = json.loads(body.decode("utf-8"))
                if message.get("type") == "response":
                    with self.lock:
                        self.responses[message["request_seq"]] = message
                        self.lock.notify_all()
                elif message.get("type") == "event":
                    self.seen.append(message)
                    if message["event"] == "output":
                        b = message["body"]
                        self.output[b.get("category", "console")] = self.output.get(b.get("category", "console"), "") + b["output"]
                    self.events.put(message)
        except (EOFError, OSError, ValueError):
            pass
        finally:
            with self.lock:
                self.closed = True
                self.lock.notify_all()
            self.events.put(None)

    def send_raw(self, data):
        self.writer.write(data)
        if hasattr(self.writer, "flush"):
            self.writer.flush()

    def send(self, command, arguments=None):
        self.seq += 1
        message = {"seq": self.seq, "type": "request", "command": command}
        if arguments is not None:
            message["arguments"] = arguments
        body = json.dumps(message).encode("utf-8")
        self.send_raw(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        return self.seq

    def response(self, seq, timeout=TIMEOUT):
        deadline = time.time() + timeout
        with self.lock:
            while seq not in self.responses:
                if self.closed:
                    raise DAPError("connection closed waiting for response %d" % seq)
                left = deadline - time.time()
                if left <= 0:
                    raise DAPError("no response to request %d" % seq)
                self.lock.wait(left)
            return self.responses.pop(seq)

    def request(self, command, arguments=None, ok=True, timeout=TIMEOUT):
        r = self.response(self.send(command, arguments), timeout)
        if ok and not r["success"]:
            raise DAPError("%s failed: %s" % (command, r.get("message")))
        return r

    def wait_event(self, name, timeout=TIMEOUT, where=None):
        deadline = time.time() + timeout
        while True:
            left = deadline - time.time()
            if left <= 0:
                raise DAPError("no '%s' event (seen: %s)" % (name, [e["event"] for e in self.seen][-20:]))
            try:
                e = self.events.get(timeout=left)
            except queue.Empty:
                continue
            if e is None:
                self.events.put(None)
                raise DAPError("connection closed waiting for '%s' (output: %r)" % (name, self.output))
            if e["event"] == name and (where is None or where(e["body"] if "body" in e else {})):
                return e.get("body", {})

    # --- sessions ---

    def initialize(self):
        r = self.request("initialize", {"clientID": "bk-tests", "adapterID": "bklua", "linesStartAt1": True,
                                        "columnsStartAt1": True, "pathFormat": "path"})
        self.wait_event("initialized")
        return r["body"]

    def start(self, program, breakpoints=None, stop_on_entry=False, args=None, cwd=None, env=None,
              functions=None, exceptions=None):
        """initialize, launch, breakpoints, configurationDone."""
        caps = self.initialize()
        launch = {"program": program, "stopOnEntry": stop_on_entry}
        if args is not None:
            launch["args"] = args
        if cwd is not None:
            launch["cwd"] = cwd
        if env is not None:
            launch["env"] = env
        seq = self.send("launch", launch)
        result = self.configure(breakpoints, functions, exceptions)
        r = self.response(seq)
        if not r["success"]:
            raise DAPError("launch failed: %s" % r.get("message"))
        return caps, result

    def configure(self, breakpoints=None, functions=None, exceptions=None):
        result = {}
        for path, lines in (breakpoints or {}).items():
            specs = [l if isinstance(l, dict) else {"line": l} for l in lines]
            result[path] = self.request("setBreakpoints", {"source": {"path": path}, "breakpoints": specs})["body"]
        if functions is not None:
            result["functions"] = self.request("setFunctionBreakpoints",
                                               {"breakpoints": [{"name": n} if isinstance(n, str) else n for n in functions]})["body"]
        if exceptions is not None:
            self.request("setExceptionBreakpoints", {"filters": exceptions})
        self.request("configurationDone")
        return result

    def stopped(self, reason=None, timeout=TIMEOUT):
        return self.wait_event("stopped", timeout, where=(lambda b: b["reason"] == reason) if reason else None)

    def frames(self, thread=1):
        return self.request("stackTrace", {"threadId": thread})["body"]["stackFrames"]

    def scopes(self, frame):
        return {s["name"]: s for s in self.request("scopes", {"frameId": frame})["body"]["scopes"]}

    def variables(self, ref, **extra):
        args = {"variablesReference": ref}
        args.update(extra)
        return self.request("variables", args)["body"]["variables"]

    def locals(self, frame):
        return {v["name"]: v for v in self.variables(self.scopes(frame)["Locals"]["variablesReference"])}

    def evaluate(self, expression, frame=1, context="repl", ok=True):
        r = self.request("evaluate", {"expression": expression, "frameId": frame, "context": context}, ok=False)
        if ok and not r["success"]:
            raise DAPError("evaluate %r failed: %s" % (expression, r.get("message")))
        return r["body"] if r["success"] else r

    def step(self, command, thread=1):
        self.request(command, {"threadId": thread})

    def finish(self, timeout=TIMEOUT):
        """Waits for exited and terminated; returns the exit code."""
        code = self.wait_event("exited", timeout)["exitCode"]
        self.wait_event("terminated", timeout)
        return code

    def close(self):
        try:
            if not self.closed:
                try:
                    self.send("disconnect", {})
                except (OSError, ValueError):
                    pass
        finally:
            if self.sock is not None:
                try:
                    self.sock.close()
                except OSError:
                    pass
            if self.process is not None:
                try:
                    self.process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self.process.kill()
                    self.process.wait()
                for f in (self.process.stdin, self.process.stdout, self.process.stderr):
                    if f is None:
                        continue
                    try:
                        f.close()
                    except (OSError, ValueError):
                        pass
