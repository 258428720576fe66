"""Small pieces of a fake host on this machine: its tools in a folder, its processes ended."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def tool_dir(directory: Path, **tools: str) -> Path:
    """``directory``, made, with an executable file for each tool (its name: its text): a
    folder to put first on a script's PATH."""
    directory.mkdir(parents=True)
    for name, text in tools.items():
        (directory / name).write_text(text)
        (directory / name).chmod(0o755)
    return directory


def run_python(
    *args: str, cwd: Path, timeout: float, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """This interpreter run with ``args`` in ``cwd``: what it wrote, as text; its exit code is
    the caller's to judge."""
    command = [sys.executable, *args]
    return subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )


def end(process: subprocess.Popen[bytes] | subprocess.Popen[str], grace: float = 10) -> None:
    """Terminate ``process``; kill it if it is still there after ``grace`` seconds."""
    process.terminate()
    try:
        process.wait(grace)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(grace)
