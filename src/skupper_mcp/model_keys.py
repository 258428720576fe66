"""A provider's model API key, read from the file ``<PREFIX>_MODEL_API_KEY_FILE`` names.

The topology holds only the path; the key is read when a probe needs it, never at parse
time. The file is refused, as ssh refuses a private key, when its group or others may read
it, and when it is not a small regular file. A key read is registered with the redactor
(``redaction.register_secret``) before it is returned, so from then on it is replaced in
every command output, error and log line this process makes.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from skupper_mcp.errors import ConfigError
from skupper_mcp.redaction import register_secret

#: The most a key file may hold: a bearer key is tens of bytes, a JWT a few hundred.
MAX_KEY_BYTES = 4 * 1024


def read_model_api_key(path: Path, variable: str = "MODEL_API_KEY_FILE") -> str:
    """The key in ``path``, whitespace around it stripped. ``variable`` names the topology
    variable that gave the path, for the error. Raises ``ConfigError`` when the file is
    missing, not a regular file, readable by group or others, larger than
    ``MAX_KEY_BYTES``, not UTF-8, empty, or holds more than one line."""

    def refuse(why: str) -> ConfigError:
        return ConfigError(f"{path}: {why}", variable=variable)

    try:
        # O_NONBLOCK: opening a FIFO put there must not wait for a writer
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError as error:
        raise refuse("no such file; create it holding the model server's API key") from error
    except OSError as error:
        raise refuse(f"cannot open it: {error.strerror or error}") from error
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise refuse("is not a regular file")
        if info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise refuse(
                f"permissions {stat.S_IMODE(info.st_mode):04o} are too open: a key file "
                f"must be readable by its owner only (chmod 600 {path})"
            )
        data = _read_at_most(fd, MAX_KEY_BYTES + 1)
    except OSError as error:
        raise refuse(f"cannot read it: {error.strerror or error}") from error
    finally:
        os.close(fd)
    if len(data) > MAX_KEY_BYTES:
        raise refuse(f"is larger than {MAX_KEY_BYTES} bytes: it does not hold only a key")
    try:
        key = data.decode("utf-8").strip()
    except UnicodeDecodeError as error:
        raise refuse("is not UTF-8 text") from error
    if not key:
        raise refuse("is empty; write the model server's API key into it")
    if any(c in key for c in "\r\n") or not key.isprintable():
        raise refuse("holds more than one line or control characters; keep only the key")
    register_secret(key)
    return key


def _read_at_most(fd: int, limit: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while size < limit:
        chunk = os.read(fd, limit - size)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)
