"""The table of tools both fronts are built from: what neither front's tests would catch."""

from __future__ import annotations

import subprocess
import sys
from typing import get_args

import pytest
from pydantic import BaseModel

from skupper_mcp import models
from skupper_mcp.cli import build_parser
from skupper_mcp.tools import TOOLS


def test_every_result_names_a_model() -> None:
    for tool in TOOLS:
        assert issubclass(getattr(models, tool.result), BaseModel), tool.name


def test_the_log_components_are_the_models() -> None:
    logs = next(tool for tool in TOOLS if tool.name == "logs")
    component = next(argument for argument in logs.arguments if argument.name == "component")
    assert component.choices == get_args(models.LogComponent)


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
