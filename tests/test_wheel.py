"""What a stranger gets: ``python -m build`` makes the sdist and, from it, the wheel; the wheel
holds the product, its example topology and its skill, and nothing of the sandbox; installed
alone in a fresh virtual environment (its dependencies from the index, no kubernetes extra)
its command runs.

Marked ``packaging``: it builds, makes a venv and installs from the index (network, about a
minute), so it runs in ``make e2e``, not ``make unit``. To check more of the installed
command, add a ``Step`` to ``STEPS``: each runs in order in the same venv and working
directory, so a step may use what an earlier one wrote.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from skupper_mcp import data

pytestmark = [pytest.mark.packaging, pytest.mark.slow]

ROOT = Path(__file__).resolve().parent.parent
PRODUCT_SCRIPTS = ROOT / "src" / "skupper_mcp" / "scripts"
BUILD_TIMEOUT = 600.0
STEP_TIMEOUT = 60.0


@dataclass(frozen=True)
class Installed:
    """The built distributions and a fresh venv holding the wheel alone."""

    wheel: Path
    sdist: Path
    venv: Path
    work: Path

    def bin(self, name: str) -> Path:
        return self.venv / "bin" / name

    def run(self, command: list[str]) -> subprocess.CompletedProcess[str]:
        """``command`` in the working directory, with the venv first on PATH and no
        topology of the user's or the repository's to find."""
        environ = {
            **os.environ,
            "PATH": f"{self.venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
            "HOME": str(self.work),
            "XDG_CONFIG_HOME": str(self.work / ".config"),
        }
        environ.pop("SKUPPER_MCP_TOPOLOGY", None)
        environ.pop("PYTHONPATH", None)
        return subprocess.run(
            command,
            cwd=self.work,
            env=environ,
            text=True,
            capture_output=True,
            timeout=STEP_TIMEOUT,
            check=False,
        )


@dataclass(frozen=True)
class Step:
    """One command the installed venv runs (``skupper-mcp`` ARGS unless ``command`` is
    given), its exit code, and a check of its output."""

    title: str
    args: list[str] = field(default_factory=list)
    command: list[str] | None = None
    exit_code: int = 0
    check: Callable[[subprocess.CompletedProcess[str]], None] = lambda _: None


def _says(*words: str) -> Callable[[subprocess.CompletedProcess[str]], None]:
    def check(result: subprocess.CompletedProcess[str]) -> None:
        for word in words:
            assert word in result.stdout, (word, result.stdout)

    return check


def _python(code: str) -> list[str]:
    return ["python", "-c", code]


STEPS: list[Step] = [
    Step("help", ["--help"], check=_says("setup", "status")),
    Step("the sandbox is not a verb of the product", ["sandbox", "up"], exit_code=2),
    Step(
        "the default install leaves the kubernetes extra out",
        command=_python("import importlib.util as u; print(u.find_spec('kubernetes') is None)"),
        check=_says("True"),
    ),
    Step(
        "init writes the starter topology where the user asks",
        ["init", "topology.env"],
        check=_says("topology.env"),
    ),
    Step(
        "init keeps a topology that exists",
        ["init", "topology.env"],
        exit_code=2,
    ),
    Step(
        "the starter topology validates and resolves its profile",
        ["--topology", "topology.env", "resolve", "granite-8b"],
        check=_says("gpu1"),
    ),
    Step(
        "setup --check on the starter names its placeholders instead of dialling them",
        ["--topology", "topology.env", "setup", "--check"],
        exit_code=1,
        check=_says("placeholder"),
    ),
    Step(
        "connect prints a client configuration that starts the installed command",
        ["connect", "goose", "--print", "--topology", "topology.env"],
        check=_says("/bin/skupper-mcp", "serve", "topology.env"),
    ),
    Step(
        "skill install writes the packaged skill where it is told",
        ["skill", "install", "--dir", "skills"],
        check=_says("skills/skupper-mcp/SKILL.md"),
    ),
    Step(
        "the packaged skill",
        command=_python("from skupper_mcp import data; print(data.skill())"),
        check=_says("skupper"),
    ),
]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    base = tmp_path_factory.mktemp("wheel")
    dist = base / "dist"
    built = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(dist), str(ROOT)],
        text=True,
        capture_output=True,
        timeout=BUILD_TIMEOUT,
        check=False,
    )
    assert built.returncode == 0, built.stdout[-4000:] + built.stderr[-4000:]
    (wheel,) = dist.glob("skupper_mcp-*.whl")
    (sdist,) = dist.glob("skupper_mcp-*.tar.gz")
    # A venv of nothing but the interpreter, the wheel installed into it by this process's
    # pip (--python): the wheel and its dependencies from the index as before, without the
    # venv's own pip copied in by ensurepip and started from cold (34 s of wall time on the
    # 2-core machine against 11 s)
    venv = base / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)],
        check=True,
        timeout=BUILD_TIMEOUT,
    )
    pip = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(venv / "bin" / "python"),
            "install",
            "-q",
            str(wheel),
        ],
        text=True,
        capture_output=True,
        timeout=BUILD_TIMEOUT,
        check=False,
    )
    assert pip.returncode == 0, pip.stdout[-4000:] + pip.stderr[-4000:]
    work = base / "work"
    work.mkdir()
    return Installed(wheel, sdist, venv, work)


def test_the_wheel_holds_the_product_its_starter_and_skill_and_nothing_of_the_sandbox(
    installed: Installed,
) -> None:
    names = zipfile.ZipFile(installed.wheel).namelist()
    assert not [n for n in names if "skupper_sandbox" in n or n.endswith(".c")]
    for name in (data.STARTER_TOPOLOGY, data.SKILL):
        assert f"skupper_mcp/data/{name}" in names
        packaged = zipfile.ZipFile(installed.wheel).read(f"skupper_mcp/data/{name}")
        assert packaged.decode() == data.read(name)
    assert "skupper_mcp/py.typed" in names
    assert "skupper_mcp/view/van.html" in names  # the VAN view: the MCP App and --html
    # every shell script the product sends to a host, byte for byte
    for script in sorted(PRODUCT_SCRIPTS.glob("*.sh")):
        packaged = zipfile.ZipFile(installed.wheel).read(f"skupper_mcp/scripts/{script.name}")
        assert packaged.decode() == script.read_text(), script.name
    assert (PRODUCT_SCRIPTS / "framing.sh").exists()
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    metadata = zipfile.ZipFile(installed.wheel).read(
        next(n for n in names if n.endswith(".dist-info/METADATA"))
    )
    # kubernetes only under its extra
    kube = [n for n in metadata.decode().splitlines() if n.startswith("Requires-Dist: kubernetes")]
    assert kube == ['Requires-Dist: kubernetes>=30; extra == "kubernetes"'], kube


def test_the_sdist_holds_the_product_and_no_tests(installed: Installed) -> None:
    with tarfile.open(installed.sdist) as sdist:
        names = sdist.getnames()
    assert not [n for n in names if "/tests/" in n or "skupper_sandbox" in n]
    top = names[0].split("/")[0]
    for name in ("LICENSE", "README.md", "pyproject.toml"):
        assert f"{top}/{name}" in names
    for script in PRODUCT_SCRIPTS.glob("*.sh"):
        assert f"{top}/src/skupper_mcp/scripts/{script.name}" in names


@pytest.mark.parametrize("step", STEPS, ids=[s.title for s in STEPS])
def test_the_installed_command(installed: Installed, step: Step) -> None:
    command = step.command or [str(installed.bin("skupper-mcp")), *step.args]
    result = installed.run(command)
    assert result.returncode == step.exit_code, (step.title, result.stdout, result.stderr)
    step.check(result)


def test_twine_check_accepts_the_distributions(installed: Installed) -> None:
    """PyPI renders the README as the project page: twine check --strict is its verdict on
    the metadata of both distributions (from the build above, not a second one)."""
    checked = subprocess.run(
        [
            sys.executable,
            "-m",
            "twine",
            "check",
            "--strict",
            str(installed.wheel),
            str(installed.sdist),
        ],
        text=True,
        capture_output=True,
        timeout=STEP_TIMEOUT,
        check=False,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.count("PASSED") == 2, checked.stdout
