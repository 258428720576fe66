"""A two-site network built by hand with the emulated CLI, as a person following the docs would.

Independent of the product's engine: every step is a `skupper`/`podman` command over SSH
(reference §1.6 and §3.3), and every check is what the user sees (an HTTP answer through
the listener, `skupper link status`, `podman inspect`, the namespace directory).

The tests share one network per sshd mode and run in order: build it, crash the hub's
router, link to a host name missing from the hub's SANs, then tear the consumer down.
"""

from __future__ import annotations

import base64
import functools
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest
import yaml

from by_hand import reload_by_hand, stop_by_hand
from hostkit import router_kinds
from polling import wait_for
from skupper_sandbox.layout import WorldSpec
from skupper_sandbox.netprobe import port_open
from skupper_sandbox.testing import World, running_world

pytestmark = pytest.mark.sandbox

ENV = "export XDG_RUNTIME_DIR=/run/user/$(id -u) SKUPPER_PLATFORM=podman; "
HUB, CONSUMER = "rhtevan-work", "local"
HUB_NS, CONSUMER_NS = "hubns", "westns"
RA, RA_PORTS = "hub-ra", (56671, 46671)
BAD_RA, BAD_RA_PORTS = "hub-bad-ra", (56672, 46672)
LISTENER_PORT = 18000
# skrouterd keeps a stopped hub's addresses until remoteLsMaxAgeSeconds (60 s) pass
LISTENER_CLOSE_SECONDS = 75.0
SECRET, LINK, BAD_LINK = "link-to-hub", "link-to-hub", "link-to-hub-wrong-name"
NS_DIR = "~/.local/share/skupper/namespaces"

T = TypeVar("T")


@dataclass
class Van:
    world: World
    hub: str
    consumer: str

    def run(self, host: str, command: str, *, input: str | None = None) -> tuple[int, str, str]:
        return self.world.ssh(host, ENV + command, input=input)

    def ok(self, host: str, command: str, *, input: str | None = None) -> str:
        status, out, err = self.run(host, command, input=input)
        assert status == 0, f"{host}: {command!r} exited {status}\n{out}{err}"
        return out

    def apply(self, host: str, namespace: str, documents: list[dict[str, Any]]) -> None:
        text = yaml.safe_dump_all(documents, sort_keys=False)
        out = self.ok(host, f"skupper system apply -f - -n {namespace}", input=text)
        for doc in documents:
            assert f"{doc['kind']} {doc['metadata']['name']} added" in out

    @property
    def url(self) -> str:
        return f"http://{self.consumer}:{LISTENER_PORT}/v1/models"

    def link_status(self, name: str) -> dict[str, Any]:
        """``skupper link status NAME -o yaml``'s status (one Link: like the real CLI, the
        list form prints the documents back to back, without ``---`` between them)."""
        out = self.ok(CONSUMER, f"skupper link status {name} -n {CONSUMER_NS} -o yaml")
        found = yaml.safe_load(out)
        assert found["metadata"]["name"] == name
        return dict(found.get("status") or {})

    def container_state(self, host: str, name: str) -> str:
        return self.ok(host, f"podman inspect {name} --format '{{{{.State.Status}}}}'").strip()


#: What the hand-built VAN's polls tolerate while a route comes up: refused connections,
#: HTTP errors, a status table without the row yet.
PROBE_ERRORS = (AssertionError, OSError, httpx.HTTPError)
settle = functools.partial(wait_for, timeout=20.0, every=0.25, ignoring=PROBE_ERRORS)


def get_models(van: Van) -> dict[str, Any] | None:
    response = httpx.get(van.url, timeout=3.0)
    return response.json() if response.status_code == 200 else None


def router_access(name: str, ports: tuple[int, int], sans: list[str]) -> dict[str, Any]:
    return {
        "apiVersion": "skupper.io/v2alpha1",
        "kind": "RouterAccess",
        "metadata": {"name": name},
        "spec": {
            "roles": [
                {"name": "inter-router", "port": ports[0]},
                {"name": "edge", "port": ports[1]},
            ],
            "tlsCredentials": name,
            "subjectAlternativeNames": sans,
        },
    }


def link(name: str, host: str, ports: tuple[int, int]) -> dict[str, Any]:
    return {
        "apiVersion": "skupper.io/v2alpha1",
        "kind": "Link",
        "metadata": {"name": name},
        "spec": {
            "tlsCredentials": SECRET,
            "cost": 1,
            "endpoints": [
                {"name": "inter-router", "host": host, "port": str(ports[0])},
                {"name": "edge", "host": host, "port": str(ports[1])},
            ],
        },
    }


