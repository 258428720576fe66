"""KubeConnector with the real kubernetes client against a small API on 127.204.0.200."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

from skupper_mcp.connectors.kube import KubeConnector
from skupper_mcp.errors import ConnectError, KubeError, SiteConfigError
from sshkit import free_port

ADDRESS = "127.204.0.200"
TOKEN = "sandbox-token"
CUSTOM = "/apis/skupper.io/v2alpha1/namespaces/"
CORE = "/api/v1/namespaces/"


class FakeApi(ThreadingHTTPServer):
    """Just enough of the Kubernetes API: /version, namespaced skupper.io objects and
    Secrets (get, list with label selectors, create, replace, delete; a
    Secret's type cannot change)."""

    def __init__(self) -> None:
        super().__init__((ADDRESS, 0), _Handler)
        self.objects: dict[str, dict[str, Any]] = {}
        self.token = TOKEN
        self.requests: list[str] = []
        self.version = 0
        self.logs: dict[str, bytes] = {}  # pod name -> its container's output


class _Handler(BaseHTTPRequestHandler):
    server: FakeApi

    def log_message(self, *args: object) -> None:
        pass

    def _send(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _status(self, code: int, message: str) -> None:
        self._send(code, {"kind": "Status", "status": "Failure", "message": message, "code": code})

    def _body(self) -> dict[str, Any]:
        length = int(self.headers.get("Content-Length") or 0)
        result: dict[str, Any] = json.loads(self.rfile.read(length) or b"{}")
        return result

    def _handle(self) -> None:
        path, _, query = self.path.partition("?")
        path = path.rstrip("/")
        self.server.requests.append(f"{self.command} {path}")
        if self.headers.get("Authorization") != f"Bearer {self.server.token}":
            self._status(401, "Unauthorized")
            return
        if path == "/version":
            # The client validates every VersionInfo field.
            fields = ("buildDate", "compiler", "gitCommit", "gitTreeState", "goVersion", "platform")
            version = {"major": "1", "minor": "30", "gitVersion": "v1.30.2"}
            self._send(200, version | {field: "x" for field in fields})
            return
        if not path.startswith((CUSTOM, CORE)):
            self._status(404, "the server could not find the requested resource")
            return
        if path.startswith(CORE) and path.endswith("/log"):
            self._log(path.split("/")[-2], query)
            return
        parts = path.split("/")
        # .../namespaces/<ns>/<plural>[/<name>]
        if path.startswith(CORE):
            collection, name = (path, None) if len(parts) == 6 else ("/".join(parts[:6]), parts[6])
        else:
            collection, name = (path, None) if len(parts) == 7 else ("/".join(parts[:7]), parts[7])
        self._serve(collection, name, query)

    def _serve(self, collection: str, name: str | None, query: str) -> None:
        store = self.server.objects
        key = f"{collection}/{name}"
        if self.command == "GET" and name is None:
            selector = dict(
                pair.split("=", 1)
                for part in query.split("&")
                if part.startswith("labelSelector=")
                for pair in [part.split("=", 1)[1].replace("%3D", "=")]
            )
            items = [
                obj
                for k, obj in store.items()
                if k.rsplit("/", 1)[0] == collection
                and all(obj["metadata"].get("labels", {}).get(a) == b for a, b in selector.items())
            ]
            self._send(200, {"kind": "List", "items": items, "metadata": {}})
        elif self.command == "GET":
            if key in store:
                self._send(200, store[key])
            else:
                self._status(404, f"{name} not found")
        elif self.command == "POST":
            body = self._body()
            key = f"{collection}/{body['metadata']['name']}"
            if key in store:
                self._status(409, "already exists")
                return
            self._save(key, body, 201)
        elif self.command == "PUT":
            if key not in store:
                self._status(404, f"{name} not found")
                return
            body = self._body()
            if body["metadata"].get("resourceVersion") != store[key]["metadata"]["resourceVersion"]:
                self._status(409, "the object has been modified")
                return
            kept = store[key].get("type", "Opaque")
            if collection.endswith("/secrets") and body.get("type", "Opaque") != kept:
                # as ValidateSecretUpdate (pkg/apis/core/validation/validation.go)
                self._status(422, f'type: Invalid value: "{body.get("type")}": field is immutable')
                return
            self._save(key, body, 200)
        elif self.command == "DELETE":
            if store.pop(key, None) is None:
                self._status(404, f"{name} not found")
            else:
                self._send(200, {"kind": "Status", "status": "Success"})

    def _log(self, pod: str, query: str) -> None:
        self.server.requests.append(f"log {query}")
        data = self.server.logs.get(pod)
        if data is None:
            self._status(404, f'pods "{pod}" not found')
            return
        options = dict(part.split("=", 1) for part in query.split("&") if "=" in part)
        if "tailLines" in options:
            data = b"".join(data.splitlines(keepends=True)[-int(options["tailLines"]) :])
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _save(self, key: str, body: dict[str, Any], status: int) -> None:
        self.server.version += 1
        body["metadata"]["resourceVersion"] = str(self.server.version)
        self.server.objects[key] = body
        self._send(status, body)

    do_GET = do_POST = do_PUT = do_DELETE = _handle


def write_kubeconfig(path: Path, server: str, token: str = TOKEN) -> Path:
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": {"server": server}}],
                "users": [{"name": "u", "user": {"token": token}}],
                "contexts": [
                    {
                        "name": "crc-admin",
                        "context": {"cluster": "c", "user": "u", "namespace": "van"},
                    }
                ],
                "current-context": "crc-admin",
            }
        )
    )
    return path


