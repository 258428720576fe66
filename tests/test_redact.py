"""facts.redact: every kind of secret goes, and a router's own log lines stay as they are."""

from __future__ import annotations

from pathlib import Path

import pytest

from skupper_mcp.facts.redact import MARK, PRIVATE_KEY_MARK, redact, redact_lines

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