def sshd_modes() -> list[Any]:
    missing = not Path("/usr/sbin/sshd").exists()
    return [
        "asyncssh",
        pytest.param(
            "openssh",
            marks=pytest.mark.skipif(missing, reason="OpenSSH sshd is not installed"),
        ),
    ]


@pytest.fixture(scope="module", params=router_kinds())
def router_kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="module", params=sshd_modes())
def van(
    request: pytest.FixtureRequest, router_kind: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Van]:
    """A world with nothing built on it yet (the hub's model server runs already)."""
    sshd = request.param
    with running_world(
        tmp_path_factory.mktemp(f"van-{sshd}-{router_kind}"),
        WorldSpec(providers=2, sshd=sshd, kubernetes=False, router=router_kind),
    ) as world:
        yield Van(world, world.addresses[HUB], world.addresses[CONSUMER])


def test_a_hand_built_link_carries_the_model_api(van: Van) -> None:
    # the hub: the provider site, by the §1.6 workflow plus a RouterAccess with explicit ports
    # (one SSH session per step keeps the module quick; each `&&` is one command of §1.6)
    out = van.ok(
        HUB,
        "podman ps --format '{{.Names}}' && skupper system install"
        f" && skupper site create hub -n {HUB_NS}",
    )
    assert "hosted-model" in out.split()
    van.apply(
        HUB,
        HUB_NS,
        [
            router_access(RA, RA_PORTS, [van.hub]),
            # a second access whose certificate does not name the hub's address (test 3)
            router_access(BAD_RA, BAD_RA_PORTS, ["hub.invalid"]),
        ],
    )
    out = van.ok(
        HUB,
        f"skupper connector create model 10000 --host 127.0.0.1 -n {HUB_NS}"
        f" && skupper system start -n {HUB_NS}",
    )
    assert f'Site "hub" has been created on namespace "{HUB_NS}"' in out
    assert "Static links have been defined at:" in out
    certs = f"{NS_DIR}/{HUB_NS}/runtime/certs/client-{RA}"
    files = ("ca.crt", "tls.crt", "tls.key")
    out = van.ok(HUB, f"cd {certs} && for f in {' '.join(files)}; do base64 -w0 $f; echo; done")
    data = dict(zip(files, out.split(), strict=True))
    assert "BEGIN CERTIFICATE" in base64.b64decode(data["tls.crt"]).decode()

    # the consumer: a site, a listener, and the Secret + Link of §3.3
    van.ok(
        CONSUMER,
        f"skupper system install && skupper site create west -n {CONSUMER_NS}"
        f" && skupper listener create model {LISTENER_PORT} -n {CONSUMER_NS}",
    )
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "kubernetes.io/tls",
        "metadata": {"name": SECRET},
        "data": data,
    }
    van.apply(CONSUMER, CONSUMER_NS, [secret, link(LINK, van.hub, RA_PORTS)])
    van.ok(CONSUMER, f"skupper system start -n {CONSUMER_NS}")

    models = settle(lambda: get_models(van), what="the hub's model through the local listener")
    direct = httpx.get(f"http://{van.hub}:10000/v1/models", timeout=3.0).json()
    assert models == direct and models["data"]

    status = settle(
        lambda: (s := van.link_status(LINK)).get("status") == "Ready" and s,
        what="the Link Ready in `skupper link status`",
    )
    assert status["message"] == "OK"

    def matched() -> str | None:
        listener = van.ok(CONSUMER, f"skupper listener status model -n {CONSUMER_NS}")
        return listener if "true" in listener.splitlines()[1] else None  # MATCHING-CONNECTOR

    settle(matched, what="the listener matched in `skupper listener status`")


def test_a_crashed_hub_router_comes_back_by_its_restart_policy(van: Van) -> None:
    # Skupper creates the router with --restart=always; libpod's cleanup callback restarts
    # a container whose process died on its own (docs/sandbox.md section 11, C4).
    router = f"{HUB_NS}-skupper-router"
    assert van.container_state(HUB, router) == "running"
    van.world.fault(HUB, "kill-router")

    fmt = "'{{.State.Status}} {{.RestartCount}} {{.HostConfig.RestartPolicy.Name}}'"
    settle(
        lambda: (
            van.ok(HUB, f"podman inspect {router} --format {fmt}").split()
            == ["running", "1", "always"]
        ),
        what="podman to restart the router",
    )
    assert settle(lambda: get_models(van), what="the route back")["data"]
    settle(lambda: van.link_status(LINK).get("status") == "Ready", what="the Link Ready again")


