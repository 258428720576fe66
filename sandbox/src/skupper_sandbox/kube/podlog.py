"""``GET /api/v1/namespaces/{ns}/pods/{name}/log``: a router pod's container output.

As the API server answers it (``pkg/registry/core/pod/rest/log.go`` ``LogREST.Get``,
``pkg/registry/core/pod/strategy.go`` ``LogLocation``, ``pkg/apis/core/validation``
``ValidatePodLogOptions``): the options are validated first (422 ``Invalid``: ``tailLines``
below 0, ``limitBytes`` below 1), then the pod is looked up (404), then the container (400
when it is not one of the pod's, or when the pod has several and none is named); the body is
the container's output as ``text/plain``: all of it, its last ``tailLines`` lines, cut at
``limitBytes``; ``previous=true`` gives the container's output before its last restart (400
when it never restarted). **Not modelled**: ``follow``, ``timestamps``, ``sinceSeconds``,
``sinceTime`` and ``stream`` other than ``All`` are refused with 400 (the sandbox keeps no
per-line times or streams), where a real API server would serve them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from skupper_sandbox.kube import resources
from skupper_sandbox.kube.httpserver import Request, Response
from skupper_sandbox.kube.pods import LOG_FILE, PREVIOUS_LOG_FILE, pod_dir
from skupper_sandbox.kube.store import ApiError, Store

_NOT_MODELLED = ("follow", "timestamps", "sinceSeconds", "sinceTime")


def tail(data: bytes, lines: int) -> bytes:
    """The last ``lines`` lines of ``data`` (a final line without a newline counts)."""
    if lines <= 0 or not data:
        return b""
    ends = data.endswith(b"\n")
    kept = b"\n".join((data[:-1] if ends else data).split(b"\n")[-lines:])
    return kept + b"\n" if ends else kept


def _number(request: Request, name: str) -> int | None:
    raw = request.query.get(name)
    if raw is None or raw == "":
        return None
    try:
        return int(raw)
    except ValueError:
        raise ApiError(
            400, "BadRequest", f'invalid value for {name}: strconv.ParseInt: parsing "{raw}"'
        ) from None


def _flag(request: Request, name: str) -> bool:
    return request.query.get(name, "").lower() in ("true", "1")


def _invalid(name: str, causes: list[tuple[str, str]]) -> ApiError:
    return ApiError(
        422,
        "Invalid",
        f'PodLogOptions "{name}" is invalid: '
        + ", ".join(f"{field}: {message}" for field, message in causes),
        {
            "name": name,
            "kind": "PodLogOptions",
            "causes": [
                {"reason": "FieldValueInvalid", "message": message, "field": field}
                for field, message in causes
            ],
        },
    )


def pod_log(store: Store, pods_dir: Path, request: Request, namespace: str, name: str) -> Response:
    """The answer to one pod log request."""
    tail_lines, limit = _number(request, "tailLines"), _number(request, "limitBytes")
    causes = []
    if tail_lines is not None and tail_lines < 0:
        causes.append(
            ("tailLines", f"Invalid value: {tail_lines}: must be greater than or equal to 0")
        )
    if limit is not None and limit < 1:
        causes.append(("limitBytes", f"Invalid value: {limit}: must be greater than 0"))
    if causes:
        raise _invalid(name, causes)
    for option in _NOT_MODELLED:
        if request.query.get(option, "") not in ("", "false", "0"):
            raise ApiError(400, "BadRequest", f"{option} is not supported by the sandbox API")
    if request.query.get("stream", "All") != "All":
        raise ApiError(400, "BadRequest", "stream is not supported by the sandbox API")
    pod = store.get(resources.PODS, namespace, name)
    container = _container(pod, name, request.query.get("container", ""))
    previous = _flag(request, "previous")
    path = pod_dir(pods_dir, name) / (PREVIOUS_LOG_FILE if previous else LOG_FILE)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        if previous:
            message = f'previous terminated container "{container}" in pod "{name}" not found'
        else:
            message = f'container "{container}" in pod "{name}" is waiting to start'
        raise ApiError(400, "BadRequest", message) from None
    if tail_lines is not None:
        data = tail(data, tail_lines)
    if limit is not None:
        data = data[:limit]
    return Response(200, data, content_type="text/plain")


def _container(pod: dict[str, Any], name: str, asked: str) -> str:
    names = [str(c.get("name")) for c in (pod.get("spec") or {}).get("containers") or []]
    if not asked:
        if len(names) == 1:
            return names[0]
        raise ApiError(
            400,
            "BadRequest",
            f"a container name must be specified for pod {name}, choose one of: "
            f"[{' '.join(names)}]",
        )
    if asked not in names:
        raise ApiError(400, "BadRequest", f"container {asked} is not valid for pod {name}")
    return asked
