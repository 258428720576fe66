"""Which router a world runs: chosen once, when the world is laid out, and read back.

The imitation (``imitation.Imitation``) by default; a real ``skrouterd`` (``skrouterd.
Skrouterd``) where ``$SKMCP_SKUPPER_ROUTER`` points at an installed one that runs here.
``sandbox up --router auto|real|imitation`` (or ``$SKMCP_SANDBOX_ROUTER``) forces one. The
choice is recorded in ``world.json`` (``router``, ``router_home``), so every container, the
Kubernetes router pod and both controllers agree on it (``for_world``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

from skupper_sandbox.router import seam
from skupper_sandbox.router.imitation import Imitation
from skupper_sandbox.router.seam import HOME_VAR, KIND_VAR
from skupper_sandbox.router.skrouterd import Skrouterd, install_prefix, unusable

__all__ = ["HOME_VAR", "KIND_VAR", "choose", "for_world", "recorded"]

NOT_SET = f"${HOME_VAR} is not set (the installed skrouterd, or its install prefix)"


def choose(wanted: str | None = None, env: Mapping[str, str] | None = None) -> seam.Router:
    """The router for a new world: ``wanted`` (real | imitation | auto) or ``$KIND_VAR``.
    ``auto``: the real one where ``$HOME_VAR`` names one that runs, else the imitation, whose
    ``reason`` then says why (naming ``$HOME_VAR``)."""
    env = os.environ if env is None else env
    wanted = (wanted or env.get(KIND_VAR) or "auto").lower()
    if wanted not in ("auto", "real", "imitation"):
        raise ValueError(f"unknown router {wanted!r}: auto, real or imitation")
    if wanted == "imitation":
        return Imitation(reason="asked for")
    configured = env.get(HOME_VAR)
    if configured:
        home = install_prefix(configured)
        problem = unusable(home)
        if problem is None:
            return Skrouterd(str(home))
        problem = f"${HOME_VAR}={configured}: {problem}"
    else:
        problem = NOT_SET
    if wanted == "real":
        raise FileNotFoundError(f"the real router cannot run: {problem}")
    return Imitation(reason=problem)


def recorded(kind: str | None, home: str | None) -> seam.Router:
    """The router ``world.json`` records (``seam.Router.record``); the imitation when it
    records none (older worlds)."""
    if kind == Skrouterd.kind and home:
        return Skrouterd(home)
    return Imitation()


def for_world(world_dir: str | Path) -> seam.Router:
    """The router a world was built with (``world.json``)."""
    try:
        world = json.loads((Path(world_dir) / "world.json").read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        world = {}
    home = world.get("router_home")
    return recorded(world.get("router"), str(home) if home else None)