@pytest.fixture
def api() -> Iterator[FakeApi]:
    server = FakeApi()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture
def kubeconfig(api: FakeApi, tmp_path: Path) -> Path:
    return write_kubeconfig(tmp_path / "kubeconfig", f"http://{ADDRESS}:{api.server_port}")


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
        assert await kube.check_access() == "v1.30.2"
    finally:
        await kube.close()


async def test_expired_token_is_kube_error_401_saying_to_log_in(
    api: FakeApi, kubeconfig: Path
) -> None:
    api.token = "rotated"
    kube = KubeConnector(kubeconfig, "crc-admin", timeout=5)
    try:
        with pytest.raises(KubeError) as raised:
            await kube.check_access("van")
    finally:
        await kube.close()
    assert raised.value.status == 401
    assert "oc login" in str(raised.value)


async def test_api_that_is_down_is_a_connect_error(tmp_path: Path) -> None:
    port = free_port(ADDRESS)
    config = write_kubeconfig(tmp_path / "kubeconfig", f"http://{ADDRESS}:{port}")
    kube = KubeConnector(config, "crc-admin", timeout=2)
    try:
        with pytest.raises(ConnectError) as raised:
            await kube.list("sites")
    finally:
        await kube.close()
    assert raised.value.host == "crc-admin"
    assert "connection refused" in str(raised.value)


async def test_unknown_context_names_crc_context_and_the_known_ones(kubeconfig: Path) -> None:
    kube = KubeConnector(kubeconfig, "no-such-context")
    with pytest.raises(SiteConfigError, match="no context 'no-such-context'") as raised:
        await kube.list("sites")
    assert raised.value.variable == "CRC_CONTEXT" and "crc-admin" in str(raised.value)


async def test_a_missing_kubeconfig_names_crc_kubeconfig(tmp_path: Path) -> None:
    kube = KubeConnector(tmp_path / "nowhere", "crc-admin")
    with pytest.raises(SiteConfigError, match="does not exist") as raised:
        await kube.list("sites")
    assert raised.value.variable == "CRC_KUBECONFIG" and raised.value.host == "crc"


async def test_custom_objects_round_trip(api: FakeApi, kubeconfig: Path) -> None:
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
    assert all("/namespaces/van/" in r for r in api.requests if "namespaces" in r)


async def test_secrets_apply_only_when_the_data_changes(kubeconfig: Path) -> None:
    secret = {
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
    api: FakeApi, kubeconfig: Path
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
    assert api.requests[:3] == [f"GET {secret}", f"DELETE {secret}", f"POST {CORE}van/secrets"]


async def test_a_pod_log_keeps_its_newest_bytes_and_survives_bytes_that_are_not_utf8(
    api: FakeApi, kubeconfig: Path
) -> None:
    lines = [f"line {n}\n".encode() for n in range(5000)]
    api.logs["skupper-router-abcde"] = b"".join(lines) + b"bad \xff byte\n"
    connector = KubeConnector(kubeconfig)
    try:
        short, cut = await connector.read_pod_log(
            "skupper-router-abcde", container="router", tail_lines=3, max_bytes=1000
        )
        assert (short, cut) == ("line 4998\nline 4999\nbad \ufffd byte\n", False)
        assert "log container=router&tailLines=3" in api.requests
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
