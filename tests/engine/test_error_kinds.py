"""Errors by layer (issue 42, item 5): ``errors.kind_of`` maps every foreign exception the
connectors meet (asyncssh, kubernetes and urllib3, httpx, OSError, a JSON parse) and every
product error to one kind, and the consumers read that kind: a site that refuses our
credentials is ``refused``, never ``unreachable``, whatever client said so."""

from __future__ import annotations

import errno
import json
import socket
from pathlib import Path

import asyncssh
import httpx
import pytest
from kubernetes.client.exceptions import ApiException
from kubernetes.config.config_exception import ConfigException
from urllib3.connection import HTTPConnection
from urllib3.connectionpool import HTTPConnectionPool
from urllib3.exceptions import MaxRetryError, NewConnectionError, ProtocolError, ReadTimeoutError

from skupper_mcp.engine.findings.context import Network
from skupper_mcp.engine.findings.sites import unreadable
from skupper_mcp.engine.readings import Unread
from skupper_mcp.engine.runner import describe
from skupper_mcp.engine.scope import SiteRef
from skupper_mcp.errors import (
    BusyError,
    CheckFailed,
    CommandError,
    CommandTimeout,
    ConfigError,
    ConnectError,
    HostKeyError,
    Kind,
    KubeBoundError,
    KubeError,
    MissingExtraError,
    NotReadyError,
    OutputLimitError,
    SiteConfigError,
    TooDeep,
    Unparsed,
    kind_of,
    status_kind,
)
from skupper_mcp.topology import Topology, load_topology

STATES = Path(__file__).resolve().parent / "site_states"


def _httpx_status(code: int) -> httpx.HTTPStatusError:
    request = httpx.Request("GET", "http://127.0.0.1/v1/models")
    response = httpx.Response(code, request=request)
    return httpx.HTTPStatusError(f"HTTP {code}", request=request, response=response)


def _json_error() -> json.JSONDecodeError:
    try:
        json.loads("{not json")
    except json.JSONDecodeError as exc:
        return exc
    raise AssertionError("parsed")


#: urllib3's errors name the connection and the pool they come from (none is opened).
CONN = HTTPConnection("127.0.0.1", 9)
POOL = HTTPConnectionPool("127.0.0.1", 9)

