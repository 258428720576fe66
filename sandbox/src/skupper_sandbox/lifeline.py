"""A child process that ends when the process that started it ends.

The Kubernetes imitation starts its router pods in sessions of their own, as a kubelet's
containers are not in its process group. It stops them when it is stopped, but a cluster
that is killed (a caller's grace that ran out, a SIGKILL) cannot: its routers ran on,
holding their addresses for whatever a later run started there. Linux's parent-death
signal (``prctl(2)``, ``PR_SET_PDEATHSIG``) ties them to it. The child sets it on itself,
first thing in its ``main``, when the starter named itself in the environment; it outlives
``exec`` (the real router's launcher becomes ``skrouterd``). Linux sends it when the
*thread* that forked the child ends, so start the child from one that lives as long as the
process: the kube's event loop, on its main thread.

A leaf: it imports nothing of the sandbox.
"""

from __future__ import annotations

import ctypes
import os
import signal
from collections.abc import MutableMapping

#: The pid of the process whose end ends this one (set by the starter, read by the child)
PARENT_VAR = "SKMCP_SANDBOX_DIE_WITH"
_PR_SET_PDEATHSIG = 1
_LIBC = ctypes.CDLL(None, use_errno=True)  # this process's own symbols: libc's prctl


def tie(env: MutableMapping[str, str]) -> None:
    """Have the child started with ``env`` end when this process ends."""
    env[PARENT_VAR] = str(os.getpid())


def hold() -> None:
    """In the child: end (SIGKILL, which the starter's kill cannot follow with anything
    stronger) when the process named by ``PARENT_VAR`` ends, or at once if it already has.
    Nothing when the variable is not set: the child was started some other way."""
    named = os.environ.pop(PARENT_VAR, None)
    if not named:
        return
    if _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG)")
    # the starter may have ended between our fork and the prctl: then nothing signals us
    if os.getppid() != int(named):
        os._exit(1)
