"""The precheck: fact parsers, and every site checked over real SSH, concurrently."""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Iterator, Mapping
from contextlib import AsyncExitStack
from pathlib import Path

import pytest
import yaml

from skupper_mcp.engine import Engine
from skupper_mcp.engine.operations.precheck import (
    check_kube_plugin,
    check_kube_tls,
    check_kubernetes,
    evaluate_facts,
    evaluate_ports,
)
from skupper_mcp.errors import ConnectError, KubeError
from skupper_mcp.facts.precheck import (
    SiteFacts,
    parse_proc_net_address,
    parse_site_facts,
    ports_bound,
    site_facts_script,
)
from skupper_mcp.results import Check
from skupper_mcp.topology import KubeSite, parse_topology
from sshkit import AsyncSSHServer, asyncssh_server, blackhole_server, free_port
from topology_samples import ssh_topology


def server_topology(server: AsyncSSHServer, site: tuple[str, str, int]) -> str:
    """A topology of the one SSH site ``site`` (name, address, port), reached with
    ``server``'s client key and known hosts."""
    return ssh_topology(
        [site],
        identities=[str(server.keys.client_key)],
        known_hosts=str(server.known_hosts),
    )


async def checked(text: str, write_topology, site: str, name: str) -> Check:
    """The check ``name`` of ``site`` in the precheck of the topology ``text``."""
    async with Engine(parse_topology(text, write_topology(text))) as engine:
        result = await engine.check()
    return next(c for c in result.checks if (c.site, c.name) == (site, name))


def test_parse_proc_net_address() -> None:
    assert parse_proc_net_address("0100007F:2328") == ("127.0.0.1", 9000)
    assert parse_proc_net_address("0000000000000000FFFF00000100007F:0050") == ("127.0.0.1", 80)
    assert parse_proc_net_address("00000000000000000000000000000000:1F90") == ("::", 8080)
    assert parse_proc_net_address("zz:1") is None


def test_parse_site_facts_reads_framed_text_only() -> None:
    facts = parse_site_facts(
        "motd noise\n@@section podman\n|podman version 4.9.3\n@@stderr\n|WARN[0000] cgroups-v1\n"
        "@@rc 0\n@@section skupper\n|cli 2.1.1\n@@rc 0\n"
        "@@section systemd\n|LoadState=loaded\n@@rc 0\n@@section linger\n|Linger=yes\n@@rc 0\n"
        "@@section open-keys\n@@section listen\n|0100CF7F:2328\n"
        "@@section router-ports\n|9000\n@@end\n"
    )
    # podman's warning on stderr is not its version
    assert facts.complete and facts.podman == "podman version 4.9.3"
    assert str(facts.skupper.cli) == "2.1.1" and facts.skupper_exit == 0
    assert facts.systemd_ok and facts.linger == "Linger=yes"
    assert facts.listening == {("127.207.0.1", 9000)}
    assert facts.router_ports == {9000}


def test_ports_bound_counts_wildcards_and_the_listener_host() -> None:
    listening = {("0.0.0.0", 1), ("127.207.0.1", 2), ("127.0.0.9", 3)}
    assert ports_bound(listening, "127.207.0.1", [1, 2, 3, 4]) == {
        1: True,
        2: True,
        3: False,
        4: False,
    }


def _statuses(checks: list[Check]) -> dict[str, str]:
    return {c.name: c.status for c in checks}


@pytest.mark.parametrize(
    ("version", "status", "words"),
    [("2.1.1", "pass", "2.1.1"), ("2.2.1", "pass", "2.2.1"), ("2.0.1", "fail", "upgrade")],
)
def test_skupper_version_policy(version: str, status: str, words: str) -> None:
    facts = SiteFacts(podman="podman 4", skupper_lines=[f"cli {version}"], systemd_ok=True)
    check = next(
        c for c in evaluate_facts("h", facts, "2.1.0", is_local=False) if c.name == "skupper"
    )
    assert check.status == status
    assert words in f"{check.detail} {check.hint}"


def test_missing_tools_and_systemd_fail_with_hints() -> None:
    facts = SiteFacts(
        skupper_missing=True, systemd_error=["Failed to connect to bus"], linger="Linger=no"
    )
    checks = evaluate_facts("h", facts, "2.1.0", is_local=False)
    assert _statuses(checks) == {
        "podman": "fail",
        "skupper": "fail",
        "systemd-user": "fail",
        "linger": "warn",
    }
    assert all(c.hint for c in checks)