FOREIGN = [
    # asyncssh: the host answered and said no, or the connection went
    (asyncssh.PermissionDenied("no such key"), Kind.REFUSED),
    (asyncssh.HostKeyNotVerifiable("unknown key"), Kind.REFUSED),
    (asyncssh.ConnectionLost("gone"), Kind.CONNECT),
    (asyncssh.DisconnectError(11, "bye"), Kind.CONNECT),
    (asyncssh.ChannelOpenError(2, "no forwarding"), Kind.CONNECT),
    # kubernetes: an API that answered, by its status; a kubeconfig it cannot load
    (ApiException(status=401, reason="Unauthorized"), Kind.REFUSED),
    (ApiException(status=403, reason="Forbidden"), Kind.REFUSED),
    (ApiException(status=500, reason="Internal Server Error"), Kind.FAILED),
    (ConfigException("no context"), Kind.CONFIG),
    # urllib3 under it: a pool's retries end in the reason they carry
    (NewConnectionError(CONN, "refused"), Kind.CONNECT),
    (ReadTimeoutError(POOL, "/api", "read timed out"), Kind.TIMEOUT),
    (MaxRetryError(POOL, "/api", NewConnectionError(CONN, "refused")), Kind.CONNECT),
    (MaxRetryError(POOL, "/api", ReadTimeoutError(POOL, "/api", "slow")), Kind.TIMEOUT),
    (ProtocolError("Connection aborted."), Kind.CONNECT),
    # httpx, as it groups its own
    (httpx.ConnectError("refused"), Kind.CONNECT),
    (httpx.RemoteProtocolError("Server disconnected"), Kind.CONNECT),
    (httpx.ReadTimeout("slow"), Kind.TIMEOUT),
    (httpx.ConnectTimeout("slow"), Kind.TIMEOUT),
    (httpx.DecodingError("bad gzip"), Kind.PARSE),
    (httpx.UnsupportedProtocol("ftp"), Kind.CONFIG),
    (_httpx_status(401), Kind.REFUSED),
    (_httpx_status(502), Kind.FAILED),
    # the standard library: a socket's errors, a file's, a parse's
    (ConnectionRefusedError(errno.ECONNREFUSED, "Connection refused"), Kind.CONNECT),
    (ConnectionResetError(errno.ECONNRESET, "reset"), Kind.CONNECT),
    (OSError(errno.EHOSTUNREACH, "No route to host"), Kind.CONNECT),
    (socket.gaierror(socket.EAI_NONAME, "Name or service not known"), Kind.CONNECT),
    (TimeoutError(), Kind.TIMEOUT),
    (FileNotFoundError(errno.ENOENT, "No such file", "/nowhere/key"), Kind.LOCAL),
    (_json_error(), Kind.PARSE),
    (UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte"), Kind.PARSE),
]


@pytest.mark.parametrize(("error", "kind"), FOREIGN, ids=lambda v: type(v).__name__)
def test_each_foreign_exception_has_one_kind(error: BaseException, kind: Kind) -> None:
    assert kind_of(error) is kind


OURS = [
    (ConfigError("bad value", variable="SSH_PORT"), Kind.CONFIG),
    (SiteConfigError("rhel-ai", "no such file", variable="SSH_IDENTITY"), Kind.CONFIG),
    (MissingExtraError("a Kubernetes site", "kubernetes", "kubernetes"), Kind.CONFIG),
    (ConnectError("rhel-ai", "connection refused"), Kind.CONNECT),
    (ConnectError("rhel-ai", "timed out", kind=Kind.TIMEOUT), Kind.TIMEOUT),
    (ConnectError("rhel-ai", "authentication failed", kind=Kind.REFUSED), Kind.REFUSED),
    (HostKeyError("rhel-ai", "unknown host key"), Kind.REFUSED),
    (CommandError("rhel-ai", "podman ps", 125, "error"), Kind.FAILED),
    (CommandTimeout("rhel-ai", "podman ps", 5), Kind.TIMEOUT),
    (NotReadyError("rhel-ai", "links not ready", 30), Kind.TIMEOUT),
    (OutputLimitError("rhel-ai", "podman ps", "stdout", 1024), Kind.PARSE),
    (Unparsed("not podman's JSON"), Kind.PARSE),
    (TooDeep(1000, 64), Kind.PARSE),
    (KubeError("crc", "Unauthorized", 401), Kind.REFUSED),
    (KubeError("crc", "Forbidden", 403), Kind.REFUSED),
    (KubeError("crc", "not found", 404), Kind.FAILED),
    (KubeError("crc", "the answer is not JSON", kind=Kind.PARSE), Kind.PARSE),
    (KubeBoundError("crc", "slow", bound="deadline"), Kind.TIMEOUT),
    (KubeBoundError("crc", "large", bound="size"), Kind.PARSE),
    (CheckFailed("/v1/models answered HTTP 401", status=401), Kind.REFUSED),
    (CheckFailed("/v1/models answered HTTP 500", status=500), Kind.FAILED),
    (BusyError("another operation runs"), Kind.LOCAL),
]


@pytest.mark.parametrize(("error", "kind"), OURS, ids=lambda v: type(v).__name__)
def test_each_product_error_says_its_kind(error: BaseException, kind: Kind) -> None:
    assert kind_of(error) is kind


def test_what_no_layer_explains_has_no_kind() -> None:
    # a bug is not a failure the product expects: it surfaces as one
    assert kind_of(KeyError("x")) is None
    assert kind_of(ValueError("x")) is None


def test_an_http_status_is_refused_only_for_401_and_403() -> None:
    assert status_kind(401) is Kind.REFUSED and status_kind(403) is Kind.REFUSED
    assert status_kind(404) is Kind.FAILED and status_kind(500) is Kind.FAILED


def test_a_transport_error_without_text_says_what_happened() -> None:
    assert "connection was reset or closed (RemoteProtocolError)" in describe(
        httpx.RemoteProtocolError("")
    )
    assert describe(httpx.ReadTimeout("")) == "no answer in time (ReadTimeout)"


GPU = SiteRef("rhel-ai", "hub-rhel-ai", "provider", "podman")


@pytest.fixture(scope="module")
def topology() -> Topology:
    return load_topology(STATES / "topology.env")


def test_reach_is_refused_by_kind_and_unreachable_only_where_no_connection_was_made() -> None:
    errors = {
        "ssh authentication": ConnectError("rhel-ai", "auth failed", kind=Kind.REFUSED),
        "host key": HostKeyError("rhel-ai", "the host key changed"),
        "closed port": ConnectError("rhel-ai", "connection refused (is sshd running?)"),
        "connect timeout": ConnectError("rhel-ai", "timed out after 5s", kind=Kind.TIMEOUT),
        "no identity file": SiteConfigError("rhel-ai", "no identity", variable="SSH_IDENTITY"),
        "script failed": CommandError("rhel-ai", "sh state.sh", 2, "syntax error"),
        # the host answered; its command did not finish: reached, not unreachable
        "command timeout": CommandTimeout("rhel-ai", "sh state.sh", 30),
    }
    assert {what: Unread(GPU, error).reach for what, error in errors.items()} == {
        "ssh authentication": "refused",
        "host key": "refused",
        "closed port": "unreachable",
        "connect timeout": "unreachable",
        "no identity file": "unreachable",
        "script failed": "reached",
        "command timeout": "reached",
    }


def test_an_ssh_host_that_refuses_our_key_is_told_to_fix_the_key(topology: Topology) -> None:
    view = Unread(GPU, ConnectError("rhel-ai", "authentication failed", kind=Kind.REFUSED))
    assert view.problem().startswith("rhel-ai refused our credentials: ")
    [found] = unreadable(Network(topology, {"rhel-ai": view}, []))
    assert "refuses our credentials" in found.symptom
    assert "authorized_keys" in found.cause and "ssh-copy-id" in found.fix
    assert "cluster" not in found.cause
