"""Which router a world runs: the real skrouterd when it is at hand, else the imitation.

The real router (skupper-router 3.4.2, built for this kind of machine) lives at
``../shared/skupper-router`` beside the repository, or wherever ``SKMCP_SKUPPER_ROUTER``
points. A fresh clone without it (or a machine missing one of its libraries) gets the
Python imitation in this package. The choice is made once, when the world is built, and
recorded in ``world.json``, so every container, the Kubernetes router pod and the
controllers agree on it.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

HOME_VAR = "SKMCP_SKUPPER_ROUTER"
KIND_VAR = "SKMCP_SANDBOX_ROUTER"  # auto (default) | real | imitation

RouterKind = Literal["real", "imitation"]


@dataclass(frozen=True)
class RouterChoice:
    kind: RouterKind
    home: str | None = None  # the real router's directory (sbin/skrouterd, lib/...)
    reason: str = ""

    @property
    def skrouterd(self) -> Path:
        assert self.home is not None
        return Path(self.home) / "sbin" / "skrouterd"

    @property
    def python_dir(self) -> Path:
        """The router's Python agent (``-I``)."""
        assert self.home is not None
        return Path(self.home) / "lib" / "skupper-router" / "python"

    @property
    def default_config(self) -> Path:
        """The image's default config, used when ``/tmp/skrouterd.json`` could not be written."""
        assert self.home is not None
        return Path(self.home) / "etc" / "skupper-router" / "skrouterd.conf"

    def describe(self) -> str:
        if self.kind == "real":
            return f"router skrouterd {self.version()} (real)"
        return f"router imitation (python; {self.reason})" if self.reason else "router imitation"

    def version(self) -> str:
        try:
            done = subprocess.run(
                [str(self.skrouterd), "--version"], capture_output=True, text=True, timeout=20
            )
        except (OSError, subprocess.TimeoutExpired):
            return "?"
        return done.stdout.strip() or "?"


def default_home() -> Path:
    """``../shared/skupper-router`` relative to the repository this package is in."""
    repository = Path(__file__).resolve().parents[3]
    return repository.parent / "shared" / "skupper-router"


def _unusable(home: Path) -> str | None:
    """Why the router in ``home`` cannot run here, or None when it can."""
    binary = home / "sbin" / "skrouterd"
    if not os.access(binary, os.X_OK):
        return f"no {binary}"
    try:
        done = subprocess.run(
            [str(binary), "--version"], capture_output=True, text=True, timeout=20
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{binary} does not run: {exc}"
    if done.returncode != 0:
        detail = (done.stderr or done.stdout).strip().splitlines()
        # e.g. "error while loading shared libraries: libwebsockets.so.17: ..."
        return f"{binary} does not run: {detail[-1] if detail else done.returncode}"
    return None


def choose(wanted: str | None = None, env: Mapping[str, str] | None = None) -> RouterChoice:
    """The router for a new world: ``wanted`` (real | imitation | auto) or ``$KIND_VAR``."""
    env = os.environ if env is None else env
    wanted = (wanted or env.get(KIND_VAR) or "auto").lower()
    if wanted not in ("auto", "real", "imitation"):
        raise ValueError(f"unknown router {wanted!r}: auto, real or imitation")
    if wanted == "imitation":
        return RouterChoice("imitation", reason="asked for")
    home = Path(env.get(HOME_VAR) or default_home()).resolve()
    problem = _unusable(home)
    if problem is None:
        return RouterChoice("real", str(home))
    if wanted == "real":
        raise FileNotFoundError(f"the real router cannot run: {problem}")
    return RouterChoice("imitation", reason=problem)


def for_world(world_dir: str | Path) -> RouterChoice:
    """The router a world was built with (``world.json``); the imitation for older worlds."""
    try:
        world = json.loads((Path(world_dir) / "world.json").read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return RouterChoice("imitation")
    if world.get("router") == "real" and world.get("router_home"):
        return RouterChoice("real", str(world["router_home"]))
    return RouterChoice("imitation")
