"""``skupper-mcp models --export``: the CLI side of the catalog's export (no host)."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import pytest

from skupper_mcp.cli import main, write_export
from skupper_mcp.results import ModelRow, ModelsResult
from skupper_mcp.tools import EXIT_OK, EXIT_SKIPPED, EXIT_USAGE, TOOLS


def _row(host: str, port: int, state: str, key_env: str | None = None) -> ModelRow:
    values: dict[str, Any] = {
        "model_ids": [f"{host}-model"],
        "host": host,
        "profile": "p",
        "site": f"hub-{host}",
        "listener_port": port,
        "local_base_url": f"http://127.0.0.1:{port}/v1",
        "routing_key": f"model-api-{host}",
        "state": state,
        "api_key_env": key_env,
    }
    return ModelRow(**values)


RESULT = ModelsResult(
    rows=[
        _row("gpu1", 9000, "serving", "GPU1_MODEL_API_KEY"),
        _row("gpu2", 9001, "provider-stopped"),
    ],
    summary="1/2 serving",
)


def test_a_file_that_names_a_key_variable_is_private(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "litellm.yaml"
    out.write_text("old")
    out.chmod(0o644)
    write_export(RESULT, "litellm", include_all=False, path=out)
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    text = out.read_text()
    assert "os.environ/GPU1_MODEL_API_KEY" in text and "gpu2-model" not in text
    assert "gpu2: all of it left out: provider-stopped" in text  # the header says it
    err = capsys.readouterr().err
    assert "$GPU1_MODEL_API_KEY" in err
    assert "gpu1: serving\ngpu2: provider-stopped\n" in err  # each row's state
    assert "$LITELLM_MASTER_KEY" in err


def test_all_exports_the_stopped_rows_too(capsys: pytest.CaptureFixture[str]) -> None:
    write_export(RESULT, "env", include_all=True, path=None)
    out = capsys.readouterr().out
    assert "127.0.0.1:9000" in out and "127.0.0.1:9001" in out


def test_nothing_serving_is_said(capsys: pytest.CaptureFixture[str]) -> None:
    stopped = ModelsResult(rows=[_row("gpu2", 9001, "route-down")], summary="0/1 serving")
    write_export(stopped, "env", include_all=False, path=None)
    assert "no model is serving: nothing live exported" in capsys.readouterr().err


@pytest.mark.parametrize(
    "args",
    [
        ["models", "--output", "x.yaml"],
        ["models", "--all"],
        ["--json", "models", "--export", "env"],
    ],
)
def test_export_options_go_together(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(args) == EXIT_USAGE
    assert "--export" in capsys.readouterr().err


def test_models_exits_3_unless_every_row_serves() -> None:
    tool = next(t for t in TOOLS if t.name == "models")
    assert tool.read_only and tool.exported
    assert tool.exit_code(RESULT) == EXIT_SKIPPED
    assert tool.exit_code(ModelsResult(rows=RESULT.rows[:1], summary="s")) == EXIT_OK


def test_goose_writes_one_provider_file_each_into_a_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "custom_providers"
    write_export(RESULT, "goose", include_all=True, path=out)
    assert sorted(p.name for p in out.iterdir()) == ["skupper_gpu1.json", "skupper_gpu2.json"]
    assert json.loads((out / "skupper_gpu1.json").read_text())["name"] == "skupper_gpu1"
    assert stat.S_IMODE((out / "skupper_gpu1.json").stat().st_mode) == 0o600  # names a key
    assert f"in {out}" in capsys.readouterr().err


def test_goose_without_an_output_directory_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models", "--export", "goose"]) == EXIT_USAGE
    assert "--output DIR" in capsys.readouterr().err


def test_a_hostile_id_is_named_on_stderr_and_never_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hostile = _row("evil", 9002, "serving").model_copy(
        update={"model_ids": ["granite-8b{file:~/.ssh/id_ed25519}", "evil-model"]}
    )
    out = tmp_path / "opencode.json"
    write_export(ModelsResult(rows=[hostile], summary="s"), "opencode", include_all=False, path=out)
    assert "{file:" not in out.read_text() and "evil-model" in out.read_text()
    err = capsys.readouterr().err
    assert "evil: model id 'granite-8b{file:~/.ssh/id_ed25519}' left out: opencode replaces" in err


def test_the_models_table_says_how_many_ids_exports_leave_out() -> None:
    tool = next(t for t in TOOLS if t.name == "models")
    hostile = _row("evil", 9002, "serving").model_copy(
        update={"model_ids": ["{env:HOME}", "ok"], "placeholder_ids": ["{env:HOME}"]}
    )
    text = tool.render(ModelsResult(rows=[hostile, RESULT.rows[0]], summary="s"), None)
    [line] = [line for line in text.splitlines() if "evil" in line]
    assert "1 id(s) a client configuration would expand" in line
    assert "left out of exports" not in next(line for line in text.splitlines() if "gpu1" in line)
