"""Rules the test suite keeps, read from its sources (so the e2e half's files are held to them
by ``make unit`` too)."""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

TESTS = Path(__file__).resolve().parent
SOURCES = sorted(p for p in TESTS.rglob("*.py") if ".venv" not in p.parts)


@cache
def tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), filename=str(path))


def is_test_module(name: str) -> bool:
    return name.rsplit(".", 1)[-1].startswith("test_")


def test_no_test_module_imports_another() -> None:
    """What tests share lives in helper modules (``site_replay``, ``van_page``,
    ``lifecycle/helpers``...), never in a test module another one imports."""
    found = []
    for path in SOURCES:
        for node in ast.walk(tree(path)):
            if isinstance(node, ast.ImportFrom) and node.module and is_test_module(node.module):
                found.append(f"{path.relative_to(TESTS)}:{node.lineno} from {node.module}")
            elif isinstance(node, ast.Import):
                found += [
                    f"{path.relative_to(TESTS)}:{node.lineno} import {a.name}"
                    for a in node.names
                    if is_test_module(a.name)
                ]
    assert found == [], "move what these import into a helper module: " + "; ".join(found)


def mcp_clients(module: ast.Module) -> list[ast.Call]:
    return [
        node
        for node in ast.walk(module)
        if isinstance(node, ast.Call)
        and (
            (isinstance(node.func, ast.Name) and node.func.id == "Client")
            or (isinstance(node.func, ast.Attribute) and node.func.attr == "Client")
        )
    ]


def test_every_mcp_client_bounds_its_requests() -> None:
    """An MCP client without ``read_timeout_seconds`` would hang the suite on a server that
    never answers; a module that opens one also requests the ``bounded_mcp_clients``
    fixture (tests/conftest.py), which fails such a client at run time."""
    unbounded, unguarded = [], []
    for path in SOURCES:
        module = tree(path)
        calls = mcp_clients(module)
        where = str(path.relative_to(TESTS))
        unbounded += [
            f"{where}:{c.lineno}"
            for c in calls
            if not any(k.arg == "read_timeout_seconds" for k in c.keywords)
        ]
        if calls and "bounded_mcp_clients" not in path.read_text():
            unguarded.append(where)
    assert unbounded == [], f"MCP clients without read_timeout_seconds: {unbounded}"
    assert unguarded == [], (
        'add pytestmark = pytest.mark.usefixtures("bounded_mcp_clients") to: '
        + ", ".join(unguarded)
    )


SLEEPS = {"sleep"}
#: Calls that read the wall clock (CPU clocks, ``time.thread_time``, are not stretched by
#: load), and names that hold a span of time in the suite's tests.
CLOCKS = {"monotonic", "time", "perf_counter"}
SPAN_NAME = re.compile(r"(^|_)(elapsed|took|seconds|gap|lag|duration|latency)$")
#: A function or method that answers a span of time by its name (``probe.gap()``,
#: ``seconds_until_served_by``).
SPAN_CALL = re.compile(r"(^|_)(elapsed|took|seconds|gap|lag)(_|$)")
#: What a fixed sleep says on its line when it is a window in which something must NOT
#: happen (nothing to poll for), and what an upper bound on a span says on its line or the
#: lines above it when the time is what the test is about.
WINDOW_MARK = "fixed window"
SUBJECT_MARK = "subject"


def _constant(node: ast.expr) -> float | None:
    """The number ``node`` stands for when it is a literal (or literals combined)."""
    try:
        value = ast.literal_eval(node)
    except ValueError:
        if isinstance(node, ast.BinOp):
            left, right = _constant(node.left), _constant(node.right)
            if left is not None and right is not None:
                ops = {ast.Add: float.__add__, ast.Sub: float.__sub__, ast.Mult: float.__mul__}
                op = ops.get(type(node.op))
                return op(float(left), float(right)) if op else None
        return None
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _in_loop(parents: dict[ast.AST, ast.AST], node: ast.AST) -> bool:
    """Whether ``node`` runs in a loop of its own function (a poll, a pacing interval)."""
    at = parents.get(node)
    while at is not None and not isinstance(at, ast.FunctionDef | ast.AsyncFunctionDef):
        if isinstance(at, ast.While | ast.For | ast.AsyncFor):
            return True
        at = parents.get(at)
    return False


def _parents(module: ast.Module) -> dict[ast.AST, ast.AST]:
    return {child: node for node in ast.walk(module) for child in ast.iter_child_nodes(node)}


def _named_span(name: str) -> bool:
    return bool(SPAN_NAME.search(name) or SPAN_CALL.search(name))


