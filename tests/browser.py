"""Headless Chromium for the tests: a page opened, JavaScript evaluated, what went wrong seen.

The browser is Debian's ``chromium`` (scripts/host-deps.sh installs it). It starts with
``--remote-debugging-port=0``: the port it chose is read from its stderr ("DevTools
listening on ws://..."), a page target is made over its HTTP endpoint (``/json/new``) and
driven with the Chrome DevTools Protocol over a websocket, a minimal stdlib client here
(no new dependency: the suite's venv need not have ``websockets``).

What a test reads afterwards: ``console_errors`` (console.error, uncaught exceptions, error
log entries), ``requests`` (every URL the page asked for: a page that works offline asks
only for ``data:`` and ``about:``), ``dialogs`` (alert/confirm/prompt opened, dismissed at
once so the page goes on). The network is emulated offline as well: a request that did
leave would fail, and is still recorded.

Every wait has a deadline; nothing sleeps for a fixed time. ``Browser.close`` ends the
process (terminate, then kill) and removes its profile directory.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, cast

import pytest

from local_tools import end

CHROMIUM = "chromium"
START_TIMEOUT = 30.0
CALL_TIMEOUT = 30.0
DEVTOOLS_LINE = re.compile(r"DevTools listening on (ws://\S+)")
#: Schemes a self-contained page may load from: anything else left the page.
LOCAL_SCHEMES = ("data:", "about:", "blob:")


class BrowserError(RuntimeError):
    """Chromium did not start, answer or do what was asked in time."""


def chromium_path() -> str | None:
    return shutil.which(os.environ.get("SKMCP_CHROMIUM", CHROMIUM))


def require_chromium() -> str:
    """The chromium to run; without one, skip (fail in CI, where host-deps installs it)."""
    path = chromium_path()
    if path:
        return path
    reason = (
        "chromium is not installed (scripts/host-deps.sh installs it: apt-get install chromium)"
    )
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI must run the browser tests: {reason}", pytrace=False)
    pytest.skip(reason)


# --- A minimal websocket client (RFC 6455, client side, text frames) ----------------------


class _WebSocket:
    def __init__(self, url: str, timeout: float) -> None:
        parts = urllib.parse.urlsplit(url)
        self.sock = socket.create_connection((parts.hostname, parts.port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        request = (
            f"GET {path} HTTP/1.1\r\nHost: {parts.hostname}:{parts.port}\r\n"
            "Upgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        )
        self.sock.sendall(request.encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(1)
            if not chunk:
                raise BrowserError("the DevTools websocket closed during its handshake")
            head += chunk
        if b" 101 " not in head.split(b"\r\n", 1)[0]:
            raise BrowserError(f"DevTools refused the websocket: {head[:200]!r}")
        self.lock = threading.Lock()

    def send(self, text: str) -> None:
        payload = text.encode()
        header = bytearray([0x81])  # FIN, text
        n = len(payload)
        if n < 126:
            header.append(0x80 | n)
        elif n < 1 << 16:
            header.append(0x80 | 126)
            header += struct.pack("!H", n)
        else:
            header.append(0x80 | 127)
            header += struct.pack("!Q", n)
        mask = os.urandom(4)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        with self.lock:
            self.sock.sendall(bytes(header) + mask + masked)

    def _exact(self, n: int) -> bytes:
        data = bytearray()
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise BrowserError("the DevTools websocket closed")
            data += chunk
        return bytes(data)

    def recv(self, timeout: float) -> str:
        """The next text message; socket.timeout when none came within ``timeout``."""
        self.sock.settimeout(timeout)
        message = bytearray()
        while True:
            b0, b1 = self._exact(2)
            self.sock.settimeout(CALL_TIMEOUT)  # a frame begun is read to its end
            n = b1 & 0x7F
            if n == 126:
                (n,) = struct.unpack("!H", self._exact(2))
            elif n == 127:
                (n,) = struct.unpack("!Q", self._exact(8))
            mask = self._exact(4) if b1 & 0x80 else b""
            payload = self._exact(n)
            if mask:
                payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
            opcode = b0 & 0x0F
            if opcode == 0x8:
                raise BrowserError("the DevTools websocket closed")
            if opcode == 0x9:  # ping: answer pong
                with self.lock:
                    self.sock.sendall(bytes([0x8A, 0x80 | len(payload)]) + b"\0\0\0\0" + payload)
                continue
            if opcode in (0x0, 0x1):
                message += payload
                if b0 & 0x80:
                    return message.decode()

    def close(self) -> None:
        with suppress(OSError):
            self.sock.close()


# --- A page -------------------------------------------------------------------------------


class Page:
    """One page target, driven over CDP."""

    def __init__(self, ws_url: str) -> None:
        self.ws = _WebSocket(ws_url, CALL_TIMEOUT)
        self._next = 0
        self.console_errors: list[str] = []
        self.requests: list[str] = []
        self.dialogs: list[str] = []
        self.contexts: dict[int, dict[str, Any]] = {}
        self.main_frame: str | None = None
        self.target_id = ""
        self._loaded = 0
        #: documents this page answers itself (serve): URL -> HTML; nothing else is fetched
        self.served: dict[str, str] = {}
        for method in ("Page.enable", "Runtime.enable", "Log.enable", "Network.enable"):
            self.call(method)
        self.call(
            "Network.emulateNetworkConditions",
            offline=True,
            latency=0,
            downloadThroughput=-1,
            uploadThroughput=-1,
        )
        self.main_frame = self.call("Page.getFrameTree")["frameTree"]["frame"]["id"]

    # The protocol ------------------------------------------------------------------------

    def call(self, method: str, timeout: float = CALL_TIMEOUT, **params: Any) -> dict[str, Any]:
        self._next += 1
        ident = self._next
        self.ws.send(json.dumps({"id": ident, "method": method, "params": params}))
        deadline = time.monotonic() + timeout
        while True:
            message = self._read(deadline, method)
            if message.get("id") == ident:
                if "error" in message:
                    raise BrowserError(f"{method}: {message['error']}")
                return message.get("result", {})

    def _read(self, deadline: float, waiting_for: str) -> dict[str, Any]:
        left = deadline - time.monotonic()
        if left <= 0:
            raise BrowserError(f"no answer from Chromium in time ({waiting_for})")
        try:
            message = json.loads(self.ws.recv(left))
        except TimeoutError as e:
            raise BrowserError(f"no answer from Chromium in time ({waiting_for})") from e
        if "method" in message:
            self._event(message["method"], message.get("params", {}))
        return message

    def pump(self, timeout: float = 0.05) -> None:
        """Read the events that arrived (console, requests, dialogs) without asking anything."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                self._read(deadline, "events")
            except BrowserError:
                return

    def _event(self, method: str, p: dict[str, Any]) -> None:
        if method == "Runtime.consoleAPICalled" and p.get("type") == "error":
            self.console_errors.append(
                " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", []))
            )
        elif method == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            self.console_errors.append(
                d.get("exception", {}).get("description") or d.get("text", "exception")
            )
        elif method == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
            entry = p["entry"]
            self.console_errors.append(f"{entry.get('text', '')} {entry.get('url', '')}".strip())
        elif method == "Network.requestWillBeSent":
            self.requests.append(p.get("request", {}).get("url", ""))
        elif method == "Page.javascriptDialogOpening":
            self.dialogs.append(f"{p.get('type')}: {p.get('message')}")
            self._next += 1  # dismiss it at once; its answer is read and dropped
            self.ws.send(
                json.dumps(
                    {
                        "id": self._next,
                        "method": "Page.handleJavaScriptDialog",
                        "params": {"accept": False},
                    }
                )
            )
        elif method == "Fetch.requestPaused":
            url = p.get("request", {}).get("url", "")
            self._next += 1  # answered at once; its answer is read and dropped
            if url in self.served:
                body = base64.b64encode(self.served[url].encode()).decode("ascii")
                command = {
                    "method": "Fetch.fulfillRequest",
                    "params": {
                        "requestId": p["requestId"],
                        "responseCode": 200,
                        "responseHeaders": [
                            {"name": "Content-Type", "value": "text/html; charset=utf-8"}
                        ],
                        "body": body,
                    },
                }
            else:
                command = {
                    "method": "Fetch.failRequest",
                    "params": {"requestId": p["requestId"], "errorReason": "InternetDisconnected"},
                }
            self.ws.send(json.dumps({"id": self._next, **command}))
        elif method == "Page.loadEventFired":
            self._loaded += 1
        elif method == "Runtime.executionContextCreated":
            context = p["context"]
            self.contexts[context["id"]] = context
        elif method == "Runtime.executionContextDestroyed":
            self.contexts.pop(cast(int, p.get("executionContextId")), None)
        elif method == "Runtime.executionContextsCleared":
            self.contexts.clear()

    # What a test does --------------------------------------------------------------------

    def open(self, target: str, timeout: float = CALL_TIMEOUT) -> None:
        """Load a URL, or an HTML document (anything starting with '<') as a data: URL; return
        once its load event fired."""
        url = target
        if target.lstrip().startswith("<"):
            url = "data:text/html;charset=utf-8;base64," + base64.b64encode(target.encode()).decode(
                "ascii"
            )
        loaded = self._loaded
        result = self.call("Page.navigate", url=url)
        if result.get("errorText"):
            raise BrowserError(f"navigation failed: {result['errorText']}")
        self.until(lambda: self._loaded > loaded, timeout, "the page's load event")

    def serve(self, url: str, html: str) -> None:
        """Answer ``url`` with ``html`` from here (CDP Fetch), so that a page has a real origin
        (a data: URL's is opaque) while nothing is fetched: every other request fails."""
        self.served[url] = html
        self.call("Fetch.enable", patterns=[{"urlPattern": "*"}])

    def until(self, done: Callable[[], bool], timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while not done():
            if time.monotonic() > deadline:
                raise BrowserError(f"timed out waiting for {what}")
            self.pump(0.05)

    def evaluate(self, js: str, context_id: int | None = None) -> Any:
        """The value of a JavaScript expression (promises awaited), as JSON."""
        params: dict[str, Any] = {"expression": js, "returnByValue": True, "awaitPromise": True}
        if context_id is not None:
            params["contextId"] = context_id
        result = self.call("Runtime.evaluate", **params)
        if "exceptionDetails" in result:
            d = result["exceptionDetails"]
            raise BrowserError(
                f"{js[:80]!r} threw: {d.get('exception', {}).get('description') or d.get('text')}"
            )
        return result.get("result", {}).get("value")

    def wait_for(
        self, js: str, timeout: float = 10.0, context_id: int | None = None, what: str = ""
    ) -> Any:
        """Evaluate ``js`` until it is truthy; its value."""
        deadline = time.monotonic() + timeout
        while True:
            value = self.evaluate(js, context_id)
            if value:
                return value
            if time.monotonic() > deadline:
                raise BrowserError(f"timed out waiting for {what or js!r} (last: {value!r})")
            self.pump(0.05)

    def frame_context(self, timeout: float = 10.0) -> int:
        """The default execution context of the page's child frame (the app's iframe)."""
        found: list[int] = []

        def child() -> bool:
            found[:] = [
                cid
                for cid, c in self.contexts.items()
                if c.get("auxData", {}).get("isDefault")
                and c.get("auxData", {}).get("frameId") != self.main_frame
            ]
            return bool(found)

        self.until(child, timeout, "the child frame's script context")
        return found[-1]

    def resize(self, width: int, height: int) -> None:
        """Lay the page out at width x height CSS pixels (a desktop, scale 1)."""
        self.call(
            "Emulation.setDeviceMetricsOverride",
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )

    def screenshot(
        self,
        path: Path,
        width: int,
        height: int,
        *,
        ready: str | None = None,
        context_id: int | None = None,
    ) -> Path:
        """A PNG of the page at width x height CSS pixels, taken once ``ready`` (JS, in
        ``context_id``) is true: a page that redraws on resize is shot after it redrew."""
        self.resize(width, height)
        if ready is not None:
            self.wait_for(ready, context_id=context_id, what=f"the page redrawn at {width}px")
        data = self.call("Page.captureScreenshot", format="png")["data"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))
        return path

    def left_the_page(self) -> list[str]:
        """Requests for anything but data:/about:/blob: (a self-contained page makes none)."""
        self.pump()
        return [
            u for u in self.requests if not u.startswith(LOCAL_SCHEMES) and u not in self.served
        ]

    def close(self) -> None:
        self.ws.close()


