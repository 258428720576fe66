"""The emulated skupper CLI and system-controller against the real source, one test per row of
docs/sandbox.md section 11 ("The skupper CLI and the system-controller"). Each row names the
real file at its release tag; these tests check the sandbox does what that code does."""

from __future__ import annotations

import os
import subprocess
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from hostkit import HostKit, running_host
from skupper_sandbox.emulated import controller
from skupper_sandbox.emulated.podman import containers
from skupper_sandbox.emulated.skupper import removal, render
from skupper_sandbox.emulated.skupper import resources as res
from skupper_sandbox.emulated.skupper.failure import CliFailure
from skupper_sandbox.emulated.skupper.paths import NamespacePaths, data_home

HUB = """\
apiVersion: skupper.io/v2alpha1
kind: Site
metadata: {name: hub-f}
---
apiVersion: skupper.io/v2alpha1
kind: RouterAccess
metadata: {name: hub-f-public}
spec:
  roles: [{name: inter-router, port: 18000}, {name: edge, port: 18001}]
  subjectAlternativeNames: [127.219.0.2]
---
apiVersion: skupper.io/v2alpha1
kind: Connector
metadata: {name: model-api}
spec: {routingKey: model-api, host: 127.0.0.1, port: 19000}
---
apiVersion: skupper.io/v2alpha1
kind: Listener
metadata: {name: model-api-local}
spec: {routingKey: model-api, host: 0.0.0.0, port: 19001}
"""

LINK = """\
apiVersion: v1
kind: Secret
metadata: {name: to-peer}
data: {ca.crt: Q0E=, tls.crt: Q1JU, tls.key: S0VZ}
---
apiVersion: skupper.io/v2alpha1
kind: Link
metadata: {name: to-peer}
spec:
  tlsCredentials: to-peer
  endpoints: [{name: inter-router, host: 127.219.0.9, port: "18000"}]
"""


def paths(kit: HostKit, namespace: str = "default") -> NamespacePaths:
    return NamespacePaths(data_home({"HOME": str(kit.home)}), namespace)


def socket_on(kit: HostKit) -> None:
    done = kit.sh("systemctl --user start podman.socket")
    assert done.returncode == 0, done.stderr


@pytest.fixture
def v21(tmp_path: Path) -> Iterator[HostKit]:
    with running_host(tmp_path, "f21", "127.219.0.2", skupper_version="2.1.2") as kit:
        yield kit


@pytest.fixture
def v22(tmp_path: Path) -> Iterator[HostKit]:
    with running_host(tmp_path, "f22", "127.219.0.3", skupper_version="2.2.1") as kit:
        yield kit


# -- A1, C7: skupper version ----------------------------------------------------------------


def test_a1_version_on_21_needs_the_namespace_directory(v21: HostKit) -> None:
    done = v21.skupper("version")
    assert (done.returncode, done.stdout) == (2, 'there is no definition for namespace ""\n')
    other = v21.skupper("version", "-n", "models")
    assert (other.returncode, other.stdout) == (
        2,
        'there is no definition for namespace "models"\n',
    )
    paths(v21, "models").home.mkdir(parents=True)
    assert v21.skupper("version").returncode == 2  # `default` still does not exist
    table = v21.skupper("version", "-n", "models")
    assert table.returncode == 0 and ["cli", "2.1.2"] in [
        r.split() for r in table.stdout.splitlines()
    ]