def _is_span(node: ast.expr, spans: frozenset[str] = frozenset()) -> bool:
    """``clock() - start``, a name that holds a span of time (by its name, or because the
    function assigned it one: ``spans``), an attribute such a name (``pull.seconds``), or a
    call that answers one (``probe.gap()``, ``seconds_until_served_by(...)``)."""
    if isinstance(node, ast.Await):
        node = node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub):
        call = node.left
        if isinstance(call, ast.Call):
            func = call.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            return name in CLOCKS
    if isinstance(node, ast.Call):
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        return bool(SPAN_CALL.search(name))
    if isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.Attribute):
        return bool(SPAN_NAME.search(node.attr))
    return isinstance(node, ast.Name) and (bool(SPAN_NAME.search(node.id)) or node.id in spans)


def _assigned_spans(module: ast.Module) -> frozenset[str]:
    """The names a span of time is assigned to (``measured[fault] = await seconds_until(...)``,
    ``wall = time.monotonic() - started``), whatever they are called."""
    names = set()
    for node in ast.walk(module):
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if not _is_span(node.value):
                continue
            for target in targets:
                if isinstance(target, ast.Subscript):
                    target = target.value
                if isinstance(target, ast.Name):
                    names.add(target.id)
    return frozenset(names)


def _upper_bounds(compare: ast.Compare) -> list[tuple[ast.expr, ast.expr]]:
    """The (span side, constant side) pairs of ``compare`` that bound something from above:
    ``x < 5``, ``x <= 5`` and the same written ``5 > x``, ``5 >= x``."""
    pairs = []
    left = compare.left
    for op, right in zip(compare.ops, compare.comparators, strict=True):
        if isinstance(op, ast.Lt | ast.LtE):
            pairs.append((left, right))
        elif isinstance(op, ast.Gt | ast.GtE):
            pairs.append((right, left))
        left = right
    return pairs


def test_no_test_waits_a_fixed_time_for_something() -> None:
    """A wait polls with a deadline and says what it waited for (tests/polling.py): a fixed
    sleep is a guess at how long something takes, which a busy machine outlasts. What may
    stay: a sleep in a loop (a poll's interval, a fake server's pace), one of a computed
    length (a fault's own delay), and a window in which something must NOT happen, which
    says so on its line ("a fixed window: ...")."""
    found = []
    for path in SOURCES:
        if path.name == "polling.py":
            continue
        module = tree(path)
        parents = _parents(module)
        lines = path.read_text().splitlines()
        for node in ast.walk(module):
            if not (isinstance(node, ast.Call) and node.args):
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            seconds = _constant(node.args[0])
            if name not in SLEEPS or not seconds or _in_loop(parents, node):
                continue
            if WINDOW_MARK not in lines[node.lineno - 1]:
                found.append(f"{path.relative_to(TESTS)}:{node.lineno} sleep({seconds:g})")
    assert found == [], (
        "poll for what these wait for (polling.wait_for / eventually), or say on the line "
        f"that it is a {WINDOW_MARK!r} in which something must not happen: " + "; ".join(found)
    )


def test_no_test_bounds_a_time_the_machine_sets() -> None:
    """A fixed upper bound on how long something took is a bet on the machine: under load a
    second is ten. Where the time is the test's subject (a deadline that must end a wait, a
    bound between two behaviours), the bound is clear of what load does and the assert or
    the lines just above it say so ("the subject: ..."); elsewhere the test shows what it
    means by an order, a count or the thread something ran on, or measures CPU time
    (``time.thread_time``), which load does not stretch."""
    found = []
    for path in SOURCES:
        module = tree(path)
        lines = path.read_text().splitlines()
        spans = _assigned_spans(module)
        for node in ast.walk(module):
            if not isinstance(node, ast.Assert):
                continue
            bounded = [
                test
                for test in ast.walk(node.test)
                if isinstance(test, ast.Compare)
                and any(
                    _constant(bound) is not None and _is_span(side, spans)
                    for side, bound in _upper_bounds(test)
                )
            ]
            if not bounded:
                continue
            said = lines[max(0, node.lineno - 4) : node.end_lineno]
            if not any(SUBJECT_MARK in line for line in said):
                found.append(f"{path.relative_to(TESTS)}:{node.lineno}")
    assert found == [], (
        f"show these by order, count, thread or CPU time, or say why the time is the "
        f"{SUBJECT_MARK} and keep the bound clear of load: " + "; ".join(found)
    )


#: The shortest literal deadline a poll may have: it ends as soon as its check holds, so a
#: longer deadline costs nothing on success, and under load a second is ten.
MIN_DEADLINE = 10.0
POLLS = {"wait_for", "eventually"}


def _poll_names(module: ast.Module) -> set[str]:
    """The names ``module`` calls the suite's polls by: imported from ``polling`` or
    ``hostkit``, or bound to a ``functools.partial`` of ``polling.wait_for``."""
    names = set()
    for node in ast.walk(module):
        if isinstance(node, ast.ImportFrom) and node.module in ("polling", "hostkit"):
            names |= {a.asname or a.name for a in node.names if a.name in POLLS}
        elif (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Call)
            and node.value.args
            and isinstance(node.value.args[0], ast.Attribute)
            and node.value.args[0].attr in POLLS
        ):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return names