# --- The browser --------------------------------------------------------------------------


class Browser:
    def __init__(self, executable: str) -> None:
        self.profile = tempfile.mkdtemp(prefix="skmcp-chromium-")
        self.stderr: list[str] = []
        self.proc = subprocess.Popen(
            [
                executable,
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--remote-debugging-port=0",
                "--remote-debugging-address=127.0.0.1",
                f"--user-data-dir={self.profile}",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-extensions",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--metrics-recording-only",
                "--hide-scrollbars",
                # Sandboxed iframes stay in the page's process: their script contexts are
                # then reachable from the page's own DevTools session (Page.frame_context).
                "--disable-features=IsolateSandboxedIframes",
                "--disable-site-isolation-trials",
                "about:blank",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,  # its renderers and helpers share its process group
        )
        self.pages: list[Page] = []
        self._ws = threading.Event()
        self._ws_url = ""
        threading.Thread(target=self._drain, daemon=True).start()
        if not self._ws.wait(START_TIMEOUT) or not self._ws_url:
            self.close()
            raise BrowserError(
                "chromium printed no DevTools address:\n" + "".join(self.stderr[-20:])
            )
        parts = urllib.parse.urlsplit(self._ws_url)
        self.http = f"http://{parts.hostname}:{parts.port}"

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr.append(line)
            m = DEVTOOLS_LINE.search(line)
            if m and not self._ws.is_set():
                self._ws_url = m.group(1)
                self._ws.set()
        self._ws.set()  # it ended: whoever waits stops waiting

    def new_page(self) -> Page:
        request = urllib.request.Request(f"{self.http}/json/new?about:blank", method="PUT")
        with urllib.request.urlopen(request, timeout=CALL_TIMEOUT) as response:
            target = json.load(response)
        page = Page(target["webSocketDebuggerUrl"])
        page.target_id = target["id"]
        self.pages.append(page)
        return page

    def close_page(self, page: Page) -> None:
        page.close()
        self.pages.remove(page)
        with urllib.request.urlopen(
            f"{self.http}/json/close/{page.target_id}", timeout=CALL_TIMEOUT
        ):
            pass

    def close(self) -> None:
        for page in self.pages:
            page.close()
        if self.proc.poll() is None:
            end(self.proc)
        # any helper left of the group this browser led (its own id)
        with suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:  # until the group is gone (killed, reaped)
            try:
                os.killpg(self.proc.pid, 0)
            except (ProcessLookupError, PermissionError):
                break
            time.sleep(0.05)
        shutil.rmtree(self.profile, ignore_errors=True)


@contextmanager
def chromium() -> Iterator[Browser]:
    browser = Browser(require_chromium())
    try:
        yield browser
    finally:
        browser.close()
