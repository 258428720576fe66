"""Who may drive the server over Streamable HTTP: a bearer token on every request, and the
Host and Origin checks of the SDK for every bind.

Without them any local process (or, off loopback, any peer, or a web page through DNS
rebinding) could call teardown. The token comes from ``--token-file``, from
``SKUPPER_MCP_HTTP_TOKEN``, or, on loopback when neither is given, from a file generated once
in the state folder. A bind outside loopback must name its token explicitly: a generated one
would let the server start with a secret its clients do not have yet, which invites turning
the check off.
"""

from __future__ import annotations

import hmac
import ipaddress
import os
import secrets
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp.server.transport_security import TransportSecuritySettings

from skupper_mcp.engine.store.statedir import create_private_file, private_dir
from skupper_mcp.errors import ConfigError

TOKEN_VARIABLE = "SKUPPER_MCP_HTTP_TOKEN"
TOKEN_FILE_NAME = "http-token"
NO_AUTH_FLAG = "--insecure-no-auth-on-loopback"
MIN_TOKEN_LENGTH = 16
MAX_TOKEN_BYTES = 4096
#: The names a client on this machine may use for a loopback server, with its port.
LOCAL_NAMES = ("127.0.0.1", "localhost", "[::1]")
#: A token is sent in a header: visible ASCII, no spaces.
TOKEN_CHARACTERS = frozenset(chr(c) for c in range(0x21, 0x7F))
MAKE_ONE = "python3 -c 'import secrets; print(secrets.token_urlsafe(32))'"


@dataclass(frozen=True)
class HttpAccess:
    """The token every request must carry (None only with the loopback opt-out) and where it
    comes from, for the start-up message."""

    token: str | None
    source: str


def is_loopback(host: str) -> bool:
    """Whether an address to bind is on loopback (a name other than localhost is not
    resolved: it counts as outside)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def http_access(
    host: str, *, token_file: Path | None, no_auth: bool, state_dir: Path
) -> HttpAccess:
    """The access rule for a bind, or a ConfigError that says how to start safely."""
    variable = os.environ.get(TOKEN_VARIABLE)
    if no_auth:
        return _no_auth(host, token_file, variable)
    if token_file is not None and variable is not None:
        raise ConfigError(
            f"both --token-file and {TOKEN_VARIABLE} give the HTTP token; keep one of them"
        )
    if token_file is not None:
        return HttpAccess(_checked(read_token(token_file), str(token_file)), str(token_file))
    if variable is not None:
        return HttpAccess(_checked(variable, TOKEN_VARIABLE), TOKEN_VARIABLE)
    if not is_loopback(host):
        raise ConfigError(
            f"--host {host} is outside loopback, so the server needs a token its clients "
            f"already have: pass --token-file PATH or set {TOKEN_VARIABLE} (make one with "
            f"{MAKE_ONE}). Better: keep --host 127.0.0.1 and reach it through SSH port "
            "forwarding (docs/server.md, Streamable HTTP)"
        )
    return HttpAccess(stored_token(state_dir), str(state_dir / TOKEN_FILE_NAME))


def _no_auth(host: str, token_file: Path | None, variable: str | None) -> HttpAccess:
    if not is_loopback(host):
        raise ConfigError(
            f"{NO_AUTH_FLAG} is for loopback only: with --host {host} anyone who reaches the "
            "port could call teardown. Bind 127.0.0.1, or drop the flag and give a token"
        )
    if token_file is not None or variable is not None:
        given = "--token-file" if token_file is not None else TOKEN_VARIABLE
        raise ConfigError(f"{NO_AUTH_FLAG} and {given} contradict each other; keep one")
    return HttpAccess(None, NO_AUTH_FLAG)


def _checked(token: str, where: str) -> str:
    token = token.strip()
    if len(token) < MIN_TOKEN_LENGTH or not set(token) <= TOKEN_CHARACTERS:
        raise ConfigError(
            f"the HTTP token in {where} must be at least {MIN_TOKEN_LENGTH} visible ASCII "
            f"characters without spaces; make one with {MAKE_ONE}"
        )
    return token


def read_token(path: Path) -> str:
    """A token file's text: a regular file of ours that only we can read, never a link."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as error:
        raise ConfigError(f"cannot read the HTTP token file {path}: {error.strerror}") from error
    with os.fdopen(fd, "rb") as file:
        info = os.fstat(file.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid():
            raise ConfigError(f"the HTTP token file {path} must be a regular file you own")
        if info.st_mode & 0o077:
            raise ConfigError(
                f"the HTTP token file {path} can be read by others; run chmod 600 {path}"
            )
        data = file.read(MAX_TOKEN_BYTES + 1)
    if len(data) > MAX_TOKEN_BYTES:
        raise ConfigError(f"the HTTP token file {path} is too long for a token")
    return data.decode("ascii", errors="replace")


def stored_token(state_dir: Path) -> str:
    """The generated token in the state folder, made (0600, never through a link, in a
    folder checked as every state folder is) on first use."""
    path = state_dir / TOKEN_FILE_NAME
    token = secrets.token_urlsafe(32)
    with private_dir(state_dir) as folder:
        if not create_private_file(folder, state_dir, TOKEN_FILE_NAME, f"{token}\n".encode()):
            return _checked(read_token(path), str(path))
    print(f"skupper-mcp: generated an HTTP bearer token in {path} (mode 0600)", file=sys.stderr)
    return token


def announce(access: HttpAccess, url: str) -> None:
    """Say once, on stderr, how a client gets in (the token itself is never printed)."""
    if access.token is None:
        print(
            f"skupper-mcp: WARNING {NO_AUTH_FLAG}: any local process can call every tool "
            f"at {url}, teardown included",
            file=sys.stderr,
        )
        return
    if access.source == TOKEN_VARIABLE:
        header = f"Authorization: Bearer ${TOKEN_VARIABLE}"
    else:
        header = f"Authorization: Bearer $(cat {access.source})"
    print(
        f"skupper-mcp: serving {url}; every request must carry the header '{header}' "
        f"(the token is in {access.source})",
        file=sys.stderr,
    )


def transport_security(host: str, port: int) -> TransportSecuritySettings:
    """The SDK's Host and Origin checks: the bound host:port and the localhost forms."""
    bound = f"[{host}]" if ":" in host else host
    hosts = list(dict.fromkeys(f"{name}:{port}" for name in (bound, *LOCAL_NAMES)))
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=hosts,
        allowed_origins=[f"{scheme}://{h}" for h in hosts for scheme in ("http", "https")],
    )


class BearerTokenGate:
    """ASGI middleware: an HTTP request without ``Authorization: Bearer TOKEN`` gets 401
    before the MCP app sees it."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.token = token.encode()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or self.authorized(scope):
            await self.app(scope, receive, send)
            return
        body = (
            b"401: send the server's token as 'Authorization: Bearer TOKEN' "
            b"(docs/server.md, Streamable HTTP)\n"
        )
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"content-type", b"text/plain; charset=utf-8"),
                    (b"content-length", str(len(body)).encode()),
                    (b"www-authenticate", b'Bearer realm="skupper-mcp"'),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})

    def authorized(self, scope: dict[str, Any]) -> bool:
        values = [value for name, value in scope["headers"] if name == b"authorization"]
        if len(values) != 1:
            return False
        scheme, _, given = values[0].partition(b" ")
        # compared in constant time, whatever the scheme, so timing tells nothing
        matches = hmac.compare_digest(given.strip(), self.token)
        return matches and scheme.lower() == b"bearer"