def unsaid_waits(source: str) -> list[str]:
    """The polls in ``source`` that would not say what they waited for when they give up
    (no ``what=``), or whose literal deadline is under ``MIN_DEADLINE``."""
    module = ast.parse(source)
    names = _poll_names(module)
    found = []
    for node in ast.walk(module):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        direct = isinstance(func, ast.Name) and func.id in names
        qualified = (
            isinstance(func, ast.Attribute)
            and func.attr in POLLS
            and getattr(func.value, "id", "") == "polling"
        )
        if not (direct or qualified):
            continue
        given = {k.arg: k.value for k in node.keywords}
        if "what" not in given:
            found.append(f"{node.lineno} says not what it waits for")
        deadline = _constant(given["timeout"]) if "timeout" in given else None
        if deadline is not None and deadline < MIN_DEADLINE:
            found.append(f"{node.lineno} gives up after {deadline:g}s")
    return found


def test_every_wait_says_what_it_waited_for_and_leaves_load_room() -> None:
    """A poll that gives up names what it waited for (``what=``, else the failure reads "the
    condition") and has a deadline a busy machine meets (``MIN_DEADLINE``)."""
    found = [
        f"{path.relative_to(TESTS)}:{where}"
        for path in SOURCES
        if path.name != "polling.py"
        for where in unsaid_waits(path.read_text())
    ]
    assert found == [], "give these what= and a deadline of 10 s or more: " + "; ".join(found)


def test_the_wait_rule_finds_what_it_is_for() -> None:
    """The rule above on a sample: the unsaid and the short are found, the said not."""
    sample = """
import functools
import polling
from polling import wait_for
settle = functools.partial(polling.wait_for, timeout=20.0)
wait_for(ready)
wait_for(ready, timeout=5, what="ready")
settle(ready)
polling.eventually(ready, what="ready", timeout=2)
wait_for(ready, timeout=30, what="ready")
settle(ready, what="ready")
"""
    assert unsaid_waits(sample) == [
        "6 says not what it waits for",
        "7 gives up after 5s",
        "8 says not what it waits for",
        "9 gives up after 2s",
    ]


def test_the_bound_rule_finds_spans_however_written() -> None:
    """The bound rule's span finder on the forms it is for: a clock's difference, a name or
    attribute that holds a span, a call that answers one, a name assigned one, either side
    of the comparison."""
    module = ast.parse(
        """
measured = {}
measured["kill"] = await seconds_until_served_by(world, model)
wall = time.monotonic() - started
assert time.monotonic() - started < 5
assert took < 5
assert pull.seconds <= 5
assert probe.gap() <= 0.5
assert measured["kill"] < 5
assert 30 > wall
assert count < 5
assert took > 5
"""
    )
    spans = _assigned_spans(module)
    bounded = [
        node.lineno
        for node in ast.walk(module)
        if isinstance(node, ast.Assert)
        and isinstance(node.test, ast.Compare)
        and any(
            _constant(bound) is not None and _is_span(side, spans)
            for side, bound in _upper_bounds(node.test)
        )
    ]
    assert sorted(bounded) == [5, 6, 7, 8, 9, 10]


#: The session worlds of tests/sandbox/conftest.py that files share.
SESSION_WORLDS = {"world", "unset_world"}


def _session_world_users() -> set[str]:
    """The files outside tests/lifecycle/ whose tests or fixtures take a session world of
    tests/sandbox/conftest.py (a parameter of that name the file does not define itself)."""
    users = set()
    for path in SOURCES:
        where = path.relative_to(TESTS.parent).as_posix()
        if "lifecycle" in path.parts or not is_test_module(path.stem):
            continue
        functions = [
            node
            for node in ast.walk(tree(path))
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        ]
        fixtures = [
            f for f in functions if any("fixture" in ast.unparse(d) for d in f.decorator_list)
        ]
        own = {f.name for f in fixtures}
        tests = [f for f in functions if f.name.startswith("test_")]
        taken = {a.arg for f in tests + fixtures for a in f.args.args}
        if (taken & SESSION_WORLDS) - own:
            users.add(where)
    return users


def test_files_that_share_a_session_world_run_as_one_unit() -> None:
    """A session world is made once per worker that asks for it: the files that take one are
    one unit of work (``SHARED_WORLDS`` in tests/conftest.py), so it is made once a run."""
    # read from its source: under pytest, ``conftest`` may name tests/sandbox/conftest.py
    [shared] = [
        node.value
        for node in tree(TESTS / "conftest.py").body
        if isinstance(node, ast.Assign)
        and [getattr(t, "id", "") for t in node.targets] == ["SHARED_WORLDS"]
    ]
    assert _session_world_users() == set(ast.literal_eval(shared))
