"""KubeConnector with the real kubernetes client against the sandbox's Kubernetes API
(the one every sandbox world runs), served in-process on 127.204.0.200."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
import time
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
import yaml

from skupper_mcp.connectors.kube import KubeConnector
from skupper_mcp.errors import (
    KUBE_REASON_CHARS,
    ConnectError,
    Kind,
    KubeBoundError,
    KubeError,
    SiteConfigError,
)
from skupper_sandbox.kube import resources
from skupper_sandbox.kube.httpserver import Request, Response
from skupper_sandbox.kube.kubeconfig import ApiCredentials, ensure_credentials, render_kubeconfig
from skupper_sandbox.kube.pods import LOG_FILE, pod_dir
from skupper_sandbox.kube.server import KUBERNETES_VERSION, KubeApi
from skupper_sandbox.kube.store import Store
from sshkit import free_port

T = TypeVar("T")
E = TypeVar("E", bound=BaseException)
ADDRESS = "127.204.0.200"
NAMESPACE = "van"
CORE = "/api/v1/namespaces/"


class RecordingApi(KubeApi):
    """The sandbox's API, noting each request it answers: (method, path, query)."""

    def __init__(self, kube_dir: Path, credentials: ApiCredentials, port: int) -> None:
        self.kube_dir = kube_dir
        self.credentials = credentials
        self.requests: list[tuple[str, str, dict[str, str]]] = []
        super().__init__(Store(), credentials, ADDRESS, port, kube_dir / "pods")
        self.store.create(resources.NAMESPACES, None, {"metadata": {"name": NAMESPACE}})

    async def handle(self, request: Request) -> Response:
        self.requests.append((request.method, request.path, request.query))
        return await super().handle(request)

    def paths(self) -> list[str]:
        return [f"{method} {path}" for method, path, _ in self.requests]

    def add_pod(self, name: str, log: bytes) -> None:
        """A pod with one container, ``router``, that has written ``log``."""
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name},
            "spec": {"containers": [{"name": "router", "image": "skupper-router"}]},
        }
        self.store.create(resources.PODS, NAMESPACE, pod)
        where = pod_dir(self.kube_dir / "pods", name)
        where.mkdir(parents=True)
        (where / LOG_FILE).write_bytes(log)


async def closed_after(kube: KubeConnector, call: Coroutine[Any, Any, Any], error: type[E]) -> E:
    """The ``error`` that ``call`` on ``kube`` ends in (any other fails the test); ``kube``
    closed after it either way."""
    try:
        with pytest.raises(error) as raised:
            await call
    finally:
        await kube.close()
    return raised.value


def write_kubeconfig(path: Path, credentials: ApiCredentials, token: str | None = None) -> Path:
    """The sandbox's kubeconfig for ``credentials`` (context ``crc-admin``), its namespace
    ``van`` and, when given, another bearer token."""
    config = yaml.safe_load(credentials.kubeconfig.read_text())
    if token is not None:
        server = config["clusters"][0]["cluster"]["server"]
        ca = credentials.ca_cert.read_bytes()
        config = yaml.safe_load(render_kubeconfig(server, ca, token))
    config["contexts"][0]["context"]["namespace"] = NAMESPACE
    path.write_text(yaml.safe_dump(config))
    return path