@pytest.mark.parametrize(
    ("facts", "says", "never"),
    [
        # root without systemd: no lingering needed, so the fix is never to enable it
        (
            SiteFacts(root=True, systemd_error=["System has not been booted with systemd"]),
            "init is systemd",
            "enable-linger",
        ),
        # no loginctl: there is no systemd to linger with
        (SiteFacts(systemd_error=["systemctl: command not found"]), "no systemd", "enable-linger"),
        # lingering already on: enabling it again is no fix
        (
            SiteFacts(linger="Linger=yes", systemd_error=["Failed to connect to bus"]),
            "lingering is on",
            "enable-linger",
        ),
        (
            SiteFacts(linger="Linger=no", systemd_error=["Failed to connect to bus"]),
            "enable-linger",
            "no lingering needed",
        ),
    ],
)
def test_the_systemd_and_linger_checks_never_contradict_each_other(
    facts: SiteFacts, says: str, never: str
) -> None:
    checks = evaluate_facts("h", facts, "2.1.0", is_local=False)
    text = " ".join(
        f"{c.detail} {c.hint or ''}" for c in checks if c.name in ("systemd-user", "linger")
    )
    assert says in text and never not in text


def test_ports_bound_by_our_router_pass_others_fail() -> None:
    facts = SiteFacts(listening={("0.0.0.0", 9000), ("127.0.0.1", 10000)}, router_ports={9000})
    checks = evaluate_ports("local", facts, "127.0.0.1", {9000: "a", 10000: "b", 11000: "c"})
    assert [c.status for c in checks] == ["pass", "fail", "pass"]
    assert "router" in checks[0].detail and "10000" in (checks[1].hint or "")


def kubeconfig(tmp_path: Path, name: str, clusters: dict[str, dict[str, object]]) -> Path:
    """A kubeconfig whose context ``crc-admin`` uses cluster ``crc`` (current: ``other``)."""
    path = tmp_path / name
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "other",
                "clusters": [{"name": n, "cluster": c} for n, c in clusters.items()],
                "contexts": [
                    {"name": "crc-admin", "context": {"cluster": "crc", "user": "admin"}},
                    {"name": "other", "context": {"cluster": "other", "user": "admin"}},
                ],
                "users": [{"name": "admin", "user": {"token": "sha256~x"}}],
            }
        )
    )
    return path


def kube_site(config: Path | None, context: str | None = "crc-admin") -> KubeSite:
    return KubeSite(
        site_name="crc-t",
        namespace="ns",
        kubeconfig=config,
        context=context,
        listeners={},
        direct_links=[],
    )


async def test_kubernetes_unauthenticated_and_unreachable() -> None:
    kube = kube_site(None)

    async def unauthenticated() -> str:
        raise KubeError("crc-admin", "Unauthorized", status=401)

    async def down() -> str:
        raise ConnectError("crc", "connection refused")

    async def fine() -> str:
        return "v1.31.0"

    async def silent() -> str:
        raise TimeoutError

    denied = await check_kubernetes(kube, unauthenticated)
    assert denied.status == "fail" and "log in" in (denied.hint or "")
    refused = await check_kubernetes(kube, down)
    assert refused.status == "fail" and "unreachable" in refused.detail
    assert (await check_kubernetes(kube, fine)).status == "pass"
    timed_out = await check_kubernetes(kube, silent, timeout=0.1)
    assert timed_out.detail.endswith("unreachable: no answer within 2.1s")


SERVER = "https://api.crc.testing:6443"


async def test_a_context_that_skips_tls_verification_is_a_warning_saying_how_to_fix_it(
    tmp_path: Path,
) -> None:
    config = kubeconfig(
        tmp_path,
        "kubeconfig",
        {
            "crc": {"server": SERVER, "insecure-skip-tls-verify": True},
            "other": {"server": "https://other:6443", "certificate-authority-data": "Q0E="},
        },
    )
    checks = await check_kube_tls(kube_site(config))
    assert [(c.name, c.site, c.status) for c in checks] == [("kubernetes-tls", "crc", "warn")]
    assert "insecure-skip-tls-verify: true" in checks[0].detail and SERVER in checks[0].detail
    hint = checks[0].hint or ""
    assert "remove insecure-skip-tls-verify from cluster crc" in hint
    assert "certificate-authority-data" in hint and "oc login --certificate-authority=" in hint
    # the current context is used when the topology names none: its cluster verifies
    assert await check_kube_tls(kube_site(config, context=None)) == []


