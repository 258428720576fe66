"""This machine's real podman, one storage per sandbox host.

A host's podman keeps everything under ``HOST/podman/``: its ``containers.conf`` and
``storage.conf`` (``CONTAINERS_CONF``, ``CONTAINERS_STORAGE_CONF``), its image and container
storage, run directory, libpod tmp dir and event log. ``podman ps`` on one host therefore
lists that host's containers only, and the machine's own podman setup is never read or
written (``CONTAINERS_CONF`` replaces ``/etc/containers/containers.conf`` as a whole).

What this machine needs, measured on Debian 12 with podman 4.3.1 (tests/podman_real/):
``runc`` (``crun`` refuses hybrid cgroups), ``cgroupfs`` (no systemd), an empty
``default_ulimits`` (otherwise "setrlimit RLIMIT_NOFILE: Operation not permitted"), and the
real ``conmon`` named outright (the world's PATH has the emulated one first).

There is no registry: the images are one local skeleton (``podman import`` of a tarball of
empty directories and the merged-/usr links) tagged with each name the sandbox uses, the
machine's ``/usr`` and the sandbox's Python tree mounted into every container read-only
(``[containers] volumes``). ``--rootfs /:O`` works rootful only (rootless: the overlay mount
is refused), so the imported image is the one way for both.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shlex
import shutil
import subprocess
import sys
import tarfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PODMAN = "/usr/bin/podman"
CONMON_PATHS = ("/usr/bin/conmon", "/usr/libexec/podman/conmon")
BASE_IMAGE = "localhost/skupper-mcp-sandbox/base:1"
#: The shell images a host has, as the emulation runs any command in them
#: (``emulated/images.py`` ``SHELL_IMAGES``): the skeleton under their names, its programs
#: the machine's own, since no registry is reached
SHELL_TAGS = ("docker.io/library/busybox:latest", "docker.io/library/alpine:latest")
STORE_DIR = "podman"
RUNROOT_PARENT = "/run"
TIMEOUT = 120.0
#: Where a podman command the sandbox runs as a host's user runs: every user can enter it
WORKING_DIR = "/"

#: The skeleton's directories, and its links onto /usr (Debian 12 has a merged /usr).
_SKELETON_DIRS = ("usr", "etc", "tmp", "run", "proc", "sys", "dev", "home", "root", "var/tmp")
_SKELETON_LINKS = {"bin": "usr/bin", "lib": "usr/lib", "lib64": "usr/lib64", "sbin": "usr/sbin"}
_SKELETON_FILES = ("etc/passwd", "etc/group", "etc/hosts", "etc/resolv.conf")
#: The skupper-router image's own user (its Containerfile: ``useradd --uid 10000 runner``,
#: then ``USER 10000``): with a passwd entry, a container run as 10000 gets group 10000;
#: without one podman gives it group 0, which rootless podman maps to the user's own group.
_SKELETON_CONTENT = {
    "etc/passwd": b"root:x:0:0:root:/root:/bin/sh\nrunner:x:10000:10000::/home/runner:/bin/sh\n",
    "etc/group": b"root:x:0:\nrunner:x:10000:\n",
}


class RealPodmanError(RuntimeError):
    """A podman command of the sandbox's own set-up failed."""


@dataclass(frozen=True)
class RunAs:
    """The user a rootless store belongs to: the sandbox's own podman commands on it run as
    that user, with the runtime directory its logins use (rootless podman keeps its run
    root there, ``$XDG_RUNTIME_DIR/containers``, and libpod's database remembers the first
    one it saw)."""

    uid: int
    gid: int
    groups: tuple[int, ...]
    home: str
    runtime_dir: str

    def env(self) -> dict[str, str]:
        return {"HOME": self.home, "XDG_RUNTIME_DIR": self.runtime_dir}

    def options(self) -> dict[str, Any]:
        """What makes a child run as the user: its ids, and a working directory it can
        enter (``/``): a child inherits its parent's otherwise, and podman, started in a
        directory its user cannot enter (a checkout in a 0700 directory), stops with
        ``cannot chdir to <it>: Permission denied``."""
        return {
            "user": self.uid,
            "group": self.gid,
            "extra_groups": list(self.groups),
            "cwd": WORKING_DIR,
        }


