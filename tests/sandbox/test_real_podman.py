"""``real_podman``'s pure parts: a host's podman configuration, the skeleton image and the
choice between real and emulated podman (the probe itself: test_real_podman_world.py)."""

from __future__ import annotations

import io
import subprocess
import tarfile
import tomllib
from pathlib import Path

import pytest

from skupper_sandbox import real_podman


def test_a_host_store_names_every_path_of_its_own_and_what_this_machine_needs(
    tmp_path: Path,
) -> None:
    store = real_podman.StoreConfig(
        tmp_path / "podman", volumes=("/usr:/usr:ro",), env={"SKMCP_SANDBOX_HOST": "/h x"}
    )
    store.write()
    conf = tomllib.loads(store.containers_conf.read_text())
    assert conf["containers"]["default_ulimits"] == []
    assert conf["containers"]["volumes"] == ["/usr:/usr:ro"]
    assert conf["containers"]["env"] == ["SKMCP_SANDBOX_HOST=/h x"]
    engine = conf["engine"]
    assert (engine["runtime"], engine["cgroup_manager"], engine["events_logger"]) == (
        "runc",
        "cgroupfs",
        "file",
    )
    assert engine["conmon_path"][0] == "/usr/bin/conmon"  # not the world's emulated conmon
    storage = tomllib.loads(store.storage_conf.read_text())["storage"]
    assert storage["runroot"] == str(store.runroot)  # short: see StoreConfig.runroot
    assert len(storage["runroot"]) <= len("/run/skmcp-") + 12
    own = [
        storage["graphroot"],
        engine["tmp_dir"],
        engine["volume_path"],
        engine["events_logfile_path"],
        conf["network"]["network_config_dir"],
    ]
    assert all(Path(p).is_relative_to(store.root) for p in own)
    assert store.env_vars() == {
        "CONTAINERS_CONF": str(store.containers_conf),
        "CONTAINERS_STORAGE_CONF": str(store.storage_conf),
    }


def test_the_skeleton_is_empty_directories_and_the_merged_usr_links() -> None:
    """Empty but for the router image's user: skupper-router's runner (uid and group 10000)."""
    with tarfile.open(fileobj=io.BytesIO(real_podman.skeleton_tar())) as tar:
        members = {m.name: m for m in tar.getmembers()}
        passwd = tar.extractfile("etc/passwd")
        assert passwd is not None
        users = passwd.read().decode().splitlines()
    assert members["bin"].issym() and members["bin"].linkname == "usr/bin"
    assert members["tmp"].isdir() and members["tmp"].mode == 0o1777
    assert "runner:x:10000:10000::/home/runner:/bin/sh" in users
    written = {"etc/passwd", "etc/group"}
    assert all(m.size == 0 for name, m in members.items() if name not in written)


def test_the_default_is_auto_and_the_variable_can_ask_for_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(real_podman, "available", lambda: False)
    chosen = real_podman.choose(None, env={})
    assert chosen.kind == "emulated" and "scripts/host-deps.sh" in chosen.reason
    with pytest.raises(ValueError, match="--podman real"):
        real_podman.choose(None, env={"SKMCP_SANDBOX_PODMAN": "real"})
    assert real_podman.choose("emulated", env={"SKMCP_SANDBOX_PODMAN": "real"}).kind == ("emulated")
    with pytest.raises(ValueError, match="one of real, emulated, auto"):
        real_podman.choose(None, env={"SKMCP_SANDBOX_PODMAN": "podman5"})


def test_without_podman_real_fails_and_auto_says_why_it_chose_the_emulation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(real_podman, "available", lambda: False)
    with pytest.raises(ValueError, match="--podman real: no /usr/bin/podman with runc"):
        real_podman.choose("real")
    chosen = real_podman.choose("auto")
    assert chosen.kind == "emulated" and "scripts/host-deps.sh" in chosen.reason


@pytest.mark.spawns
def test_auto_takes_real_podman_where_a_probe_container_runs() -> None:
    if not real_podman.available():
        pytest.skip("no podman with runc here")
    chosen = real_podman.choose("auto", env={})
    assert (chosen.kind, chosen.reason) == ("real", "/usr/bin/podman ran a probe container")


def test_the_model_server_volumes_round_trip_through_up_options() -> None:
    from skupper_sandbox.cli import _parser, _world_spec, up_options

    args = ["up", "--model-server", "serve"]
    spec = _world_spec(_parser().parse_args([*args, "--model-server-volume", "/srv/a"]))
    assert spec.model_server_volumes == ("/srv/a",)
    assert _world_spec(_parser().parse_args(["up", *up_options(spec)])) == spec


def test_the_podman_option_round_trips_through_up_options() -> None:
    from skupper_sandbox.cli import _parser, _world_spec, up_options

    spec = _world_spec(_parser().parse_args(["up", "--podman", "auto", "--root-host", "local"]))
    assert (spec.podman, spec.root_hosts) == ("auto", frozenset({"local"}))
    assert _world_spec(_parser().parse_args(["up", *up_options(spec)])) == spec
    assert _world_spec(_parser().parse_args(["up"])).podman is None


@pytest.mark.spawns
def test_a_mount_left_under_a_store_is_detached_so_the_store_can_go(tmp_path: Path) -> None:
    """The overlay driver's private bind mount of ``storage/overlay`` outlives a killed API
    service; the store's removal detaches it."""
    overlay = tmp_path / "store" / "storage" / "overlay"
    overlay.mkdir(parents=True)
    done = subprocess.run(["mount", "--bind", str(overlay), str(overlay)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"no bind mount here: {done.stderr.decode(errors='replace')}")
    real_podman.unmount_left(tmp_path / "store")
    assert str(overlay) not in Path("/proc/self/mountinfo").read_text()


def test_the_files_a_model_servers_command_names_are_its_absolute_paths_outside_usr(
    tmp_path: Path,
) -> None:
    script = tmp_path / "server.py"
    script.write_text("")
    model = tmp_path / "m.gguf"
    model.write_text("")
    command = (
        f"/bin/sh -c 'exec python3 {script}' {script} --model={model} -m {model} "
        f"/usr/bin/env {tmp_path} {tmp_path / 'missing.py'} relative.py"
    )
    # a word inside a shell string, /bin/sh (/usr/bin/dash), a directory, a missing file
    # and a relative path are not mounted; each file once
    assert real_podman.command_files(command) == [str(script), str(model)]
    assert real_podman.command_files(None) == []
    assert real_podman.command_files("python3 'unbalanced") == []