async def test_a_context_that_verifies_tls_gives_no_warning(tmp_path: Path) -> None:
    config = kubeconfig(
        tmp_path,
        "kubeconfig",
        {
            "crc": {"server": SERVER, "certificate-authority-data": "Q0E="},
            "other": {"server": "https://other:6443", "insecure-skip-tls-verify": True},
        },
    )
    assert await check_kube_tls(kube_site(config)) == []
    assert [c.status for c in await check_kube_tls(kube_site(config, None))] == ["warn"]


async def test_the_first_kubeconfig_file_to_name_a_cluster_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    verified = kubeconfig(tmp_path, "first", {"crc": {"server": SERVER}})
    skipping = kubeconfig(tmp_path, "second", {"crc": {"insecure-skip-tls-verify": True}})
    monkeypatch.setenv("KUBECONFIG", f"{verified}:{skipping}")
    assert await check_kube_tls(kube_site(None)) == []
    monkeypatch.setenv("KUBECONFIG", f"{skipping}:{verified}")
    assert [c.status for c in await check_kube_tls(kube_site(None))] == ["warn"]


async def test_an_unreadable_kubeconfig_is_left_to_the_access_check(tmp_path: Path) -> None:
    broken = tmp_path / "kubeconfig"
    broken.write_text("clusters: [unclosed\n")
    assert await check_kube_tls(kube_site(broken)) == []
    assert await check_kube_tls(kube_site(tmp_path / "missing")) == []


# --------------------------------------------------------------------------- over SSH

FAKE_TOOLS = {
    "podman": 'echo "podman version 4.9.3"',
    "skupper": 'printf "COMPONENT VERSION\\ncli %s\\n" "$(cat "$(dirname "$0")/skupper-version")"',
    "systemctl": 'echo "LoadState=loaded"',
    "loginctl": 'echo "Linger=yes"',
}


