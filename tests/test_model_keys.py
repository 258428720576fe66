"""A provider's model API key: read from its file with ssh's care, and redacted from then on."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

from skupper_mcp.errors import CommandError, ConfigError
from skupper_mcp.model_keys import MAX_KEY_BYTES, read_model_api_key
from skupper_mcp.redaction import MARK, redact, register_secret

VARIABLE = "ALPHA_MODEL_API_KEY_FILE"


def _key_file(tmp_path: Path, content: bytes, mode: int = 0o600) -> Path:
    path = tmp_path / "model.key"
    path.write_bytes(content)
    path.chmod(mode)
    return path


def _unique_key() -> str:
    # each test its own key: the redactor's registry lives as long as the process
    return f"vllm-key-{uuid.uuid4().hex}"


def test_the_key_is_read_stripped_and_redacted_from_then_on(tmp_path: Path) -> None:
    key = _unique_key()
    path = _key_file(tmp_path, f"  {key}\n\n".encode())
    line = f"curl -H 'X-Key: {key}' http://127.0.0.1:9000/v1/models  # {key}"
    assert redact(line) == (line, 0)  # no pattern knows this key before it is read
    assert read_model_api_key(path, VARIABLE) == key
    text, count = redact(line)
    assert key not in text and count == 2
    assert text == f"curl -H 'X-Key: {MARK}' http://127.0.0.1:9000/v1/models  # {MARK}"
    error = CommandError("gpu1", "podman logs", 1, f"401 for key {key}")
    assert key not in str(error)  # errors redact their text when they are made


def test_a_known_key_is_redacted_before_a_long_line_is_cut(tmp_path: Path) -> None:
    key = _unique_key()
    read_model_api_key(_key_file(tmp_path, key.encode()), VARIABLE)
    from skupper_mcp.redaction import MAX_LINE

    line = "x" * (MAX_LINE - 10) + key + "y" * 100
    text, _ = redact(line)
    assert key[:10] not in text  # a cut through the key would have left its start


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o660, 0o644])
def test_a_key_file_others_may_read_is_refused_as_ssh_does(tmp_path: Path, mode: int) -> None:
    key = _unique_key()
    path = _key_file(tmp_path, key.encode(), mode)
    with pytest.raises(ConfigError) as caught:
        read_model_api_key(path, VARIABLE)
    message = str(caught.value)
    assert f"{mode:04o}" in message and "chmod 600" in message
    assert caught.value.variable == VARIABLE
    assert key not in message


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b"", "empty"),
        (b" \n\t\n", "empty"),
        (b"a" * (MAX_KEY_BYTES + 1), f"larger than {MAX_KEY_BYTES} bytes"),
        (b"key-one\nkey-two\n", "more than one line"),
        (b"key\x00nul", "control characters"),
        (b"\xff\xfe key", "not UTF-8"),
    ],
)
def test_what_is_not_one_key_is_refused(tmp_path: Path, content: bytes, words: str) -> None:
    with pytest.raises(ConfigError, match=words):
        read_model_api_key(_key_file(tmp_path, content), VARIABLE)


def test_a_key_of_the_largest_size_is_read(tmp_path: Path) -> None:
    key = "k" * MAX_KEY_BYTES
    assert read_model_api_key(_key_file(tmp_path, key.encode()), VARIABLE) == key


def test_a_missing_file_a_directory_and_a_fifo_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such file"):
        read_model_api_key(tmp_path / "absent.key", VARIABLE)
    directory = tmp_path / "dir.key"
    directory.mkdir(mode=0o700)
    with pytest.raises(ConfigError, match="not a regular file"):
        read_model_api_key(directory, VARIABLE)
    fifo = tmp_path / "fifo.key"
    os.mkfifo(fifo, 0o600)
    with pytest.raises(ConfigError, match="not a regular file"):  # and it did not block
        read_model_api_key(fifo, VARIABLE)


def test_a_symlink_to_a_private_key_file_is_followed(tmp_path: Path) -> None:
    key = _unique_key()
    target = _key_file(tmp_path, key.encode())
    link = tmp_path / "link.key"
    link.symlink_to(target)
    assert read_model_api_key(link, VARIABLE) == key


def test_register_secret_takes_the_longest_value_whole_and_ignores_blank() -> None:
    short = f"short-{uuid.uuid4().hex[:8]}"
    register_secret(short)
    register_secret(short + "-and-longer")
    register_secret("   ")
    text, count = redact(f"a {short}-and-longer b {short} c   d")
    assert (text, count) == (f"a {MARK} b {MARK} c   d", 2)
