"""A program driven in a pseudo-terminal, with expect-style waiting (Python's standard library only)."""
import fcntl
import os
import pty
import re
import select
import signal
import struct
import termios
import time

CSI = re.compile(rb"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b[=>78]")


def clean(data):
    """Terminal output as text: escape sequences and carriage returns removed."""
    return CSI.sub(b"", data).replace(b"\r", b"").replace(b"\x07", b"").decode("utf-8", "replace")


class Session:
    def __init__(self, argv, env=None, columns=80, rows=24):
        environment = dict(os.environ)
        environment["TERM"] = "xterm"
        environment.update(env or {})
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            try:
                os.execvpe(argv[0], argv, environment)
            finally:
                os._exit(127)
        fcntl.ioctl(self.fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        self.data = b""
        self.position = 0  # expect() looks after this point of the cleaned output
        self.status = None

    def send(self, text):
        os.write(self.fd, text.encode() if isinstance(text, str) else text)

    def _read(self, timeout):
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return False
        try:
            chunk = os.read(self.fd, 4096)
        except OSError:
            chunk = b""
        if not chunk:
            raise EOFError("the program closed its terminal")
        self.data += chunk
        return True

    @property
    def text(self):
        return clean(self.data)

    def expect(self, pattern, timeout=15):
        """Waits for `pattern` (a regex) in the cleaned output after the last match; returns the match."""
        regex = re.compile(pattern, re.M)
        deadline = time.monotonic() + timeout
        while True:
            match = regex.search(self.text, self.position)
            if match:
                self.position = match.end()
                return match
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError("timed out waiting for %r; output after the last match:\n%s"
                                     % (pattern, self.text[self.position:]))
            try:
                self._read(min(left, 0.2))
            except EOFError:
                raise AssertionError("the program ended while waiting for %r; output after the last match:\n%s"
                                     % (pattern, self.text[self.position:]))

    def wait_exit(self, timeout=15):
        """The program's exit status (waits for it, reading its output meanwhile)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.status = os.waitstatus_to_exitcode(status)
                try:
                    while self._read(0.1):  # what it wrote before exiting
                        pass
                except EOFError:
                    pass
                return self.status
            try:
                self._read(0.1)
            except EOFError:
                time.sleep(0.05)
        raise AssertionError("the program did not exit; output:\n" + self.text[self.position:])

    def close(self):
        if self.status is None:
            try:
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
        try:
            os.close(self.fd)
        except OSError:
            pass