def test_a_router_killed_with_podman_kill_stays_down_until_started_by_hand(van: Van) -> None:
    router = f"{HUB_NS}-skupper-router"
    assert van.container_state(HUB, router) == "running"
    van.ok(HUB, f"podman kill {router}")

    settle(
        lambda: not port_open(van.consumer, LISTENER_PORT),
        timeout=LISTENER_CLOSE_SECONDS,
        what="the local listener to close",
    )
    status = settle(
        lambda: (s := van.link_status(LINK)).get("status") != "Ready" and s,
        what="the Link not Ready",
    )
    assert status["status"] in ("Pending", "Error")
    # `podman kill` marks the container stopped by the user: its policy no longer applies
    # (a fixed window: it proves the router is NOT restarted, so nothing to wait for)
    end = time.monotonic() + 2.0
    while time.monotonic() < end:
        assert not port_open(van.consumer, LISTENER_PORT)
        time.sleep(0.25)
    fmt = "'{{.State.Status}} {{.State.ExitCode}} {{.HostConfig.RestartPolicy.Name}}'"
    assert van.ok(HUB, f"podman inspect {router} --format {fmt}").split() == [
        "exited",
        "137",
        "always",
    ]

    started = van.ok(HUB, f"podman start {router} && podman inspect {router} --format {fmt}")
    assert started.split()[-3:] == ["running", "0", "always"]
    assert settle(lambda: get_models(van), what="the route back")["data"]
    settle(lambda: van.link_status(LINK).get("status") == "Ready", what="the Link Ready again")


def test_a_link_to_a_name_missing_from_the_sans_fails_verification(van: Van) -> None:
    van.apply(CONSUMER, CONSUMER_NS, [link(BAD_LINK, van.hub, BAD_RA_PORTS)])
    status, out, err = reload_by_hand(lambda command: van.run(CONSUMER, command), CONSUMER_NS)
    assert status == 0, out + err

    link_status = settle(
        lambda: (
            "certificate verify failed" in (s := van.link_status(BAD_LINK)).get("message", "") and s
        ),
        what="the certificate error on the Link",
    )
    assert isinstance(link_status, dict)
    assert link_status["status"] == "Error"
    # the good Link comes back after the reload's restart, the bad one stays failed
    settle(lambda: van.link_status(LINK).get("status") == "Ready", what="the good Link Ready")
    assert settle(lambda: get_models(van), what="the route after the reload")["data"]
    assert van.link_status(BAD_LINK)["status"] != "Ready"
    table = van.ok(CONSUMER, f"skupper link status -n {CONSUMER_NS}")
    row = next(line for line in table.splitlines() if line.strip().startswith(BAD_LINK))
    assert "certificate verify failed" in row
    # the same failure in the router's own log
    logs = van.ok(CONSUMER, f"podman logs {CONSUMER_NS}-skupper-router 2>&1")
    assert "certificate verify failed" in logs


def test_start_twice_missing_secret_and_teardown(van: Van) -> None:
    status, out, err = van.run(HUB, f"skupper system start -n {HUB_NS}")
    assert status != 0
    assert f"namespace already exists: {HUB_NS}" in out + err

    orphan = link("link-without-secret", van.hub, RA_PORTS)
    orphan["spec"]["tlsCredentials"] = "no-such-secret"
    van.apply(CONSUMER, CONSUMER_NS, [orphan])
    status, out, err = van.run(CONSUMER, f"skupper system reload -n {CONSUMER_NS}")
    assert status != 0
    assert 'invalid link "link-without-secret": secret "no-such-secret" not found' in out + err
    assert get_models(van), "a rejected reload must leave the running site alone"

    status, out, err = stop_by_hand(lambda command: van.run(CONSUMER, command), CONSUMER_NS, NS_DIR)
    assert status == 0, out + err
    assert f'Namespace "{CONSUMER_NS}" has been removed' in out or (
        f"/{CONSUMER_NS}/runtime/resources: directory not empty" in out
    )
    settle(
        lambda: not port_open(van.consumer, LISTENER_PORT),
        timeout=LISTENER_CLOSE_SECONDS,
        what="the local listener to close",
    )
    # the controller (still installed, polling every second) must not bring it back (a
    # fixed window over two of its polls: it proves something does NOT happen)
    home = van.world.layout.host_dir(CONSUMER) / "home" / NS_DIR.removeprefix("~/")
    end = time.monotonic() + 2.5
    while time.monotonic() < end:
        assert not (home / CONSUMER_NS).exists(), "the namespace directory came back"
        time.sleep(0.1)
    assert van.run(CONSUMER, f"test -e {NS_DIR}/{CONSUMER_NS}")[0] == 1
    left = van.ok(CONSUMER, "podman ps -a --format '{{.Names}}'; ls ~/.config/systemd/user/")
    assert f"{CONSUMER_NS}-skupper-router" not in left.split()
    assert f"skupper-{CONSUMER_NS}.service" not in left.split()
    user = van.ok(CONSUMER, "id -un").strip()  # the host's own user names the controller
    assert f"{user}-skupper-controller" in left.split()  # the controller stays installed