@pytest.fixture
def fake_tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """podman, skupper (version from a file), systemctl and loginctl on the PATH of local
    commands (and, given as ``tools``, of the commands a test SSH server runs)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, body in FAKE_TOOLS.items():
        (bin_dir / name).write_text(f"#!/bin/sh\n{body}\n")
        (bin_dir / name).chmod(0o755)
    (bin_dir / "skupper-version").write_text("2.1.1")
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    yield bin_dir


async def test_precheck_over_ssh_reachable_refused_and_blackholed(
    tmp_path: Path, fake_tools: Path, write_topology
) -> None:
    timeout = 2.0
    async with AsyncExitStack() as stack:
        good = await stack.enter_async_context(
            asyncssh_server(tmp_path / "s1", "127.207.0.2", tools=fake_tools)
        )
        holes = [
            await stack.enter_async_context(blackhole_server(f"127.207.0.{n}")) for n in (4, 5, 6)
        ]
        refused_port = free_port("127.207.0.3")
        occupied = socket.create_server(("127.207.0.1", 0))
        stack.callback(occupied.close)
        local_port = occupied.getsockname()[1]
        text = ssh_topology(
            [("good", "127.207.0.2", good.port), ("refused", "127.207.0.3", refused_port)]
            + [(f"hole{i}", address, port) for i, (address, port) in enumerate(holes)],
            identities=[str(good.keys.client_key)],
            known_hosts=str(good.known_hosts),
            connect_timeout=timeout,
        ).replace("GOOD_MODEL_PORT=30000", f"GOOD_MODEL_PORT={local_port}")
        topology = parse_topology(text, write_topology(text))
        lines: list[str] = []

        async def progress(line: str) -> None:
            lines.append(line)

        start = time.monotonic()
        async with Engine(topology) as engine:
            result = await engine.check(progress)
        elapsed = time.monotonic() - start
    print(f"precheck of 6 sites (3 blackholed at {timeout}s) took {elapsed:.2f}s")
    by = {(c.site, c.name): c for c in result.checks}
    assert by[("good", "ssh")].status == "pass"
    assert by[("good", "skupper")].detail == "skupper 2.1.1"
    assert by[("good", "systemd-user")].status == "pass"
    assert by[("good", "linger")].status == "pass"
    assert by[("refused", "ssh")].status == "fail"
    for i in range(3):
        hole = by[(f"hole{i}", "ssh")]
        assert hole.status == "fail"
        # the connect timeout, counted in the time the loop listened: never less, more
        # only as long as the machine kept the loop from listening
        assert hole.seconds is not None and timeout - 0.2 <= hole.seconds
    # the local site runs local commands; one listener port is taken by another process
    assert by[("local", f"port {local_port}")].status == "fail"
    assert by[("local", "port 30001")].status == "pass"
    assert not result.ok and "refused" in result.summary
    # concurrently: about the slowest (one connect timeout); one after another is the sum of
    # three, which no load makes shorter (the bound that tells the two apart)
    assert elapsed < 3 * timeout, elapsed
    assert any(line.startswith("good: ssh pass") for line in lines)


async def test_precheck_refuses_skupper_2_0(
    tmp_path: Path, fake_tools: Path, write_topology
) -> None:
    (fake_tools / "skupper-version").write_text("2.0.1")
    async with asyncssh_server(tmp_path / "s1", "127.207.0.2", tools=fake_tools) as server:
        text = server_topology(server, ("old", "127.207.0.2", server.port))
        skupper = await checked(text, write_topology, "old", "skupper")
    assert skupper.status == "fail" and "2.0.1" in skupper.detail
    assert "upgrade" in (skupper.hint or "")


async def test_unknown_host_key_is_a_failed_ssh_check(
    tmp_path: Path, fake_tools: Path, write_topology
) -> None:
    async with asyncssh_server(tmp_path / "s1", "127.207.0.2", known=False) as server:
        text = server_topology(server, ("stranger", "127.207.0.2", server.port))
        ssh = await checked(text, write_topology, "stranger", "ssh")
    assert ssh.status == "fail"
    assert "host key" in (ssh.hint or "")


async def test_the_ssh_check_says_which_file_gave_each_setting(
    tmp_path: Path, fake_tools: Path, write_topology
) -> None:
    """The topology names an alias; its address and port are in the SSH config alone."""
    async with asyncssh_server(tmp_path / "s1", "127.207.0.2", tools=fake_tools) as server:
        config = tmp_path / "ssh_config"
        config.write_text(f"Host gpu-alias\n  HostName 127.207.0.2\n  Port {server.port}\n")
        text = server_topology(server, ("aliased", "gpu-alias", 22))
        text = text.replace("ALIASED_SSH_PORT=22\n", "") + f"SSH_CONFIG={config}\n"
        ssh = await checked(text, write_topology, "aliased", "ssh")
    assert ssh.status == "pass", ssh.detail
    by_option = {s.option: (s.value, s.source) for s in ssh.ssh}
    assert by_option["HostName"] == ("127.207.0.2", str(config))
    assert by_option["Port"] == (str(server.port), str(config))
    assert by_option["User"] == ("tester", "topology.env")
    assert by_option["IdentityFile"] == (str(server.keys.client_key), "topology.env")
    assert f"Port {server.port} from {config}" in ssh.detail


def test_a_key_others_may_read_is_a_warning_that_setup_repairs() -> None:
    """Setup stops at a failed check, and it is setup that makes the keys private: a warn."""
    open_key = parse_site_facts(
        "@@section open-keys\n|640 runtime/certs/skupper-site-server/tls.key\n"
        "|644 input/resources/Secret-link-rhel-ai.yaml\n@@end\n"
    )
    [check] = [
        c
        for c in evaluate_facts("h", open_key, "2.1.0", is_local=False)
        if c.name == "private-keys"
    ]
    assert check.status == "warn"
    assert "mode 640 runtime/certs/skupper-site-server/tls.key" in check.detail
    assert "mode 644 input/resources/Secret-link-rhel-ai.yaml" in check.detail
    assert check.hint is not None and "run setup" in check.hint and "0600" in check.hint
    closed = parse_site_facts("@@end\n")
    [check] = [
        c for c in evaluate_facts("h", closed, "2.1.0", is_local=False) if c.name == "private-keys"
    ]
    assert check.status == "pass"
    assert not [
        c
        for c in evaluate_facts("h", parse_site_facts(""), "2.1.0", is_local=False)
        if c.name == "private-keys"
    ]  # a read cut short says nothing about the keys


def test_the_precheck_lists_the_open_keys_of_a_real_namespace_and_no_name_forges_a_fact(
    tmp_path: Path,
) -> None:
    """The precheck's own script over a namespace on disk: certificates stay as Skupper
    wrote them, every key file not 0600 is listed, and a directory named with a newline and
    a marker stays inside its one line."""
    ns = tmp_path / "skupper" / "namespaces" / "default"
    files = {
        "runtime/certs/skupper-site-server/tls.key": 0o640,
        "runtime/certs/skupper-site-server/tls.crt": 0o640,
        "runtime/certs/skupper-site-server/ca.crt": 0o644,
        "runtime/certs/client-local/tls.key": 0o600,
        "runtime/issuers/skupper-site-ca/tls.key": 0o640,
        "runtime/links/link-skupper-site-server-127.0.0.1.yaml": 0o644,
        "runtime/resources/Secret-link-hub.yaml": 0o644,
        "input/resources/Secret-link-hub.yaml": 0o644,
        "input/resources/Site-default.yaml": 0o644,
        "runtime/certs/x\n@@podman-missing/tls.key": 0o644,
    }
    for name, mode in files.items():
        path = ns / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("k\n")
        path.chmod(mode)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    # a login that is not root, whatever runs the test: its data is under XDG_DATA_HOME
    (bin_dir / "id").write_text('#!/bin/sh\nif [ "$1" = -u ]; then echo 1000; else echo u; fi\n')
    (bin_dir / "id").chmod(0o755)
    out = subprocess.run(
        ["sh", "-c", site_facts_script("default", with_ports=False)],
        capture_output=True,
        text=True,
        env={
            "PATH": f"{bin_dir}:/usr/bin:/bin",
            "HOME": str(tmp_path),
            "XDG_DATA_HOME": str(tmp_path),
        },
        check=False,
        timeout=30,
    ).stdout
    facts = parse_site_facts(out)
    assert facts.complete
    listed = sorted(str(k) for k in facts.open_keys)
    assert listed == sorted(
        [
            "mode 640 runtime/certs/skupper-site-server/tls.key",
            "mode 640 runtime/issuers/skupper-site-ca/tls.key",
            "mode 644 runtime/links/link-skupper-site-server-127.0.0.1.yaml",
            "mode 644 runtime/resources/Secret-link-hub.yaml",
            "mode 644 input/resources/Secret-link-hub.yaml",
            "mode 644 (a file whose name has unusual characters)",
        ]
    )
    # the hostile name stayed on its one stuffed line
    assert [line for line in out.split("\n") if "tls.key" in line and "@@podman" in line] == [
        "|644 runtime/certs/x?@@podman-missing/tls.key"
    ]


def plugin_kubeconfig(path: Path, user: Mapping[str, object]) -> Path:
    """A kubeconfig whose current context's user is ``user``."""
    path.write_text(
        yaml.safe_dump(
            {
                "current-context": "crc-admin",
                "contexts": [{"name": "crc-admin", "context": {"cluster": "c", "user": "u"}}],
                "clusters": [{"name": "c", "cluster": {"server": SERVER}}],
                "users": [{"name": "u", "user": user}],
            }
        )
    )
    return path


