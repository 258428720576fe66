"""facts.redact: every kind of secret goes, in linear time and off the event loop, and a
router's own log lines stay as they are."""

from __future__ import annotations

import asyncio
import base64
import string
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import pytest

from redaction_cases import (
    CASES,
    CERT,
    EC_KEY,
    PASSWORD,
    TOKEN,
    Case,
    _body,
    _windows,
    _wrapped_base64,
)
from result_parts import made_finding
from skupper_mcp.engine.operations import diagnose
from skupper_mcp.engine.operations import logs as logs_engine
from skupper_mcp.engine.runner import describe
from skupper_mcp.errors import CommandError, SiteStateError
from skupper_mcp.facts.redact import MARK, MAX_LINE, PRIVATE_KEY_MARK, redact, redact_lines
from skupper_mcp.topology import load_topology
from topology_samples import SMALL_TOPOLOGY

#: Logs of the real skupper-router 3.4.2 (skrouterd), recorded from a sandbox world's
#: router containers: a consumer with two links, and a hub.
ROUTER_LOGS = sorted((Path(__file__).parent / "router_logs").glob("*.log"))

KEY_BODY = [
    "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQDQm0d7pXv5Yy2k",
    "c3VwZXJzZWNyZXRrZXltYXRlcmlhbHRoYXRtdXN0bmV2ZXJsZWF2ZXRoZWhvc3Q=",
]
PEM = "\n".join(["-----BEGIN PRIVATE KEY-----", *KEY_BODY, "-----END PRIVATE KEY-----"])
# base64 of a PEM private key, as a kubernetes.io/tls Secret's data holds it
B64_PEM = "LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tCk1JSUV2UUlCQURBTkJna3Foa2lHOXcwQkFRRUZBQVND"
B64_CERT = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSURJVENDQWdtZ0F3SUJBZ0lVRjR6"
JWT = (
    "eyJhbGciOiJSUzI1NiIsImtpZCI6InNhbmRib3gifQ"
    ".eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQ6ZGVmYXVsdDpza3VwcGVyIn0"
    ".c2lnbmF0dXJlLXRoYXQtaXMtbm90LXJlYWw"
)


@pytest.mark.parametrize("path", ROUTER_LOGS, ids=lambda p: p.name)
def test_real_router_logs_pass_unchanged(path: Path) -> None:
    text = path.read_text()
    assert len(text.splitlines()) > 50  # the recording is there, not an empty file
    assert redact(text) == (text, 0)


@pytest.mark.parametrize(
    "line",
    [
        "2026-12-01 03:24:25.586083 +0000 AGENT (info) Created sslProfile link-hub-rhel-ai-profile",
        "SERVER (error) [C5] Connection to 127.80.61.2:8000 failed: amqp:connection:framing-error"
        " SSL Failure: error:0A000086:SSL routines::certificate verify failed",
        "ROUTER (critical) Router start-up failed: Python: CError: Configuration: Failed to"
        " configure TLS certFile '/etc/skupper-router-certs/link-hub/tls.crt' from sslProfile"
        " 'link-hub-profile'",
        "/home/skrouterd/bin/configure.sh: line 38: /tmp/skrouterd.json: Permission denied",
        "System controller started",
        "Link link-hub-rhel-ai secretName: link-hub-rhel-ai tokenFile=/run/token passwordFile=x",
        "SKUPPER_SECRET_NAME=link-hub secret_id=7 caCertFile: /etc/ca.crt",
        "the bearer token expired; tokenRequired=true password=${ROUTER_PASSWORD}",
        "routingKey: model-api-rhel-ai tls.key: redacted",
        "FLOW_LOG (info) LOG [JVwcV:4] BEGIN END parent=JVwcV:0 logSeverity=3",
        f"a certificate is public: ca.crt: {B64_CERT}",
        "amqps://127.80.61.2:5671 and https://127.80.61.254:6443/api/v1",
    ],
)
def test_ordinary_lines_are_left_alone(line: str) -> None:
    assert redact(line) == (line, 0)