def test_a1_version_kube_variant_has_no_namespace_check_on_any_version(
    v21: HostKit, v22: HostKit
) -> None:
    """What the product runs: `KUBECONFIG=/dev/null skupper version -p kubernetes`."""
    for kit, row in ((v21, ["cli", "2.1.2"]), (v22, None)):
        done = subprocess.run(
            ["/bin/sh", "-c", "KUBECONFIG=/dev/null skupper version -p kubernetes"],
            env={**kit.env(), "SKUPPER_PLATFORM": "podman"},
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stdout
        if row:
            assert row in [r.split() for r in done.stdout.splitlines()]
        else:
            assert done.stdout == "2.2.1\n"
    assert not paths(v21).home.exists()


def test_a1_version_on_22_prints_the_bare_version(v22: HostKit) -> None:
    done = v22.skupper("version")
    assert (done.returncode, done.stdout, done.stderr) == (0, "2.2.1\n", "")


def test_c7_version_on_21_warns_about_docker_on_stderr(v21: HostKit) -> None:
    paths(v21).home.mkdir(parents=True)
    done = v21.skupper("version")
    assert done.returncode == 0
    assert done.stderr == "Warning: Docker is not installed. Skipping image digests search.\n"
    assert done.stdout.startswith("COMPONENT")


# -- A2, B3: validation, streams --------------------------------------------------------------


@pytest.mark.parametrize(
    ("resource", "expected"),
    [
        (
            "kind: Connector\nmetadata: {name: Model_A}\n"
            "spec: {routingKey: Model_A, host: 127.0.0.1, port: 9000}",
            'invalid connector name: invalid name "Model_A": a lowercase RFC 1123 name',
        ),
        (
            "kind: Listener\nmetadata: {name: llama-3.1}\n"
            "spec: {routingKey: llama-3.1, host: 0.0.0.0, port: 9000}",
            'invalid listener name: invalid name "llama-3.1"',
        ),
        (
            "kind: Connector\nmetadata: {name: no-host}\nspec: {routingKey: k, port: 9000}",
            'connector host and port are required (connector: "no-host")',
        ),
    ],
)
def test_a2_b3_names_must_be_rfc1123_and_errors_go_to_stdout(
    v21: HostKit, resource: str, expected: str
) -> None:
    site = "apiVersion: skupper.io/v2alpha1\nkind: Site\nmetadata: {name: s}\n---\n"
    assert v21.skupper("system", "apply", "-f", "-", stdin=site + resource).returncode == 0
    with v21.manager():
        socket_on(v21)
        done = v21.skupper("system", "start")
    assert done.returncode == 1
    assert "Failed to bootstrap: failed to render site state: " + expected in done.stdout
    assert expected not in done.stderr
    assert not paths(v21).runtime.exists()  # validation comes before any file is rendered


# -- B1, C6: system install --------------------------------------------------------------------


def test_b1_install_writes_and_enables_skupper_controller_service(v21: HostKit) -> None:
    with v21.manager():
        done = v21.skupper("system", "install")
        assert done.returncode == 0, done.stdout
        unit = v21.unit_dir / "skupper-controller.service"
        text = unit.read_text()
        assert "Description=skupper-controller\n" in text
        assert "WantedBy=default.target" in text
        assert (v21.unit_dir / "default.target.wants" / "skupper-controller.service").exists()
        assert not (v21.unit_dir / f"{v21.info.user}-skupper-controller.service").exists()
        shown = v21.sh("systemctl --user is-active skupper-controller.service podman.socket")
        assert shown.stdout.split() == ["active", "active"]
        assert "SKUPPER_SYSTEM_RELOAD_TYPE" not in text  # a 2.2.0 addition
        v21.wait_until_started("skupper-controller.service")
        v21.sh("systemctl --user stop skupper-controller.service")


def test_c6_install_21_has_no_reload_type_and_keeps_a_stopped_controller(v21: HostKit) -> None:
    assert v21.skupper("system", "install", "--reload-type", "auto").returncode == 1
    with v21.manager():
        assert v21.skupper("system", "install").returncode == 0
        v21.wait_until_started("skupper-controller.service")
        v21.sh("systemctl --user stop skupper-controller.service")
        before = containers.get(v21.home, f"{v21.info.user}-skupper-controller")
        assert before is not None and not containers.running(before)
        again = v21.skupper("system", "install")
        assert again.returncode == 0
        assert "is already running in Podman" in again.stdout
        after = containers.get(v21.home, f"{v21.info.user}-skupper-controller")
        assert after is not None and after.id == before.id and not containers.running(after)


def test_c6_install_22_takes_reload_type(v22: HostKit) -> None:
    with v22.manager():
        done = v22.skupper("system", "install", "--reload-type", "auto")
        assert done.returncode == 0, done.stdout
        text = (v22.unit_dir / "skupper-controller.service").read_text()
        assert 'Environment="SKUPPER_SYSTEM_RELOAD_TYPE=auto"' in text
        v22.wait_until_started("skupper-controller.service")
        v22.sh("systemctl --user stop skupper-controller.service")


def test_the_controllers_container_endpoint_is_the_mounted_socket_on_2_2_only(
    v21: HostKit, v22: HostKit
) -> None:
    """install.go@2.2.1:80-85,221-226: CONTAINER_ENDPOINT is unix:///var/run/podman.sock,
    where install mounts the socket in the container; install.go@2.1.4:185-212: the host's
    own path. The unit's environment says the same."""
    for kit in (v21, v22):
        with kit.manager():
            done = kit.skupper("system", "install")
            assert done.returncode == 0, done.stdout
            controller = containers.get(kit.home, f"{kit.info.user}-skupper-controller")
            assert controller is not None
            endpoint = controller.env["CONTAINER_ENDPOINT"]
            if kit is v22:
                assert endpoint == "unix:///var/run/podman.sock"
            else:
                assert endpoint.startswith("unix:///run/user/")
                assert endpoint.endswith("/podman/podman.sock")
            unit = (kit.unit_dir / "skupper-controller.service").read_text()
            assert f'Environment="CONTAINER_ENDPOINT={endpoint}"' in unit
            kit.wait_until_started("skupper-controller.service")
            kit.sh("systemctl --user stop skupper-controller.service")


# -- B2: stop and uninstall ---------------------------------------------------------------------


def test_b2_stop_needs_platform_yaml_per_version(v21: HostKit, v22: HostKit) -> None:
    for kit, code, prefix in ((v21, 1, "System teardown has failed: "), (v22, 2, "")):
        assert kit.skupper("system", "apply", "-f", "-", stdin=HUB).returncode == 0
        done = kit.skupper("system", "stop")
        assert done.returncode == code, done.stdout
        assert done.stdout.startswith(prefix + "failed to read platform config file for namespace")
        assert paths(kit).input_resources.is_dir()  # nothing was removed


def test_b2_uninstall_21_halts_on_any_namespace_directory_and_disables_the_socket(
    v21: HostKit,
) -> None:
    with v21.manager():
        assert v21.skupper("system", "install").returncode == 0
        assert v21.skupper("system", "apply", "-n", "half", "-f", "-", stdin=HUB).returncode == 0
        halted = v21.skupper("system", "uninstall")
        assert (halted.returncode, halted.stdout) == (
            2,
            "Uninstallation halted: Active sites detected.\n",
        )
        assert (v21.unit_dir / "skupper-controller.service").exists()
        forced = v21.skupper("system", "uninstall", "--force")
        assert forced.returncode == 0, forced.stdout
        assert paths(v21, "half").home.is_dir()  # 2.1.x --force removes no site
        assert not (v21.unit_dir / "skupper-controller.service").exists()
        assert containers.get(v21.home, f"{v21.info.user}-skupper-controller") is None
        socket = v21.sh(
            "systemctl --user is-active podman.socket; systemctl --user is-enabled podman.socket"
        )
        assert socket.stdout.split()[:2] == ["inactive", "disabled"]


def test_b2_uninstall_22_counts_only_rendered_sites_and_keeps_the_socket(v22: HostKit) -> None:
    with v22.manager():
        assert v22.skupper("system", "install").returncode == 0
        assert v22.skupper("system", "apply", "-n", "half", "-f", "-", stdin=HUB).returncode == 0
        done = v22.skupper("system", "uninstall")
        assert done.returncode == 0, done.stdout
        assert "System-controller has been removed" in done.stdout
        assert v22.sh("systemctl --user is-active podman.socket").stdout.strip() == "active"


def test_b2_uninstall_without_the_podman_socket_fails_saying_so(v21: HostKit) -> None:
    # bootstrap/uninstall.go@2.1.2:45-48: NewCompatClient stats the socket file first; no
    # site is active (the namespaces directory an earlier teardown leaves, empty)
    (data_home({"HOME": str(v21.home)}) / "namespaces").mkdir(parents=True)
    with v21.manager():
        done = v21.skupper("system", "uninstall")
    sock = f"/run/user/{v21.info.uid}/podman/podman.sock"
    assert (done.returncode, done.stdout) == (
        1,
        "failed to uninstall : failed to create container client: Container engine is not "
        f"available on provided endpoint - stat {sock}: no such file or directory\n",
    )


# -- B5: the podman API socket ---------------------------------------------------------


def test_b5_start_fails_without_the_podman_socket_and_leaves_the_render(v21: HostKit) -> None:
    assert v21.skupper("system", "apply", "-f", "-", stdin=HUB).returncode == 0
    with v21.manager():
        done = v21.skupper("system", "start")
        assert done.returncode == 1
        assert "Failed to bootstrap: failed to pull router image" in done.stdout
        assert "podman/podman.sock: connect: no such file or directory" in done.stdout
        assert containers.get(v21.home, "default-skupper-router") is None
        assert paths(v21).platform_file.is_file()  # rendered, not undone
        again = v21.skupper("system", "start")
        assert again.returncode == 2 and "namespace already exists: default" in again.stdout


# -- B3, C1, C2, C8, C9: a full start and reload -----------------------------------------


def test_render_status_secrets_snapshot_and_reload_warnings(v21: HostKit) -> None:
    applied = v21.skupper("system", "apply", "-f", "-", stdin=HUB + "---\n" + LINK)
    assert applied.returncode == 0
    written = [line for line in applied.stdout.splitlines() if line.startswith("File written to")]
    assert len(written) == 6  # C9: fs/custom_resource_handler.go prints each file
    p = paths(v21)
    with v21.manager():
        socket_on(v21)
        started = v21.skupper("system", "start")
        assert started.returncode == 0, started.stdout
        runtime = {f.name for f in p.runtime_resources.iterdir()}
        # C8: the runtime state holds the Secrets (private keys) and the Certificates
        assert "Secret-to-peer.yaml" in runtime
        assert {"Certificate-skupper-site-ca.yaml", "Certificate-hub-f-public.yaml"} <= runtime

        def status(name: str) -> dict[str, str]:
            doc = yaml.safe_load((p.runtime_resources / name).read_text())
            return doc["status"]

        # C1/C2: the render writes the Site Ready; the rest waits for the controller
        assert status("Site-hub-f.yaml")["status"] == "Ready"
        assert status("Link-to-peer.yaml")["message"] == "Not Operational"
        assert status("Listener-model-api-local.yaml")["message"] == "Not Matched"
        assert status("Connector-model-api.yaml")["message"] == "Not Matched"
        # C9: the loaded sources are kept; a reload archives the previous ones
        assert (p.internal / "snapshot" / "Site-hub-f.yaml").is_file()
        reloaded = v21.skupper("system", "reload")
        assert reloaded.returncode == 0, reloaded.stdout
        assert (p.home / "sources.backup.tar.gz").is_file()
        with tarfile.open(p.home / "sources.backup.tar.gz") as tar:
            assert "Site-hub-f.yaml" in tar.getnames()
        # B3: slog warnings go to stderr, never stdout
        assert "WARN certificate will not be overwritten path=" in reloaded.stderr
        assert "certificate will not be overwritten" not in reloaded.stdout
        assert containers.get(v21.home, "default-skupper-router") is not None
        v21.sh("systemctl --user stop skupper-default.service")


def test_c1_the_210_controller_never_changes_running() -> None:
    site = {
        "kind": "Site",
        "metadata": {"name": "s"},
        "status": {
            "conditions": [
                {"type": "Configured", "status": "True", "message": "OK"},
                {"type": "Running", "status": "True", "message": "OK"},
            ]
        },
    }
    kept = controller.live_statuses([site], False, None, sets_running=False)[0]
    assert kept["status"]["status"] == "Ready"
    moved = controller.live_statuses([site], False, None, sets_running=True)[0]
    assert moved["status"]["message"] == "No router pod is ready"


def test_a_file_made_while_a_reload_empties_a_directory_fails_it_in_gos_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CleanupNamespaceForReload's RemoveAll lists the directory, removes what it listed,
    then unlinks the directory: a status file the controller writes in between (it does
    when the router stops) makes that last unlink fail, and the reload with it."""
    resources = tmp_path / "runtime" / "resources"
    resources.mkdir(parents=True)
    (resources / "Site-west.yaml").write_text("kind: Site\n")
    unlink = os.unlink

    def unlink_as_the_controller_writes(*args: object, **kwargs: object) -> None:
        unlink(*args, **kwargs)  # type: ignore[arg-type]
        monkeypatch.setattr(os, "unlink", unlink)
        (resources / "Listener-model.yaml").write_text("kind: Listener\n")

    monkeypatch.setattr(os, "unlink", unlink_as_the_controller_writes)
    with pytest.raises(CliFailure) as failed:
        render.recreate(resources)
    assert str(failed.value) == (
        f"failed to remove directory {resources}: unlinkat {resources}: directory not empty"
    )


def test_a_file_made_while_system_stop_removes_a_namespace_leaves_it_alone_and_fails_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Teardown's RemoveAll of the namespace goes on past a directory it cannot remove, as
    Go's does: the status file the controller wrote meanwhile is all that is left, and the
    error names the innermost directory, in Go's words."""
    home = tmp_path / "namespaces" / "west"
    resources = home / "runtime" / "resources"
    resources.mkdir(parents=True)
    (resources / "Site-west.yaml").write_text("kind: Site\n")
    (home / "internal").mkdir()
    (home / "internal" / "platform.yaml").write_text("platform: podman\n")
    (home / "input" / "resources").mkdir(parents=True)
    (home / "input" / "resources" / "site.yaml").write_text("kind: Site\n")
    unlink = os.unlink

    def unlink_as_the_controller_writes(*args: object, **kwargs: object) -> None:
        unlink(*args, **kwargs)  # type: ignore[arg-type]
        if not any(resources.iterdir()):
            monkeypatch.setattr(os, "unlink", unlink)
            (resources / "Site-west.yaml").write_text("kind: Site\nstatus: {}\n")

    monkeypatch.setattr(os, "unlink", unlink_as_the_controller_writes)
    with pytest.raises(CliFailure) as failed:
        removal.remove_all(home)
    assert str(failed.value) == f"unlinkat {resources}: directory not empty"
    assert sorted(p.relative_to(home) for p in home.rglob("*")) == [
        Path("runtime"),
        Path("runtime/resources"),
        Path("runtime/resources/Site-west.yaml"),
    ]


def test_a_directory_a_reload_recreates_comes_back_empty(
    tmp_path: Path,
) -> None:
    resources = tmp_path / "runtime" / "resources"
    render.recreate(resources)  # RemoveAll of nothing is no error; MkdirAll makes parents
    assert resources.is_dir() and not any(resources.iterdir())
    (resources / "Site-west.yaml").write_text("kind: Site\n")
    render.recreate(resources)
    assert resources.is_dir() and not any(resources.iterdir())


def test_what_vanishes_while_a_reload_empties_a_directory_is_no_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """RemoveAll skips an entry that is already gone (another remover got there first)."""
    resources = tmp_path / "runtime" / "resources"
    resources.mkdir(parents=True)
    for name in ("Site-west.yaml", "Listener-model.yaml", "Connector-model.yaml"):
        (resources / name).write_text("kind: Site\n")
    listed = [entry.name for entry in os.scandir(resources)]  # the order rmtree takes
    unlink = os.unlink

    def unlink_as_another_takes_the_next(*args: object, **kwargs: object) -> None:
        monkeypatch.setattr(os, "unlink", unlink)
        unlink(*args, **kwargs)  # type: ignore[arg-type]
        (resources / listed[1]).unlink()

    monkeypatch.setattr(os, "unlink", unlink_as_another_takes_the_next)
    render.recreate(resources)
    assert resources.is_dir() and not any(resources.iterdir())


def test_two_writers_of_one_resource_file_never_fail_each_other(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A render and the controller may write the same runtime file at once; Go's os.Create
    never fails for that (site_state.go@2.1.3 marshal). Here the second writer runs whole
    between the first one's write of its temporary file and its rename."""
    directory = tmp_path / "runtime" / "resources"
    directory.mkdir(parents=True)
    rendered = res.new("Certificate", "skupper-service-ca", "models", {"ca": ""})
    by_controller = res.new("Certificate", "skupper-service-ca", "models", {"ca": "x"})
    replace = Path.replace

    def another_writer_first(self: Path, target: Path) -> Path:
        monkeypatch.setattr(Path, "replace", replace)
        res.write(directory, by_controller, create=False)
        return replace(self, target)

    monkeypatch.setattr(Path, "replace", another_writer_first)
    written = res.write(directory, rendered)
    assert res.load_dir(directory) == [rendered]  # the last rename wins, as the last write
    assert [p.name for p in directory.iterdir()] == [written.name]