@pytest.fixture
def api(tmp_path: Path) -> Iterator[RecordingApi]:
    """The sandbox's API on an event loop of its own (the client blocks its callers)."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()

    def call(coroutine: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, loop).result(10)

    port = free_port(ADDRESS)
    kube_dir = tmp_path / "kube"
    server = RecordingApi(kube_dir, ensure_credentials(kube_dir, ADDRESS, port), port)
    try:
        call(server.apply_fault(None))  # no fault: listening
        yield server
    finally:
        call(server.stop())
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=5)
        loop.close()


@pytest.fixture
def kubeconfig(api: RecordingApi, tmp_path: Path) -> Path:
    return write_kubeconfig(tmp_path / "kubeconfig", api.credentials)


def site(name: str, spec: dict[str, Any], labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "skupper.io/v2alpha1",
        "kind": "Site",
        "metadata": {"name": name, "labels": labels or {}},
        "spec": spec,
    }


async def test_check_access_returns_the_server_version(kubeconfig: Path) -> None:
    kube = KubeConnector(kubeconfig, "crc-admin", timeout=5)
    try:
        assert await kube.check_access() == KUBERNETES_VERSION["gitVersion"]
    finally:
        await kube.close()


async def test_expired_token_is_kube_error_401_saying_to_log_in(
    api: RecordingApi, tmp_path: Path
) -> None:
    stale = write_kubeconfig(tmp_path / "stale", api.credentials, token="sha256~rotated")
    kube = KubeConnector(stale, "crc-admin", timeout=5)
    error = await closed_after(kube, kube.check_access("van"), KubeError)
    assert error.status == 401
    assert error.kind is Kind.REFUSED  # the API answered: not unreachable
    assert "oc login" in str(error)


async def test_api_that_is_down_is_a_connect_error(tmp_path: Path) -> None:
    # the API's credentials and kubeconfig for a port nothing listens on
    credentials = ensure_credentials(tmp_path / "kube", ADDRESS, free_port(ADDRESS))
    config = write_kubeconfig(tmp_path / "kubeconfig", credentials)
    kube = KubeConnector(config, "crc-admin", timeout=2)
    error = await closed_after(kube, kube.list("sites"), ConnectError)
    assert error.host == "crc-admin"
    assert "connection refused" in str(error)
    assert error.kind is Kind.CONNECT


async def test_unknown_context_names_crc_context_and_the_known_ones(kubeconfig: Path) -> None:
    kube = KubeConnector(kubeconfig, "no-such-context")
    with pytest.raises(SiteConfigError, match="no context 'no-such-context'") as raised:
        await kube.list("sites")
    assert raised.value.variable == "CRC_CONTEXT" and "crc-admin" in str(raised.value)
    assert raised.value.kind is Kind.CONFIG


async def test_a_missing_kubeconfig_names_crc_kubeconfig(tmp_path: Path) -> None:
    kube = KubeConnector(tmp_path / "nowhere", "crc-admin")
    with pytest.raises(SiteConfigError, match="does not exist") as raised:
        await kube.list("sites")
    assert raised.value.variable == "CRC_KUBECONFIG" and raised.value.host == "crc"


async def test_custom_objects_round_trip(api: RecordingApi, kubeconfig: Path) -> None:
    kube = KubeConnector(kubeconfig, "crc-admin", timeout=5)
    try:
        assert await kube.apply("sites", site("crc", {"linkAccess": "default"}, {"a": "1"}))
        assert not await kube.apply("sites", site("crc", {"linkAccess": "default"}, {"a": "1"}))
        assert await kube.apply("sites", site("crc", {"linkAccess": "none"}, {"a": "1"}))
        assert await kube.apply("sites", site("other", {}, {"a": "2"}))
        got = await kube.get("sites", "crc")
        assert got["spec"] == {"linkAccess": "none"}
        assert [s["metadata"]["name"] for s in await kube.list("sites", "a=2")] == ["other"]
        assert len(await kube.list("sites")) == 2
        assert await kube.delete("sites", "crc")
        assert not await kube.delete("sites", "crc")
        with pytest.raises(KubeError) as raised:
            await kube.get("sites", "crc")
        assert raised.value.status == 404
    finally:
        await kube.close()
    # The context's namespace is the default for every call.
    assert all("/namespaces/van/" in r for r in api.paths() if "namespaces" in r)


async def test_secrets_apply_only_when_the_data_changes(kubeconfig: Path) -> None:
    secret: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "kubernetes.io/tls",
        "metadata": {"name": "link-rhel-ai"},
        "data": {"ca.crt": "Y2E=", "tls.crt": "Y3J0", "tls.key": "a2V5"},
    }
    kube = KubeConnector(kubeconfig, "crc-admin", timeout=5)
    try:
        assert await kube.apply_secret(secret)
        assert not await kube.apply_secret(secret)
        assert await kube.apply_secret({**secret, "data": {**secret["data"], "tls.crt": "bmV3"}})
        assert (await kube.get_secret("link-rhel-ai"))["data"]["tls.crt"] == "bmV3"
        assert await kube.delete_secret("link-rhel-ai")
        assert not await kube.delete_secret("link-rhel-ai")
    finally:
        await kube.close()


async def test_a_secret_of_another_type_is_deleted_and_created_as_the_api_wants(
    api: RecordingApi, kubeconfig: Path
) -> None:
    data = {"ca.crt": "Y2E=", "tls.crt": "Y3J0", "tls.key": "a2V5"}
    opaque = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "link-x"}, "data": data}
    tls = {**opaque, "type": "kubernetes.io/tls"}
    kube = KubeConnector(kubeconfig, "crc-admin", timeout=5)
    try:
        assert await kube.apply_secret(opaque)
        api.requests.clear()
        assert await kube.apply_secret(tls)
        assert (await kube.get_secret("link-x"))["type"] == "kubernetes.io/tls"
        assert not await kube.apply_secret(tls)
    finally:
        await kube.close()
    secret = f"{CORE}van/secrets/link-x"
    assert api.paths()[:3] == [f"GET {secret}", f"DELETE {secret}", f"POST {CORE}van/secrets"]


async def test_the_sites_read_gets_each_secret_it_needs_once_by_name_keys_dropped(
    api: RecordingApi, kubeconfig: Path
) -> None:
    """The cluster site's state reads the Secrets it needs by the names the controller
    gives its CA and server Secrets (internal/kube/site/site.go@2.2.1) and ours to the link
    Secrets, one GET each: never a list of the namespace's Secrets, never a link Secret
    twice. Status and diagnose keep only the public files (no ``tls.key`` leaves the
    connector); setup's read keeps a link Secret's data whole."""
    from skupper_mcp.sites.kube import ClusterSite

    data = {"ca.crt": "Y2E=", "tls.crt": "Y3J0", "tls.key": "a2V5"}
    made = {
        "link-a": "kubernetes.io/tls",
        "link-b": "Opaque",
        "skupper-site-ca": "kubernetes.io/tls",
        "unrelated": "Opaque",
    }
    kube = KubeConnector(kubeconfig, "crc-admin", timeout=5)
    try:
        for name, kind in made.items():
            secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name}}
            assert await kube.apply_secret({**secret, "type": kind, "data": data})
        cluster = ClusterSite(kube, NAMESPACE, secret_names=("link-a", "link-b"))
        api.requests.clear()
        state = await cluster.read()
        asked = [p for p in api.paths() if "/secrets" in p]
        whole = await cluster.read(secret_data=True)
    finally:
        await kube.close()
    wanted = ["link-a", "link-b", "skupper-local-ca", "skupper-local-server", "skupper-site-ca"]
    wanted += ["skupper-site-server"]
    assert sorted(asked) == [f"GET {CORE}{NAMESPACE}/secrets/{n}" for n in wanted], asked
    assert {n: s["type"] for n, s in state.secrets.items()} == {
        "link-a": "kubernetes.io/tls",
        "link-b": "Opaque",
    }
    assert state.secrets["link-a"]["metadata"]["name"] == "link-a"
    assert "a2V5" not in repr(state), state  # no key kept
    assert whole.secrets["link-a"]["data"] == data  # setup compares the whole


async def test_a_pod_log_keeps_its_newest_bytes_and_survives_bytes_that_are_not_utf8(
    api: RecordingApi, kubeconfig: Path
) -> None:
    lines = [f"line {n}\n".encode() for n in range(5000)]
    api.add_pod("skupper-router-abcde", b"".join(lines) + b"bad \xff byte\n")
    connector = KubeConnector(kubeconfig)
    try:
        short, cut = await connector.read_pod_log(
            "skupper-router-abcde", container="router", tail_lines=3, max_bytes=1000
        )
        assert (short, cut) == ("line 4998\nline 4999\nbad \ufffd byte\n", False)
        log = f"{CORE}van/pods/skupper-router-abcde/log"
        assert ("GET", log, {"container": "router", "tailLines": "3"}) in api.requests
        long, cut = await connector.read_pod_log(
            "skupper-router-abcde", tail_lines=5001, max_bytes=1000
        )
        assert cut and long.endswith("line 4999\nbad \ufffd byte\n")
        assert len(long.encode()) <= 1000 + 2  # the bad byte came back as U+FFFD: 3 bytes
        with pytest.raises(KubeError) as missing:
            await connector.read_pod_log("skupper-router-zzzzz", tail_lines=3, max_bytes=1000)
        assert missing.value.status == 404
    finally:
        await connector.close()


# ---- bounds: a hostile API server (issue 31) -----------------------------------------

HOSTILE_TIMEOUT = 2.0


@pytest.fixture
def hostile(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[tuple[Any, Path]]:
    """A hostile API server in the mode the test is parametrized with, and its kubeconfig."""
    from hostile_kube_server import HostileKubeApi, kubeconfig_for

    port = free_port(ADDRESS)
    credentials = ensure_credentials(tmp_path / "hostile", ADDRESS, port)
    server = HostileKubeApi(credentials, ADDRESS, port, request.param)
    try:
        yield server, kubeconfig_for(credentials, tmp_path / "hostile-kubeconfig")
    finally:
        server.stop()


async def _bounded(kube: KubeConnector, call: Coroutine[Any, Any, Any]) -> tuple[Any, float]:
    """The error ``call`` ends in, and how long it took; a call that outlives four times
    the connector's timeout fails the test (today's main kept reading for minutes)."""
    started = time.monotonic()
    error = await closed_after(kube, asyncio.wait_for(call, HOSTILE_TIMEOUT * 4), KubeError)
    return error, time.monotonic() - started


@pytest.mark.parametrize("hostile", ["trickle", "trickle-head"], indirect=True)
async def test_a_trickling_answer_ends_at_the_deadline_of_the_whole_call(
    hostile: tuple[Any, Path],
) -> None:
    server, config = hostile
    kube = KubeConnector(config, "crc-admin", timeout=HOSTILE_TIMEOUT)
    error, seconds = await _bounded(kube, kube.list_pods())
    assert isinstance(error, KubeBoundError) and error.bound == "deadline"
    assert error.kind is Kind.TIMEOUT
    assert f"no complete answer within {HOSTILE_TIMEOUT:g}s" in str(error)
    assert "list pods in namespace van" in str(error)
    assert seconds < HOSTILE_TIMEOUT + 3.0
    assert server.requests == 1  # one call, not retried past its deadline


@pytest.mark.parametrize("hostile", ["deep"], indirect=True)
@pytest.mark.parametrize("call", ["list", "list_pods", "read_secret"])
async def test_a_nested_answer_is_the_calls_error_not_a_recursion(
    hostile: tuple[Any, Path], call: str
) -> None:
    # issue 43: 2 KB of [[[[...]]]] raised RecursionError out of the client's json.loads
    _, config = hostile
    kube = KubeConnector(config, "crc-admin", timeout=HOSTILE_TIMEOUT)
    method = getattr(kube, call)
    args = {"list": ("sites",), "read_secret": ("link-x", None)}.get(call, ())
    error, _ = await _bounded(kube, method(*args))
    assert "nests 1000 levels deep" in str(error), error
    assert isinstance(error, KubeError) and error.kind is Kind.PARSE


@pytest.mark.parametrize("hostile", ["gzip"], indirect=True)
async def test_a_compressed_answer_is_not_unpacked(hostile: tuple[Any, Path]) -> None:
    import tracemalloc

    # issue 43: urllib3 unpacked a gzip answer that was never asked for, past the byte cap
    _, config = hostile
    kube = KubeConnector(config, "crc-admin", timeout=HOSTILE_TIMEOUT)
    await kube._client()  # the client built before the measure: its imports are not the answer's
    tracemalloc.start()
    try:
        error, _ = await _bounded(kube, kube.list_pods())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 * 1024 * 1024, peak  # the 64 MiB it unpacks to was never held
    assert "list pods in namespace van: the answer is not JSON" in str(error), error


@pytest.mark.parametrize("hostile", ["endless"], indirect=True)
async def test_an_endless_answer_is_cut_at_the_size_cap(hostile: tuple[Any, Path]) -> None:
    _, config = hostile
    kube = KubeConnector(config, "crc-admin", timeout=HOSTILE_TIMEOUT * 3, max_bytes=1 << 20)
    error, seconds = await _bounded(kube, kube.list_pods())
    assert isinstance(error, KubeBoundError) and error.bound == "size"
    assert "passed 1 MiB and was cut off" in str(error)
    assert seconds < HOSTILE_TIMEOUT * 3


@pytest.mark.parametrize("hostile", ["endless"], indirect=True)
async def test_an_endless_answer_ends_at_the_deadline_even_without_the_cap(
    hostile: tuple[Any, Path],
) -> None:
    # the pod log has no byte cap of the budget's (it keeps the newest bytes itself)
    _, config = hostile
    kube = KubeConnector(config, "crc-admin", timeout=HOSTILE_TIMEOUT)
    error, seconds = await _bounded(
        kube, kube.read_pod_log("p", tail_lines=10, max_bytes=1000, namespace="van")
    )
    assert isinstance(error, KubeBoundError) and error.bound == "deadline"
    assert seconds < HOSTILE_TIMEOUT + 3.0


@pytest.mark.parametrize("hostile", ["long-error"], indirect=True)
async def test_a_long_error_message_is_cut_and_says_so(hostile: tuple[Any, Path]) -> None:
    _, config = hostile
    kube = KubeConnector(config, "crc-admin", timeout=HOSTILE_TIMEOUT)
    error, _ = await _bounded(kube, kube.list("sites"))
    assert error.status == 500 and not isinstance(error, KubeBoundError)
    assert len(str(error)) < KUBE_REASON_CHARS + 200
    assert "more characters cut)" in str(error)


async def test_a_bounded_connection_still_serves_the_honest_api(
    api: RecordingApi, kubeconfig: Path
) -> None:
    # many calls over the pooled, bounded connections: each budget is its own call's
    kube = KubeConnector(kubeconfig, "crc-admin", timeout=5, max_bytes=64 * 1024)
    try:
        for n in range(20):
            assert await kube.apply("sites", site(f"s{n}", {}, {"n": str(n)}))
        assert len(await kube.list("sites")) == 20
    finally:
        await kube.close()


# ---- credential plugins run only from a kubeconfig the user named (issue 31) ----------


def exec_kubeconfig(api: RecordingApi, folder: Path) -> tuple[Path, Path]:
    """A kubeconfig in ``folder`` whose user gets the API's token from an exec plugin that
    also leaves a mark: (the kubeconfig, the mark)."""
    mark = folder / "plugin-ran"
    plugin = folder / "credential-plugin"
    credential = {
        "apiVersion": "client.authentication.k8s.io/v1beta1",
        "kind": "ExecCredential",
        "status": {"token": api.credentials.token},
    }
    plugin.write_text(f"#!/bin/sh\ntouch {mark}\necho '{json.dumps(credential)}'\n")
    plugin.chmod(0o755)
    config = yaml.safe_load(write_kubeconfig(folder / "kubeconfig", api.credentials).read_text())
    config["users"][0]["user"] = {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1beta1",
            "command": str(plugin),
            "interactiveMode": "Never",
        }
    }
    (folder / "kubeconfig").write_text(yaml.safe_dump(config))
    return folder / "kubeconfig", mark


async def test_an_exec_plugin_runs_from_a_kubeconfig_named_by_its_path(
    api: RecordingApi, tmp_path: Path
) -> None:
    config, mark = exec_kubeconfig(api, tmp_path)
    kube = KubeConnector(config, "crc-admin", timeout=5)
    try:
        assert await kube.list("sites") == []
    finally:
        await kube.close()
    assert mark.exists()


async def test_an_exec_plugin_of_a_relative_kubeconfig_entry_never_runs(
    api: RecordingApi, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # $KUBECONFIG=kubeconfig names a file in whatever folder the command runs from
    folder = tmp_path / "cloned-repository"
    folder.mkdir()
    _, mark = exec_kubeconfig(api, folder)
    monkeypatch.chdir(folder)
    monkeypatch.setenv("KUBECONFIG", "kubeconfig")
    kube = KubeConnector(None, "crc-admin", timeout=5)
    error = await closed_after(kube, kube.list("sites"), SiteConfigError)
    assert not mark.exists()
    assert "credential-plugin` (the exec plugin of user" in str(error)
    assert "it was not run" in str(error)


@pytest.mark.spawns
def test_the_kubernetes_client_is_never_imported_on_the_event_loop(kubeconfig: Path) -> None:
    """The client's import (1.5 s of CPU, its API classes loaded on first use) runs in the
    connector's worker thread: on the loop it held every other site's work, and on a busy
    machine SSH channels to live hosts missed their 5 s deadline behind it
    (docs/sandbox.md 4a). A fresh interpreter, so that nothing is imported yet."""
    script = Path(__file__).resolve().parent / "loop_imports.py"
    done = subprocess.run(
        [sys.executable, str(script), str(kubeconfig)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == []
