"""The table of tools both fronts are built from: what neither front's tests would catch."""

from __future__ import annotations

import inspect
import subprocess
import sys
from pathlib import Path
from typing import Annotated, get_args, get_origin

import pytest
from pydantic import BaseModel

from skupper_mcp import results
from skupper_mcp.cli import build_parser
from skupper_mcp.tools import TOOLS


def test_every_function_answers_with_a_model_and_says_what_it_does() -> None:
    for tool in TOOLS:
        function = tool.function
        assert function.__name__ == tool.name
        returned = inspect.signature(function).return_annotation
        assert issubclass(returned, BaseModel), tool.name
        assert returned.__module__ == results.__name__, tool.name
        assert inspect.getdoc(function), tool.name  # the MCP tool's description


def base(annotation: object) -> object:
    return get_args(annotation)[0] if get_origin(annotation) is Annotated else annotation


def test_the_cli_spells_each_functions_parameters() -> None:
    """The CLI's arguments are the function's parameters after the Engine and the progress:
    the same names in the same order, kinds, defaults and choices."""
    for tool in TOOLS:
        engine, progress, *parameters = inspect.signature(tool.function).parameters.values()
        assert (engine.name, progress.name) == ("engine", "progress"), tool.name
        assert [p.name for p in parameters] == [a.name for a in tool.arguments], tool.name
        for parameter, argument in zip(parameters, tool.arguments, strict=True):
            kind = base(parameter.annotation)
            if argument.choices:
                assert get_args(kind) == argument.choices, (tool.name, argument.name)
            else:
                assert kind is argument.kind, (tool.name, argument.name)
            if argument.required:
                assert parameter.default is inspect.Parameter.empty, (tool.name, argument.name)
            else:
                assert parameter.default == argument.default, (tool.name, argument.name)


def test_the_log_components_are_the_models() -> None:
    logs = next(tool for tool in TOOLS if tool.name == "logs")
    component = next(argument for argument in logs.arguments if argument.name == "component")
    assert component.choices == get_args(results.LogComponent)


def test_every_tool_is_a_verb_with_its_arguments() -> None:
    parser = build_parser()
    for tool in TOOLS:
        required = [a.name for a in tool.arguments if a.required and a.kind is str]
        args = parser.parse_args([tool.verb, *["x" for _ in required]])
        assert args.verb == tool.verb
        for argument in tool.arguments:
            expected = "x" if argument.required else argument.default
            assert getattr(args, argument.name) == expected, (tool.verb, argument.name)


@pytest.mark.spawns
def test_the_cli_reads_the_table_without_pydantic() -> None:
    """--help reads the table: it imports no models, renderers or SDK until a verb runs."""
    code = "import sys, skupper_mcp.cli; sys.exit('pydantic' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


@pytest.mark.spawns
def test_the_stdio_start_imports_neither_the_engine_nor_the_yaml_editor(tmp_path: Path) -> None:
    """What an MCP client waits for before tools/list: the CLI's parser and the server built
    on a topology, without the engine (made at the first call) or ruamel.yaml (only connect
    edits a client's YAML file)."""
    topology = tmp_path / "topology.env"
    topology.write_text(
        'PROVIDER_HOSTS="gpu1"\nGPU1_SSH_HOST=127.0.0.2\nGPU1_PUBLIC_HOST=127.0.0.2\n'
        f"GPU1_MODEL_PORT=9000\nSTATE_DIR={tmp_path / 'state'}\n"
    )
    code = (
        "import sys, skupper_mcp.cli as cli, skupper_mcp.server as server\n"
        "cli.build_parser().parse_args(['--topology', sys.argv[1]])\n"
        "server.build_server(sys.argv[1])\n"
        "late = ('ruamel', 'skupper_mcp.engine.core')\n"
        "print(sorted(m for m in sys.modules if m.startswith(late)))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(topology)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]", done.stdout
