"""The emulated skupper CLI: rendering, validation, the commands a user runs, the controller."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from hostkit import HostKit, hub_resources, running_host
from skupper_sandbox import certs
from skupper_sandbox.emulated import controller
from skupper_sandbox.emulated.skupper import render, site_state
from skupper_sandbox.emulated.skupper.paths import NamespacePaths, data_home
from skupper_sandbox.emulated.skupper.table import tab_table

ADDRESS = "127.205.0.2"

HUB_INPUT = hub_resources("hub-a", ADDRESS, (8000, 8001))


@pytest.fixture
def host(tmp_path: Path) -> Iterator[HostKit]:
    with running_host(tmp_path, "hub", ADDRESS, skupper_version="2.1.3") as kit:
        yield kit


def ns_paths(kit: HostKit, namespace: str = "default") -> NamespacePaths:
    return NamespacePaths(data_home({"HOME": str(kit.home)}), namespace)


def test_tab_table_pads_like_go_tabwriter() -> None:
    table = tab_table([("COMPONENT", "VERSION"), ("router", "3.4.2"), ("origin-oauth-proxy", "x")])
    assert table.splitlines() == [
        "COMPONENT\t\tVERSION",
        "router\t\t\t3.4.2",
        "origin-oauth-proxy\tx",
    ]


def test_version_prints_the_component_table(host: HostKit) -> None:
    done = host.skupper("version", platform=False)
    assert done.returncode == 0, done.stderr
    rows = [line.split() for line in done.stdout.splitlines()]
    assert rows[0] == ["COMPONENT", "VERSION"]
    assert ["router", "3.4.2"] in rows
    assert ["controller", "2.1.3"] in rows and ["cli", "2.1.3"] in rows


def test_without_platform_resource_commands_fail_like_kubernetes(host: HostKit) -> None:
    done = host.skupper("site", "create", "west", platform=False)
    assert done.returncode == 1
    assert "KUBERNETES_MASTER" in done.stdout
    assert not ns_paths(host).home.exists()


def test_create_commands_write_input_resources(host: HostKit) -> None:
    assert (
        host.skupper("site", "create", "west", "--enable-link-access", "-n", "west").returncode == 0
    )
    assert host.skupper("listener", "create", "db", "5432", "-n", "west").returncode == 0
    done = host.skupper("connector", "create", "db", "5432", "--routing-key", "k", "-n", "west")
    assert done.returncode == 0, done.stderr
    inputs = ns_paths(host, "west").input_resources
    names = sorted(p.name for p in inputs.iterdir())
    assert names == [
        "Connector-db.yaml",
        "Listener-db.yaml",
        "RouterAccess-router-access-west.yaml",
        "Site-west.yaml",
    ]
    listener = yaml.safe_load((inputs / "Listener-db.yaml").read_text())
    assert listener["spec"] == {"routingKey": "db", "host": "0.0.0.0", "port": 5432, "type": "tcp"}
    connector = yaml.safe_load((inputs / "Connector-db.yaml").read_text())
    assert connector["spec"]["host"] == "localhost" and connector["spec"]["routingKey"] == "k"
    status = host.skupper("listener", "status", "-n", "west")
    assert status.stdout.split()[:7] == [
        "NAME",
        "STATUS",
        "ROUTING-KEY",
        "HOST",
        "PORT",
        "MATCHING-CONNECTOR",
        "MESSAGE",
    ]
    assert "db" in status.stdout
    assert host.skupper("listener", "delete", "db", "-n", "west").returncode == 0
    assert not (inputs / "Listener-db.yaml").exists()


def test_short_routing_key_flag_was_removed(host: HostKit) -> None:
    done = host.skupper("listener", "create", "db", "5432", "-r", "k")
    assert done.returncode == 1


def test_apply_and_delete_store_one_file_per_resource(host: HostKit) -> None:
    done = host.skupper("system", "apply", "-f", "-", stdin=HUB_INPUT)
    assert done.returncode == 0, done.stderr
    inputs = ns_paths(host).input_resources
    assert sorted(p.name for p in inputs.iterdir()) == [
        "Connector-model-api.yaml",
        "RouterAccess-hub-a-public.yaml",
        "Site-hub-a.yaml",
    ]
    site = yaml.safe_load((inputs / "Site-hub-a.yaml").read_text())
    assert site["metadata"]["namespace"] == "default"
    doc = "apiVersion: skupper.io/v2alpha1\nkind: Connector\nmetadata: {name: model-api}\n"
    assert host.skupper("system", "delete", "-f", "-", stdin=doc).returncode == 0
    assert not (inputs / "Connector-model-api.yaml").exists()
    bad = host.skupper("system", "apply", "-f", "-", stdin="kind: Pod\nmetadata: {name: x}\n")
    assert bad.returncode == 1 and "Pod" in bad.stdout


def test_start_without_sources_fails(host: HostKit) -> None:
    done = host.skupper("system", "start", "-n", "empty")
    assert done.returncode == 1
    assert "No sources found at:" in done.stdout


def test_render_writes_layout_certs_links_and_router_config(host: HostKit) -> None:
    paths = ns_paths(host)
    paths.input_resources.mkdir(parents=True)
    (paths.input_resources / "all.yaml").write_text(HUB_INPUT)
    state = site_state.load(paths)
    rendered = render.render(paths, state, cli_version="2.1.3", platform="podman")

    for ca in ("skupper-site-ca", "skupper-local-ca", "skupper-service-ca"):
        assert (paths.issuers / ca / "tls.crt").is_file()
    server = paths.certs / "hub-a-public"
    assert {"127.205.0.2", "hub-a.example.com"} <= set(
        certs.dns_sans((server / "tls.crt").read_bytes())
    )
    client = paths.certs / "client-hub-a-public"
    assert {p.name for p in client.iterdir()} == {"ca.crt", "tls.crt", "tls.key", "connect.json"}
    assert sorted(p.name for p in paths.links.iterdir()) == [
        "link-hub-a-public-127.0.0.1.yaml",
        "link-hub-a-public-127.205.0.2.yaml",
        "link-hub-a-public-hub-a.example.com.yaml",
    ]
    assert rendered.link_files
    secret, link = yaml.safe_load_all(
        (paths.links / "link-hub-a-public-127.205.0.2.yaml").read_text()
    )
    assert secret["kind"] == "Secret" and secret["metadata"]["name"] == "link-hub-a-public"
    assert base64.b64decode(secret["data"]["tls.crt"]) == (client / "tls.crt").read_bytes()
    assert link["spec"]["endpoints"] == [
        {"name": "inter-router", "host": "127.205.0.2", "port": "8000"},
        {"name": "edge", "host": "127.205.0.2", "port": "8001"},
    ]

    config = json.loads((paths.router / "skrouterd.json").read_text())
    entities = {(kind, attrs.get("name")): attrs for kind, attrs in config}
    metadata = json.loads(entities[("router", None)]["metadata"])
    assert metadata == {"id": rendered.site_id, "name": "hub-a", "version": "2.1.3"}
    assert entities[("listener", "skupper-local")]["port"] == 5671
    inter = entities[("listener", "hub-a-public-inter-router")]
    assert (inter["role"], inter["port"], inter["host"]) == ("inter-router", 8000, "")
    assert entities[("sslProfile", "hub-a-public")]["certFile"] == (
        "${SSL_PROFILE_BASE_PATH}/runtime/certs/hub-a-public/tls.crt"
    )
    assert entities[("tcpConnector", "model-api@127.0.0.1")]["address"] == "model-api"

    runtime = {p.name for p in paths.runtime_resources.iterdir()}
    assert {
        "Site-hub-a.yaml",
        "Connector-model-api.yaml",
        "RouterAccess-skupper-local.yaml",
    } <= runtime
    connector = yaml.safe_load((paths.runtime_resources / "Connector-model-api.yaml").read_text())
    assert connector["status"]["message"] == "Not Matched"
    assert paths.platform_file.read_text() == "platform: podman\n"
    assert "skupper.io/site-id=" + rendered.site_id in (paths.scripts / "start.sh").read_text()


def test_rerender_keeps_ca_and_site_id_but_reissues_certs(host: HostKit) -> None:
    paths = ns_paths(host)
    paths.input_resources.mkdir(parents=True)
    (paths.input_resources / "all.yaml").write_text(HUB_INPUT)
    first = render.render(paths, site_state.load(paths), cli_version="2.1.3", platform="podman")
    ca = (paths.issuers / "skupper-site-ca" / "ca.crt").read_bytes()
    server = (paths.certs / "hub-a-public" / "tls.crt").read_bytes()
    second = render.render(paths, site_state.load(paths), cli_version="2.1.3", platform="podman")
    assert second.site_id == first.site_id
    assert (paths.issuers / "skupper-site-ca" / "ca.crt").read_bytes() == ca
    assert (paths.certs / "hub-a-public" / "tls.crt").read_bytes() != server


def test_start_on_rendered_namespace_fails(host: HostKit) -> None:
    paths = ns_paths(host)
    assert host.skupper("system", "apply", "-f", "-", stdin=HUB_INPUT).returncode == 0
    paths.runtime_resources.mkdir(parents=True)
    done = host.skupper("system", "start")
    assert done.returncode == 2  # a ValidateInput error (system_start.go@2.1.2)
    assert "namespace already exists: default" in done.stdout


def test_link_without_its_secret_is_rejected(host: HostKit) -> None:
    link = (
        "apiVersion: skupper.io/v2alpha1\nkind: Link\nmetadata: {name: to-hub}\n"
        "spec:\n  tlsCredentials: to-hub\n  endpoints:\n"
        "  - {name: inter-router, host: 127.205.0.3, port: '55671'}\n"
    )
    site = "apiVersion: skupper.io/v2alpha1\nkind: Site\nmetadata: {name: west}\n---\n"
    assert host.skupper("system", "apply", "-f", "-", stdin=site + link).returncode == 0
    done = host.skupper("system", "start")
    assert done.returncode == 1
    assert "unable to process links (no secrets found)" in done.stdout
    other = "apiVersion: v1\nkind: Secret\nmetadata: {name: other}\ndata: {}\n"
    assert host.skupper("system", "apply", "-f", "-", stdin=other).returncode == 0
    done = host.skupper("system", "reload")
    assert done.returncode == 1
    assert 'invalid link "to-hub": secret "to-hub" not found' in done.stdout
    assert not ns_paths(host).is_rendered()


def test_link_secret_data_becomes_the_link_profile(host: HostKit) -> None:
    paths = ns_paths(host)
    paths.input_resources.mkdir(parents=True)
    data = {
        k: base64.b64encode(f"pem {k}".encode()).decode() for k in ("ca.crt", "tls.crt", "tls.key")
    }
    docs = [
        {"apiVersion": "skupper.io/v2alpha1", "kind": "Site", "metadata": {"name": "west"}},
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "type": "kubernetes.io/tls",
            "metadata": {"name": "to-hub"},
            "data": data,
            "stringData": {"extra": "ignored"},
        },
        {
            "apiVersion": "skupper.io/v2alpha1",
            "kind": "Link",
            "metadata": {"name": "to-hub"},
            "spec": {
                "tlsCredentials": "to-hub",
                "cost": 2,
                "endpoints": [
                    {"name": "inter-router", "host": "127.205.0.3", "port": "8000"},
                    {"name": "edge", "host": "127.205.0.3", "port": "8001"},
                ],
            },
        },
    ]
    (paths.input_resources / "all.yaml").write_text(yaml.safe_dump_all(docs))
    render.render(paths, site_state.load(paths), cli_version="2.1.3", platform="podman")
    profile = paths.certs / "to-hub-profile"
    assert sorted(p.name for p in profile.iterdir()) == ["ca.crt", "tls.crt", "tls.key"]
    assert (profile / "tls.key").read_bytes() == b"pem tls.key"
    config = json.loads((paths.router / "skrouterd.json").read_text())
    connector = next(a for k, a in config if k == "connector")
    assert connector == {
        "name": "to-hub",
        "role": "inter-router",
        "host": "127.205.0.3",
        "port": "8000",
        "sslProfile": "to-hub-profile",
        "cost": 2,
    }
    link_status = host.skupper("link", "status")
    assert "to-hub" in link_status.stdout and "Not Operational" in link_status.stdout


def test_controller_statuses_follow_the_router() -> None:
    runtime = [
        {"kind": "Site", "metadata": {"name": "west"}, "status": {}},
        {"kind": "Link", "metadata": {"name": "to-hub"}, "spec": {}},
        {"kind": "Listener", "metadata": {"name": "m"}, "spec": {"routingKey": "model"}},
    ]
    answer = {
        "links": [{"name": "to-hub", "status": "up", "error": None, "remoteSite": "hub"}],
        "reachable": {"model": 1},
        "sites": ["west", "hub"],
        "listeners": [],
    }
    up = {r["kind"]: r["status"] for r in controller.live_statuses(runtime, True, answer)}
    assert (up["Site"]["status"], up["Link"]["status"], up["Listener"]["status"]) == (
        "Ready",
        "Ready",
        "Ready",
    )
    assert up["Link"]["message"] == "OK" and up["Site"]["sitesInNetwork"] == 2
    broken = {
        "links": [
            {
                "name": "to-hub",
                "status": "down",
                "error": "certificate verify failed",
                "remoteSite": None,
            }
        ]
    }
    err = {r["kind"]: r["status"] for r in controller.live_statuses(runtime, True, broken)}
    assert (err["Link"]["status"], err["Link"]["message"]) == ("Error", "certificate verify failed")
    assert err["Listener"]["message"] == "No matching connectors"
    down = {r["kind"]: r["status"] for r in controller.live_statuses(runtime, False, None)}
    assert down["Site"]["message"] == "No router pod is ready"
    assert (down["Link"]["status"], down["Link"]["message"]) == ("Pending", "Not operational")


def test_v20_has_setup_and_no_apply(tmp_path: Path) -> None:
    with running_host(tmp_path, "old", "127.205.0.9", skupper_version="2.0.1") as kit:
        assert "3.3.1" in kit.skupper("version", "-p", "kubernetes").stdout
        assert kit.skupper("system", "apply", "-f", "-", stdin=HUB_INPUT).returncode == 1
        done = kit.skupper("system", "setup", "-n", "x")
        assert done.returncode == 1 and "No sources found" in done.stdout