@pytest.mark.parametrize(
    ("text", "secrets", "kept", "count"),
    [
        (f"before\n{PEM}\nafter", KEY_BODY, ["before", "after", PRIVATE_KEY_MARK], 1),
        (
            PEM.replace("PRIVATE KEY", "RSA PRIVATE KEY") + " trailing",
            KEY_BODY,
            [f"{PRIVATE_KEY_MARK} trailing"],
            1,
        ),
        # a tail cut the top of the key off: its END line alone
        ("\n".join([*KEY_BODY, "-----END PRIVATE KEY-----", "next line"]), KEY_BODY, ["next"], 1),
        # the read stopped inside the key: its BEGIN line alone
        ("kept line\n-----BEGIN EC PRIVATE KEY-----\n" + KEY_BODY[0], KEY_BODY, ["kept line"], 1),
        # a key inside one JSON log line, its line breaks escaped
        (
            '{"tls.key": "' + PEM.replace("\n", "\\n") + '\\n", "ca.crt": "c"}',
            KEY_BODY,
            ['"ca.crt": "c"'],
            1,
        ),
        ('"tls.key": "' + "\\n".join([*KEY_BODY, "-----END PRIVATE KEY-----"]), KEY_BODY, [], 1),
        (f"  tls.key: {B64_PEM}", [B64_PEM[20:]], ["tls.key:"], 1),
        (f"dump {B64_PEM} {B64_CERT}", [B64_PEM[20:]], [B64_CERT], 1),
        ("Authorization: Bearer sha256~Zx9kQ2pL0aBcDeF", ["sha256~Zx9kQ2pL0aBcDeF"], [], 1),
        ("headers authorization=Basic dXNlcjpodW50ZXIy", ["dXNlcjpodW50ZXIy"], ["Basic"], 1),
        ("curl -H 'bearer abcdefgh12345678'", ["abcdefgh12345678"], ["curl"], 1),
        (f"token used: {JWT} ok", [JWT.split(".")[1]], ["ok"], 1),
        ("token=abc123 password: hunter2", ["abc123", "hunter2"], ["token=", "password:"], 2),
        ('{"client_secret": "s3cr3t", "name": "n"}', ["s3cr3t"], ['"name": "n"'], 1),
        ("accessToken='tok-9f8e7d' apiKey=AKIAXYZ", ["tok-9f8e7d", "AKIAXYZ"], [], 2),
        ("SKUPPER_PASSWORD=pw-42 x", ["pw-42"], [" x"], 1),
        ("url https://bob:pa55w0rd@quay.io/v2", ["pa55w0rd"], ["bob:", "@quay.io"], 1),
    ],
)
def test_secrets_are_replaced_and_counted(
    text: str, secrets: list[str], kept: list[str], count: int
) -> None:
    redacted, found = redact(text)
    for secret in secrets:
        assert secret not in redacted, redacted
    for part in kept:
        assert part in redacted, redacted
    assert MARK in redacted or PRIVATE_KEY_MARK in redacted
    assert found == count, redacted
    assert redact(redacted) == (redacted, 0)  # what is left holds nothing more


def test_a_key_among_real_router_lines_goes_and_the_lines_stay() -> None:
    lines = ROUTER_LOGS[0].read_text().splitlines()[:20]
    mixed = [*lines[:10], *PEM.splitlines(), *lines[10:]]
    redacted, found = redact_lines(mixed)
    assert found == 1
    assert redacted == [*lines[:10], PRIVATE_KEY_MARK, *lines[10:]]


def test_no_lines_no_work() -> None:
    assert redact_lines([]) == ([], 0)
    assert redact("") == ("", 0)


# -- every kind of secret, generated here: no real-looking secret is written in this file --


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_every_kind_of_secret_goes_and_is_counted(case: Case) -> None:
    redacted, found = redact(case.text)
    rest = case.text  # what is not secret may share a piece with it (a key and its cert)
    for secret in case.secrets:
        rest = rest.replace(secret, "\n")
    leaked = {w for s in case.secrets for w in _windows(s) if w in redacted and w not in rest}
    assert not leaked, redacted
    assert found == case.count, redacted
    assert redact(redacted) == (redacted, 0)  # what is left holds nothing more


@pytest.mark.parametrize(
    "line",
    [
        "ROUTER_CORE (info) [C5] Connection Opened: dir=in host=127.0.0.1:46764"
        " encrypted=TLSv1.3 auth=EXTERNAL user=CN=client-hub",
        "exitCode=1 statusCode: 404 code=503 url: https://127.80.61.2:8000/v1/models",
        "password=${ROUTER_PASSWORD} secretName: x --token-file /run/t\ntoken: null",
        "podman login --password-stdin quay.io",
        "tar: tls.key: Cannot open: Permission denied",
        f"ca.crt: {base64.b64encode(CERT.encode()).decode()}",
        "\n".join(["a certificate is public:", *_wrapped_base64(CERT)]),
        "\n".join(["a certificate wrapped at 48:", *_wrapped_base64(CERT, 48)]),
        '{"ca.crt": "' + "\\n".join(_wrapped_base64(CERT)) + '"}',
        "podman run -u 1000:1000 --user=0:0 quay.io/skupper/skupper-router",
        "openssl pkcs12 -passin env:P12_PASS -passout file:/run/pass -passin stdin",
        "systemctl --user status skupper-controller.service; curl -u bob https://h",
        "spec:\n  password:\n    secretKeyRef:\n      name: db\n  other: 1",
        "password:\nnext: value",
        "Public-Lines: 2\nAAAAC3NzaC1lZDI1NTE5AAAAIG\nPrivate-MAC: 0a1b",
    ],
)
def test_lines_that_only_look_like_secrets_stay(line: str) -> None:
    assert redact(line) == (line, 0)