async def test_the_precheck_names_the_command_a_kubeconfig_runs(tmp_path: Path) -> None:
    exec_plugin = {"exec": {"command": "oc", "args": ["whoami", "--show-token"]}}
    config = plugin_kubeconfig(tmp_path / "kubeconfig", exec_plugin)
    [check] = await check_kube_plugin(kube_site(config))
    assert check.name == "kubernetes-plugin" and check.status == "pass"
    assert f"{config} runs `oc whoami --show-token` (the exec plugin of user 'u')" in check.detail
    gcp = {"auth-provider": {"name": "gcp", "config": {"cmd-path": "/usr/bin/gcloud"}}}
    plugin_kubeconfig(config, gcp)
    [check] = await check_kube_plugin(kube_site(config))
    assert "runs `/usr/bin/gcloud` (the gcp auth-provider of user 'u')" in check.detail
    plugin_kubeconfig(config, {"token": "sha256~x"})
    assert await check_kube_plugin(kube_site(config)) == []


async def test_the_precheck_fails_a_plugin_of_a_kubeconfig_named_by_a_relative_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    plugin_kubeconfig(tmp_path / "kubeconfig", {"exec": {"command": "touch", "args": ["x"]}})
    monkeypatch.setenv("KUBECONFIG", "kubeconfig")
    [check] = await check_kube_plugin(kube_site(None))
    assert check.status == "fail"
    assert "kubeconfig runs `touch x`" in check.detail and "it was not run" in check.detail
    assert "absolute path" in (check.hint or "")
