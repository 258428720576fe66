"""The PATH shims of a sandbox world: `DIR/bin/<tool>` runs the emulated tool.

Every command run on a sandbox host has `DIR/bin` first on its PATH, so `podman`,
`systemctl`, `loginctl`, `curl`, `journalctl`, `skupper` and `conmon` there are the
emulated ones, and `id` and `whoami` report the host's user (its `ident` file) rather
than this machine's.

With a C compiler, the emulated tools are links to one small compiled client that has the
world's command server run them (``skupper_sandbox.commands``): a few milliseconds each, as
real binaries. Without one, each is a script that starts Python (40-140 ms of CPU each).
"""

from __future__ import annotations

import logging
import shlex
import shutil
import subprocess
from importlib import resources
from pathlib import Path

from skupper_sandbox.commands.server import TOOLS
from skupper_sandbox.hostenv import ROUTER_IMAGE_TOOLS

log = logging.getLogger("skupper_sandbox.shims")

#: The compiled command client in ``DIR/bin``; the tools are symbolic links to it.
COMMAND_CLIENT = ".command-client"

# coreutils `id` for the forms scripts use (`id`, `-u`, `-g`, `-G`, with `-n`), from the
# host's ident file ("uid gid user group"); off a sandbox host, the machine's own `id`.
_ID_SHIM = r"""#!/bin/sh
ident="${SKMCP_SANDBOX_HOST:-/nonexistent}/ident"
[ -r "$ident" ] || exec /usr/bin/id "$@"
read -r uid gid user group < "$ident"
what= names=
for arg in "$@"; do
  case "$arg" in
    -u|--user) what=u ;; -g|--group) what=g ;; -G|--groups) what=G ;;
    -n|--name) names=1 ;; -r|--real) ;;
    -un|-nu) what=u names=1 ;; -gn|-ng) what=g names=1 ;; -Gn|-nG) what=G names=1 ;;
    -*) echo "id: invalid option -- '${arg#-}'" >&2; exit 1 ;;
    *) if [ "$arg" != "$user" ] && [ "$arg" != "$uid" ]; then
         echo "id: '$arg': no such user" >&2; exit 1
       fi ;;
  esac
done
case "$what" in
  u) if [ -n "$names" ]; then echo "$user"; else echo "$uid"; fi ;;
  g|G) if [ -n "$names" ]; then echo "$group"; else echo "$gid"; fi ;;
  *) echo "uid=$uid($user) gid=$gid($group) groups=$gid($group)" ;;
esac
"""
_WHOAMI_SHIM = """#!/bin/sh
exec id -un
"""


def write_shims(world_dir: Path, python: str, *, compiled: bool = False) -> Path:
    """Write `world_dir/bin/<tool>`: links to the compiled command client when ``compiled``
    and a C compiler can build it, else scripts that exec `python -m <module>`; return the
    dir. Either way a tool runs the same emulation (the client falls back to Python itself
    when the world's command server is not running)."""
    bin_dir = Path(world_dir) / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    client = build_client(bin_dir, python) if compiled else None
    for tool in TOOLS:
        shim = bin_dir / tool
        shim.unlink(missing_ok=True)
        if client is not None:
            shim.symlink_to(client.name)
            continue
        module = fallback_module(tool)
        shim.write_text(f'#!/bin/sh\nexec {shlex.quote(python)} -m {module} "$@"\n')
        shim.chmod(0o755)
    image_tools = Path(world_dir) / ROUTER_IMAGE_TOOLS
    image_tools.mkdir(parents=True, exist_ok=True)
    skmanage = image_tools / "skmanage"
    skmanage.write_text(
        f'#!/bin/sh\nexec {shlex.quote(python)} -m skupper_sandbox.router.skmanage "$@"\n'
    )
    skmanage.chmod(0o755)
    for tool, text in (("id", _ID_SHIM), ("whoami", _WHOAMI_SHIM)):
        (bin_dir / tool).write_text(text)
        (bin_dir / tool).chmod(0o755)
    return bin_dir


def fallback_module(tool: str) -> str:
    """The module ``python -m`` runs for ``tool`` without the command server, the same one
    the compiled client's own fallback runs (client.c): podman's monitor is in its package."""
    package = "emulated.podman" if tool == "conmon" else "emulated"
    return f"skupper_sandbox.{package}.{tool}"


def build_client(bin_dir: Path, python: str) -> Path | None:
    """Compile the command client into ``bin_dir``; None (and why, in the log) when it
    cannot be built here."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        log.warning("no C compiler: emulated commands start Python each time")
        return None
    source = resources.files("skupper_sandbox.commands").joinpath("client.c")
    target = bin_dir / COMMAND_CLIENT
    define = f"-DSKMCP_PYTHON={_c_string(python)}"
    with resources.as_file(source) as path:
        done = subprocess.run(
            [compiler, "-O2", "-o", str(target), define, str(path)],
            capture_output=True,
            text=True,
            timeout=60,
        )
    if done.returncode != 0:
        log.warning("the command client did not compile: %s", done.stderr.strip()[-400:])
        return None
    return target


def _c_string(text: str) -> str:
    """``text`` as a C string literal."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