# -- linear time ---------------------------------------------------------------------------

MIB = 1 << 20
#: What made the old patterns try one stretch of text again and again: the key/value
#: pattern's worst case (a secret's name repeated with no separator: 64 KiB took 36 s),
#: runs it could start anywhere in, and the other patterns' own fragments.
HOSTILE = {
    "password-repeated": "password",
    "key-value-chain": "a=",
    "secret-name-no-separator": "passwordx",
    "jwt-starts": "eyJ-",
    "dotted-run": "a.",
    "spaces": " ",
    "base64-alphabet": string.ascii_letters + string.digits + "+/",
    "begin-without-end": "-----BEGIN PRIVATE KEY-----",
    "end-lines": "-----END PRIVATE KEY-----\n",
    "url-userinfo": "a://u:",
    "block-scalar-headers": "token: |\n",
    "references": "secretName=x ",
    "escaped-base64-breaks": "AAAAAAAAAAAAAAAAAAAA\\n",
    "short-base64-runs": "AAAAAAAAAAAAAAAA\n",
    "putty-private-lines": "Private-Lines: 1\nAAAA\n",
    "yaml-next-line-keys": "password:\n ",
    "user-flags": "-u a:",
    "openssl-pass": "-passin pass:",
}


def _hostile(fragment: str, size: int) -> str:
    return (fragment * (size // len(fragment) + 1))[:size]


@pytest.mark.parametrize("fragment", HOSTILE.values(), ids=HOSTILE.keys())
def test_a_hostile_mebibyte_line_is_redacted_in_well_under_a_second(fragment: str) -> None:
    line = _hostile(fragment.replace("\n", " "), MIB)
    started = time.thread_time()  # CPU time, which load does not stretch (see below)
    redacted, _ = redact(line)
    assert time.thread_time() - started < 0.5
    assert len(redacted) < MAX_LINE + 100 and "more characters not shown" in redacted


@pytest.mark.parametrize("fragment", HOSTILE.values(), ids=HOSTILE.keys())
def test_hostile_lines_at_the_cap_take_linear_time(fragment: str) -> None:
    """Lines just short of the cap are matched whole: 256 KiB of them (the old code took
    minutes on these) stays within a bound a quadratic pattern cannot meet."""
    text = _hostile(fragment, 256 * 1024)
    lines = "\n".join(text[i : i + MAX_LINE - 1] for i in range(0, len(text), MAX_LINE - 1))
    # CPU time of this thread, not the wall clock: on a loaded machine (the suite runs on
    # xdist workers beside routers) the wall clock counts other processes' turns too
    started = time.thread_time()
    redact(lines)
    assert time.thread_time() - started < 1.5


def test_a_long_line_is_cut_with_a_mark_and_the_rest_is_never_read() -> None:
    line = "x" * MAX_LINE + f" password={PASSWORD}"
    redacted, found = redact(f"{line}\nnext")
    assert found == 0 and PASSWORD not in redacted
    assert (
        redacted
        == "x" * MAX_LINE + f" [line cut: {len(PASSWORD) + 10} more characters not shown]\nnext"
    )


def test_a_key_whose_end_was_cut_off_its_line_ends_at_the_cut() -> None:
    escaped = EC_KEY.replace("\n", "\\n")
    line = f'{{"tls.key": "{escaped}' + "A" * MAX_LINE + '"}'
    redacted, found = redact(f"{line}\nthe next line stays")
    assert found == 1 and redacted.endswith("more characters not shown]\nthe next line stays")
    assert not any(piece in redacted for piece in _body(EC_KEY))


# -- the engine redacts in a thread --------------------------------------------------------


class _Ticker:
    """Counts how often the event loop ran it: a blocked loop runs nothing."""

    def __init__(self) -> None:
        self.ticks = 0

    async def run(self) -> None:
        while True:
            self.ticks += 1
            await asyncio.sleep(0.001)


def _gated(real, ticker: _Ticker, opened: threading.Event):
    """``real``, run only once the ticker has ticked while it waits: on the event loop
    the wait blocks the loop, the ticker stops, and the gate never opens."""

    def gated(*args):
        start = ticker.ticks
        deadline = time.monotonic() + 3
        while ticker.ticks < start + 5 and time.monotonic() < deadline:
            time.sleep(0.001)
        if ticker.ticks >= start + 5:
            opened.set()
        return real(*args)

    return gated


@dataclass
class _LogRead:
    container: str | None
    exists: int
    text: str
    cut: bool = False
    rc: int = 0  # podman logs' exit status (facts.logs.PodmanLogRead)
    podman_said: tuple[str, ...] = ()
    dropped: bool = False


class _OneSite:
    def __init__(self, text: str) -> None:
        self.namespace = "default"
        self.text = text

    async def logs(self, lines: int, max_bytes: int, container: str | None = None) -> _LogRead:
        return _LogRead(container, 0, self.text)


class _Sites:
    def __init__(self, topology, text: str) -> None:
        self.topology = topology
        self.site = _OneSite(text)

    async def podman(self, ref):
        return self.site


HOSTILE_LOG = _hostile("password", MIB) + f"\ntoken={PASSWORD}\n"


async def _while_ticking(ticker: _Ticker, work):
    ticking = asyncio.create_task(ticker.run())
    try:
        return await work
    finally:
        ticking.cancel()


async def test_logs_redacts_off_the_event_loop(write_topology, monkeypatch) -> None:
    ticker, opened = _Ticker(), threading.Event()
    monkeypatch.setattr(logs_engine, "redact", _gated(redact, ticker, opened))
    topology = load_topology(write_topology(SMALL_TOPOLOGY))
    sites = _Sites(topology, HOSTILE_LOG)
    result = await _while_ticking(ticker, logs_engine.run(sites, "alpha", "router", 500))  # type: ignore[arg-type]
    assert opened.is_set(), "the event loop stood still while the log was redacted"
    assert result.redactions == 1 and f"token={MARK}" in result.lines
    assert PASSWORD not in "\n".join(result.lines)


async def test_diagnose_redacts_evidence_off_the_event_loop(write_topology, monkeypatch) -> None:
    ticker, opened = _Ticker(), threading.Event()
    monkeypatch.setattr(diagnose, "redact_lines", _gated(redact_lines, ticker, opened))
    finding = made_finding("hostile", evidence=HOSTILE_LOG.splitlines())
    monkeypatch.setattr(diagnose, "RULES", [lambda network: [finding]])

    async def read(sites):
        return SimpleNamespace(views={})

    monkeypatch.setattr(diagnose, "read", read)
    topology = load_topology(write_topology(SMALL_TOPOLOGY))
    run = diagnose.run(SimpleNamespace(topology=topology), "all")  # type: ignore[arg-type]
    result = await _while_ticking(ticker, run)
    assert opened.is_set(), "the event loop stood still while the evidence was redacted"
    assert f"token={MARK}" in result.findings[0].evidence
    assert PASSWORD not in "\n".join(result.findings[0].evidence)


# -- a failed command's output -------------------------------------------------------------


def test_a_command_error_keeps_no_secret_of_its_output() -> None:
    stderr = f"{EC_KEY}error: login failed: password={PASSWORD}\n"
    error = CommandError("alpha", "skupper system apply -f -", 1, stderr, f"token: {TOKEN}")
    for said in (str(error), error.stderr, error.stdout):
        assert PASSWORD not in said and TOKEN not in said
        assert not any(piece in said for piece in _body(EC_KEY))
    assert str(error).endswith(f"login failed: password={MARK}")


def test_a_site_state_error_keeps_no_secret_of_what_it_quotes() -> None:
    error = SiteStateError("alpha", f"cut short: --password {PASSWORD}", stderr=EC_KEY)
    assert PASSWORD not in str(error) and not any(p in error.stderr for p in _body(EC_KEY))


def test_a_failed_step_reports_its_reason_without_the_secret() -> None:
    error = CommandError("alpha", "skupper system reload", 1, f"{EC_KEY}pwd={PASSWORD}")
    reason = describe(error)
    assert PASSWORD not in reason and not any(p in reason for p in _body(EC_KEY))
    assert "command failed on alpha (exit 1)" in reason