def _as(as_user: RunAs | None, env: Mapping[str, str]) -> tuple[dict[str, str], dict[str, Any]]:
    """The environment and subprocess options of a podman command run as ``as_user``."""
    if as_user is None:
        return dict(env), {}
    return {**env, **as_user.env()}, as_user.options()


def _toml_list(items: Sequence[str]) -> str:
    return "[" + ", ".join(json.dumps(item) for item in items) + "]"


@dataclass(frozen=True)
class StoreConfig:
    """One host's podman configuration and storage, under ``root``."""

    root: Path
    volumes: tuple[str, ...] = ()  # host:container:options, mounted into every container
    env: Mapping[str, str] = field(default_factory=dict)  # set in every container

    @property
    def runroot(self) -> Path:
        """The store's run directory, at a short path of its own: under a world's deep
        directory, conmon's exit command never restarted a container (``--restart always``
        left it ``stopped``, silently: measured with a 60-character store path, fine at
        16), so the path depends on the store's only through a digest."""
        digest = hashlib.sha256(str(self.root.resolve()).encode()).hexdigest()[:12]
        return Path(RUNROOT_PARENT) / f"skmcp-{digest}"

    @property
    def containers_conf(self) -> Path:
        return self.root / "containers.conf"

    @property
    def storage_conf(self) -> Path:
        return self.root / "storage.conf"

    def write(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        env = [f"{key}={value}" for key, value in self.env.items()]
        self.containers_conf.write_text(
            "[containers]\n"
            "default_ulimits = []\n"
            'log_driver = "k8s-file"\n'
            f"volumes = {_toml_list(self.volumes)}\n"
            f"env = {_toml_list(env)}\n"
            "[engine]\n"
            'runtime = "runc"\n'
            'cgroup_manager = "cgroupfs"\n'
            'events_logger = "file"\n'
            f"conmon_path = {_toml_list(CONMON_PATHS)}\n"
            f"events_logfile_path = {json.dumps(str(self.root / 'events.log'))}\n"
            f"tmp_dir = {json.dumps(str(self.root / 'tmp'))}\n"
            f"volume_path = {json.dumps(str(self.root / 'volumes'))}\n"
            "[network]\n"
            f"network_config_dir = {json.dumps(str(self.root / 'networks'))}\n"
        )
        self.storage_conf.write_text(
            "[storage]\n"
            'driver = "overlay"\n'
            f"graphroot = {json.dumps(str(self.root / 'storage'))}\n"
            f"runroot = {json.dumps(str(self.runroot))}\n"
            # rootless podman ignores graphroot and runroot here (c/storage
            # types/options.go getRootlessStorageOpts): its graph root is this
            f"rootless_storage_path = {json.dumps(str(self.root / 'storage'))}\n"
        )

    def env_vars(self) -> dict[str, str]:
        """What makes ``podman`` use this store."""
        return {
            "CONTAINERS_CONF": str(self.containers_conf),
            "CONTAINERS_STORAGE_CONF": str(self.storage_conf),
        }


def available() -> bool:
    return os.access(PODMAN, os.X_OK) and shutil.which("runc") is not None


def podman(
    env: Mapping[str, str], *args: str, timeout: float = TIMEOUT, as_user: RunAs | None = None
) -> str:
    """Run the real podman with ``env`` (as ``as_user``: a rootless store's); its stdout, or
    RealPodmanError with its stderr."""
    run_env, options = _as(as_user, env)
    done = subprocess.run(
        [PODMAN, *args], env=run_env, capture_output=True, text=True, timeout=timeout, **options
    )
    if done.returncode != 0:
        raise RealPodmanError(
            f"podman {' '.join(args[:2])} exited {done.returncode}: {done.stderr.strip()[-400:]}"
        )
    return done.stdout


def skeleton_tar() -> bytes:
    """A root filesystem of empty directories whose programs come from a mounted /usr."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name in _SKELETON_DIRS:
            info = tarfile.TarInfo(name)
            info.type = tarfile.DIRTYPE
            info.mode = 0o1777 if name.endswith("tmp") else 0o755
            tar.addfile(info)
        for name, target in _SKELETON_LINKS.items():
            info = tarfile.TarInfo(name)
            info.type = tarfile.SYMTYPE
            info.linkname = target
            tar.addfile(info)
        for name in _SKELETON_FILES:
            info = tarfile.TarInfo(name)
            info.mode = 0o644
            content = _SKELETON_CONTENT.get(name, b"")
            info.size = len(content)
            tar.addfile(info, io.BytesIO(content))
    return buffer.getvalue()


def import_base_image(
    env: Mapping[str, str], store: Path, tags: Sequence[str] = (), as_user: RunAs | None = None
) -> None:
    """Import the skeleton as BASE_IMAGE into the store, and tag it with each of ``tags``."""
    tarball = store / "skeleton.tar"
    tarball.write_bytes(skeleton_tar())
    tarball.chmod(0o644)
    podman(env, "import", "--quiet", str(tarball), BASE_IMAGE, as_user=as_user)
    tarball.unlink()
    for tag in tags:
        podman(env, "tag", BASE_IMAGE, tag, as_user=as_user)


def remove_store(env: Mapping[str, str], store: Path, as_user: RunAs | None = None) -> None:
    """Remove every container and image of the store, then the store and its run
    directory."""
    run_env, options = _as(as_user, env)
    for args in (("rm", "--all", "--force", "--time", "0"), ("rmi", "--all", "--force")):
        done = subprocess.run(
            [PODMAN, *args], env=run_env, capture_output=True, text=True, timeout=TIMEOUT, **options
        )
        if done.returncode != 0 and store.exists():
            print(f"podman {args[0]} in {store}: {done.stderr.strip()[-300:]}", file=sys.stderr)
    shutil.rmtree(StoreConfig(store).runroot, ignore_errors=True)
    unmount_left(store)
    shutil.rmtree(store, ignore_errors=True)


def unmount_left(store: Path) -> None:
    """Detach what is still mounted under the store: the overlay driver's private bind
    mount of ``storage/overlay`` stays when the last podman process of the store (its API
    service) was killed rather than shut down, and would keep the store from removal."""
    root = str(store.resolve())
    mounted = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        point = line.split()[4].replace("\\040", " ")
        if point == root or point.startswith(root + "/"):
            mounted.append(point)
    for point in sorted(mounted, key=len, reverse=True):  # the deepest first
        subprocess.run(["umount", "--lazy", point], capture_output=True, timeout=TIMEOUT)


@dataclass(frozen=True)
class Listed:
    """A container as ``podman ps -a --format json`` lists it (what the sandbox reads)."""

    name: str
    state: str
    pid: int
    exit_code: int
    labels: dict[str, str]


def store_containers(env: Mapping[str, str], as_user: RunAs | None = None) -> list[Listed]:
    """``podman ps -a --format json`` of the store; RealPodmanError when it is not the list
    of containers podman prints."""
    try:
        rows = json.loads(podman(env, "ps", "-a", "--format", "json", as_user=as_user) or "[]")
        return [
            Listed(
                name=str(row["Names"][0]),
                state=str(row["State"]),
                pid=int(row.get("Pid") or 0),
                exit_code=int(row.get("ExitCode") or 0),
                labels={str(k): str(v) for k, v in (row.get("Labels") or {}).items()},
            )
            for row in rows
        ]
    except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
        raise RealPodmanError(f"podman ps -a --format json: not a container list: {exc}") from exc


# --- a sandbox host's real podman ------------------------------------------------------

#: The world's modes (``skupper-sandbox up --podman``).
MODES = ("real", "emulated", "auto")
MODE_VAR = "SKMCP_SANDBOX_PODMAN"


@dataclass(frozen=True)
class Choice:
    """The podman a world's hosts use, and why."""

    kind: str  # real | emulated
    reason: str


def probe() -> str | None:
    """Why this machine's podman cannot run a sandbox container (None: it can): one
    container from the skeleton image, in a store of its own, removed after."""
    if not available():
        return f"no {PODMAN} with runc (scripts/host-deps.sh installs them)"
    import tempfile

    with tempfile.TemporaryDirectory(prefix="skmcp-podman-probe-") as tmp:
        store = StoreConfig(Path(tmp), volumes=("/usr:/usr:ro",))
        store.write()
        env = {"PATH": "/usr/bin:/bin", **store.env_vars()}
        try:
            import_base_image(env, store.root)
            podman(env, "run", "--rm", "--network", "host", BASE_IMAGE, "/bin/true")
        except (RealPodmanError, OSError, subprocess.TimeoutExpired) as exc:
            return f"a probe container did not run: {exc}"
        finally:
            remove_store(env, store.root)
    return None


def choose(mode: str | None, env: Mapping[str, str] | None = None) -> Choice:
    """``real`` fails (ValueError) when the probe container does not run; ``auto`` takes
    real when it does; ``emulated``: the emulation. None: ``$SKMCP_SANDBOX_PODMAN`` (how a
    whole test run asks for one), else ``auto``. Every SSH host of a world can use real
    podman (a root host rootful, the others rootless under users made for the world)."""
    if mode is None:
        mode = (os.environ if env is None else env).get(MODE_VAR) or "auto"
    if mode not in MODES:
        raise ValueError(f"--podman {mode}: one of {', '.join(MODES)}")
    if mode == "emulated":
        return Choice("emulated", "asked for")
    why_not = probe()
    if why_not is None:
        return Choice("real", f"{PODMAN} ran a probe container")
    if mode == "real":
        raise ValueError(f"--podman real: {why_not}")
    return Choice("emulated", why_not)


def host_store(host_dir: Path) -> StoreConfig:
    return StoreConfig(Path(host_dir) / STORE_DIR)


def is_real(host_dir: Path) -> bool:
    """Whether the host uses the real podman (its store's configuration exists)."""
    return host_store(host_dir).containers_conf.is_file()


def host_env(host_dir: Path, base: Mapping[str, str]) -> dict[str, str]:
    return {**base, **host_store(host_dir).env_vars()}


@dataclass(frozen=True)
class ImageSpec:
    """A local image: its name, and the command and variables the skeleton gets."""

    name: str
    argv: Sequence[str]
    env: Mapping[str, str] = field(default_factory=dict)
    user: str | None = None  # the image's USER (None: root)


def sandbox_trees(python: str) -> list[str]:
    """The directories the sandbox's Python runs from: the interpreter's prefix (a venv),
    where its packages are (a venv's site-packages may be a link elsewhere) and the source
    trees of the sandbox and the product (editable installs)."""
    import site

    import skupper_sandbox

    trees = {Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve()}
    trees.update(Path(p).resolve() for p in site.getsitepackages() if Path(p).is_dir())
    trees.add(Path(python).resolve().parent.parent)
    trees.add(Path(skupper_sandbox.__file__).resolve().parent.parent)
    kept = sorted(t for t in trees if not str(t).startswith("/usr"))
    return [str(t) for t in kept if not any(str(t).startswith(str(o) + "/") for o in kept)]


def command_files(command: str | None) -> list[str]:
    """The files a model server's COMMAND names by absolute path (its script, say) outside
    what every container sees already (``/usr``): a real container's root is the skeleton
    image, so each is mounted read-only at its own path. A word that is no existing
    regular file (an option, a directory, a URL) is left alone."""
    import shlex

    try:
        words = shlex.split(command or "")
    except ValueError:
        return []
    found = []
    for word in words:
        path = Path(word.split("=", 1)[-1]) if word.startswith("--") else Path(word)
        # /bin/sh is /usr/bin/dash here (a merged /usr): already in every container
        if path.is_absolute() and path.is_file() and not str(path.resolve()).startswith("/usr/"):
            found.append(str(path))
    return list(dict.fromkeys(found))


def prepare_host(
    host_dir: Path,
    world_dir: Path,
    env: Mapping[str, str],
    images: Sequence[ImageSpec],
    python: str = sys.executable,
    extra_volumes: Sequence[str] = (),
    as_user: RunAs | None = None,
) -> StoreConfig:
    """Write the host's store configuration and import ``images`` into it (a rootless
    store: as ``as_user``, who owns it). Every container sees the machine's /usr and the
    sandbox's Python read-only, the world directory (its hosts' files, as the emulated host
    paths are) read-write, and ``env``."""
    volumes = ["/usr:/usr:ro", *(f"{t}:{t}:ro" for t in sandbox_trees(python))]
    volumes += [f"{world_dir}:{world_dir}", *extra_volumes]
    store = StoreConfig(Path(host_dir) / STORE_DIR, volumes=tuple(volumes), env=dict(env))
    store.write()
    if as_user is not None:
        for path in (store.root, store.containers_conf, store.storage_conf):
            os.chown(path, as_user.uid, as_user.gid)
    run_env = {"PATH": "/usr/bin:/bin", **store.env_vars()}
    import_base_image(run_env, store.root, SHELL_TAGS, as_user=as_user)
    import_images(store, images, as_user)
    return store


def import_images(store: StoreConfig, images: Sequence[ImageSpec], as_user: RunAs | None) -> None:
    """Import ``images`` into the host's store (``prepare_host``; ``sandbox upgrade``: the
    new release's images, as a package upgrade's pull leaves them)."""
    run_env = {"PATH": "/usr/bin:/bin", **store.env_vars()}
    tarball = store.root / "skeleton.tar"
    tarball.write_bytes(skeleton_tar())
    if as_user is not None:
        os.chown(tarball, as_user.uid, as_user.gid)
    try:
        for image in images:
            changes = [f"CMD {json.dumps(list(image.argv))}"]
            changes += [f"ENV {key}={value}" for key, value in image.env.items()]
            changes += [f"USER {image.user}"] if image.user else []
            args = [arg for change in changes for arg in ("--change", change)]
            podman(run_env, "import", "--quiet", *args, str(tarball), image.name, as_user=as_user)
    finally:
        tarball.unlink(missing_ok=True)


def remove_host(host_dir: Path, as_user: RunAs | None = None) -> None:
    """Remove the host's containers, images and store (nothing when it has none)."""
    store = host_store(host_dir)
    if not store.containers_conf.is_file():
        return
    remove_store(_store_env(host_dir), store.root, as_user)


def _store_env(host_dir: Path) -> dict[str, str]:
    """What a podman command on the host's own store runs with."""
    return {"PATH": "/usr/bin:/bin", **host_store(host_dir).env_vars()}


def host_containers(host_dir: Path, as_user: RunAs | None = None) -> list[Listed]:
    return store_containers(_store_env(host_dir), as_user)


def log_tail(host_dir: Path, name: str, as_user: RunAs | None = None, lines: int = 20) -> str:
    """The last ``lines`` of a container's output as ``podman logs`` gives it (stdout and
    stderr together), or "" when podman cannot give it."""
    run_env, options = _as(as_user, _store_env(host_dir))
    try:
        done = subprocess.run(
            [PODMAN, "logs", "--tail", str(lines), name],
            env=run_env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            **options,
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return (done.stdout + done.stderr).strip() if done.returncode == 0 else ""


#: The world's ``bin/podman`` when some host uses the real podman: the host's own store
#: (its configuration named by the two variables) on a real-podman host, the emulation
#: (the command client, as ``.emulated/podman``) on the others. On a real-podman host each
#: run adds its first argument to the store's ``calls`` (``CALLS``: a shell redirection, no
#: process), as the command server's ``commands.stats`` records the emulated tools: how
#: many podman processes a read starts is what bench/status.py counts.
#: A host with the ``podman-warns`` quirk has the warning libpod's runtime prints in
#: ``warning`` beside its store's configuration, and the wrapper prints it as the
#: emulation does (``emulated/podman/warnings.py``, ``cli.py``): once, before the verb runs,
#: unless ``$PODMAN_IGNORE_CGROUPSV1_WARNING`` is set, the global ``--log-level`` is above
#: warn, or the command is ``--version``/``version``; logrus's terminal form on a terminal.
WARNING_FILE = "warning"
#: Beside a store's configuration on a host with a pull quirk (``slow-pull``, ``pull-fails``):
#: the wrapper hands ``pull`` and ``image exists`` to ``emulated/pulls.py``.
PULL_MARKER = "pull-quirk"
WRAPPER = """#!/bin/sh
store="${SKMCP_SANDBOX_HOST:-/nonexistent}/podman"
if [ -r "$store/containers.conf" ]; then
    { printf '%%s\\n' "${1:-}" >> "$store/calls"; } 2>/dev/null
    CONTAINERS_CONF="$store/containers.conf"
    CONTAINERS_STORAGE_CONF="$store/storage.conf"
    export CONTAINERS_CONF CONTAINERS_STORAGE_CONF
    if [ -r "$store/warning" ] && [ -z "${PODMAN_IGNORE_CGROUPSV1_WARNING+set}" ]; then
        level=warn verb='' next=''
        for arg in "$@"; do
            if [ -n "$next" ]; then
                [ "$next" = level ] && level=$arg
                next=
                continue
            fi
            case $arg in
                --log-level=*) level=${arg#--log-level=} ;;
                --log-level) next=level ;;
                --version) verb=version; break ;;
                %(value_flags)s) next=value ;;
                --*=*|--syslog|--noout) ;;
                *) verb=$arg; break ;;
            esac
        done
        case $level:$verb in
            *:version) ;;
            trace:*|debug:*|info:*|warn:*|warning:*)
                message=$(cat "$store/warning")
                if [ -t 2 ]; then
                    printf 'WARN[0000] %%s\\n' "$message" >&2
                else
                    stamp=$(date +%%Y-%%m-%%dT%%H:%%M:%%S%%:z)
                    case $stamp in *+00:00) stamp="${stamp%%+00:00}Z" ;; esac
                    printf 'time="%%s" level=warning msg="%%s"\\n' "$stamp" "$message" >&2
                fi
                ;;
        esac
    fi
    # a host with a pull quirk: its Skupper images are pulled as emulated/pulls.py says
    if [ -r "$store/%(pull_marker)s" ]; then
        case $1 in
            pull|image)
                %(python)s -m skupper_sandbox.emulated.pulls "$@"
                rc=$?
                [ "$rc" -eq 99 ] || exit "$rc"
                ;;
        esac
    fi
    exec /usr/bin/podman "$@"
fi
exec "${0%%/*}/.emulated/podman" "$@"
"""


#: The file of a real-podman host's store where ``WRAPPER`` counts the podman it ran.
CALLS = "calls"


def podman_calls(host_dir: Path) -> list[str]:
    """The first argument of every podman the host ran through its ``PATH`` so far (its
    logins and its units: ``WRAPPER``)."""
    try:
        return (Path(host_dir) / STORE_DIR / CALLS).read_text().splitlines()
    except OSError:
        return []


def write_wrapper(bin_dir: Path) -> None:
    """Put the wrapper in place of the emulated ``podman``, which moves to .emulated/."""
    shim = Path(bin_dir) / "podman"
    emulated = Path(bin_dir) / ".emulated"
    emulated.mkdir(exist_ok=True)
    moved = emulated / "podman"
    moved.unlink(missing_ok=True)
    if shim.is_symlink():
        moved.symlink_to(Path("..") / os.readlink(shim))
    else:
        shutil.copy2(shim, moved)
    shim.unlink()
    from skupper_sandbox.emulated.podman.cli import GLOBAL_VALUE_FLAGS

    value_flags = "|".join(sorted(GLOBAL_VALUE_FLAGS - {"--log-level"}))
    shim.write_text(
        WRAPPER
        % {
            "value_flags": value_flags,
            "pull_marker": PULL_MARKER,
            "python": shlex.quote(sys.executable),
        }
    )
    shim.chmod(0o755)
