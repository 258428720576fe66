"""The PATH shims of a sandbox world: `DIR/bin/<tool>` runs the emulated tool.

Every command run on a sandbox host has `DIR/bin` first on its PATH, so `podman`,
`systemctl`, `loginctl`, `curl` and `skupper` there are the emulated ones, and `id` and
`whoami` report the host's user (its `ident` file) rather than this machine's.
"""

from __future__ import annotations

import shlex
from pathlib import Path

SHIMMED_TOOLS: dict[str, str] = {
    "skupper": "skupper_sandbox.emulated.skupper",
    "podman": "skupper_sandbox.emulated.podman",
    "systemctl": "skupper_sandbox.emulated.systemctl",
    "loginctl": "skupper_sandbox.emulated.loginctl",
    "curl": "skupper_sandbox.emulated.curl",
}


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


def write_shims(world_dir: Path, python: str) -> Path:
    """Write `world_dir/bin/<tool>` scripts that exec `python -m <module>`; return the dir."""
    bin_dir = Path(world_dir) / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    for tool, module in SHIMMED_TOOLS.items():
        shim = bin_dir / tool
        shim.write_text(f'#!/bin/sh\nexec {shlex.quote(python)} -m {module} "$@"\n')
        shim.chmod(0o755)
    for tool, text in (("id", _ID_SHIM), ("whoami", _WHOAMI_SHIM)):
        (bin_dir / tool).write_text(text)
        (bin_dir / tool).chmod(0o755)
    return bin_dir
