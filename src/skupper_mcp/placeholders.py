"""Which model ids a client's configuration would expand as a placeholder: opencode's
``{env:...}``/``{file:...}``, Continue's ``${{ ... }}``, LiteLLM's ``os.environ/...`` and
``*``. Pure, standard library only: the exports leave such ids out, and the models catalog
marks them (``ModelRow.placeholder_ids``) for a client that writes its own configuration.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

#: What each tool expands in the text or the values of its file, and why an id holding it
#: is left out. Sources: opencode packages/opencode/src/config/variable.ts ``substitute``
#: (``/\{env:([^}]+)\}/g`` and ``/\{file:[^}]+\}/g`` over the whole text, before parsing);
#: Continue packages/config-yaml/src/load/unroll.ts ``TEMPLATE_VAR_REGEX``
#: (``/\${{[\s]*([^}\s]+)[\s]*}}/g`` over the whole text); LiteLLM
#: proxy_server.py ``_check_for_os_environ_vars`` (every string value that starts with
#: ``os.environ/`` goes to ``secret_managers/main.py get_secret``) and its router's
#: ``model_name`` patterns (``*``). Matched more broadly than the tools do (anywhere, any
#: case, with no closing brace): a real model id holds none of these.
PLACEHOLDERS: dict[str, tuple[tuple[re.Pattern[str], str], ...]] = {
    "opencode": (
        (
            re.compile(r"\{\s*(env|file)\s*:", re.IGNORECASE),
            "opencode replaces {env:...} and {file:...} anywhere in its config with a "
            "variable or a file's content",
        ),
    ),
    "continue": (
        (re.compile(r"\$\s*\{\s*\{"), "Continue replaces ${{ ... }} anywhere in config.yaml"),
    ),
    "litellm": (
        (
            re.compile(r"os\.environ/", re.IGNORECASE),
            "LiteLLM reads a value starting with os.environ/ from the environment "
            "(or a secret manager)",
        ),
        (
            re.compile(r"\*"),
            "LiteLLM takes a model_name with * as a pattern: other models' requests "
            "would go to this host",
        ),
    ),
}


def placeholder(fmt: str, model_id: str) -> str | None:
    """Why ``fmt``'s tool would expand ``model_id`` (None: it would not)."""
    for pattern, why in PLACEHOLDERS.get(fmt, ()):
        if pattern.search(model_id):
            return why
    return None


def placeholder_ids(ids: Iterable[str]) -> list[str]:
    """Those of ``ids`` that any format's tool would expand (``ModelRow.placeholder_ids``)."""
    return [i for i in dict.fromkeys(ids) if any(placeholder(fmt, i) for fmt in PLACEHOLDERS)]
