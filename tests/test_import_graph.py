"""The module-level import graph of src/ has no cycle, runtime's layers import only downward,
`runtime` never imports `sot`, and sot's opcode executor never imports its code generation.

A module-level cycle makes a module's import succeed or fail depending on which module of the
cycle was imported first, and it hides the layering that a maintainer relies on (in runtime:
`tensor -> ops -> autograd -> nn -> executor -> static -> jit`). An import inside a top-level
`try`/`if`/`with` runs at import time, so it is an edge; one inside a function runs later and one
under `if TYPE_CHECKING:` never, so they are not; class bodies are left out as well (a deliberate
upward import belongs in the function that needs it).

`import_graph(src, packages)` is the reusable part (`src_graph()` for src/): other layering rules
are checks on its edges. One rule reads every import, functions included: no stage of sot imports
`sot.tools` (the tools watch the pipeline through sot.translation.events).
"""
from __future__ import annotations

import ast
import functools
import pathlib
from typing import Iterator

import pytest

SRC = pathlib.Path(__file__).resolve().parents[1] / "src"
PACKAGES = ("runtime", "sot")

# runtime's layers, lowest first: a module may import its own layer or a lower one at module level
RUNTIME_LAYERS = ("tensor", "ops", "autograd", "nn", "executor", "static", "jit")


def module_names(src: pathlib.Path = SRC, packages: tuple[str, ...] = PACKAGES) -> dict[str, pathlib.Path]:
    """Every importable module under `packages`, by dotted name. A stub (.pyi) names an extension
    module, so `from sot import _eval_frame` points at that module, not at `sot`."""
    names: dict[str, pathlib.Path] = {}
    for package in packages:
        for path in sorted((src / package).rglob("*.py*")):
            if path.suffix not in (".py", ".pyi") or "__pycache__" in path.parts:
                continue
            parts = list(path.relative_to(src).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            names.setdefault(".".join(parts), path)
    return names


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _module_level_imports(body: list[ast.stmt]) -> Iterator[ast.Import | ast.ImportFrom]:
    """The imports a module runs when it is imported: top-level ones and those in top-level
    compound statements, but not in functions, classes or `if TYPE_CHECKING:`."""
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        elif isinstance(node, ast.If) and _is_type_checking(node.test):
            yield from _module_level_imports(node.orelse)
        else:
            for field in ("body", "orelse", "finalbody"):
                yield from _module_level_imports(getattr(node, field, None) or [])
            for handler in getattr(node, "handlers", None) or []:
                yield from _module_level_imports(handler.body)
            for case in getattr(node, "cases", None) or []:
                yield from _module_level_imports(case.body)


def _resolve_base(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    """The absolute module that `from <base> import ...` names."""
    if not node.level:
        return node.module or ""
    package = module.split(".") if is_package else module.split(".")[:-1]
    anchor = package[:len(package) - (node.level - 1)]
    return ".".join(anchor + ([node.module] if node.module else []))


def imported_modules(module: str, path: pathlib.Path, known: dict[str, pathlib.Path]) -> set[str]:
    """The modules of `known` that `module` imports at module level: `from a.b import c` names
    `a.b.c` when that is a module, else `a.b`; parent packages are not added."""
    tree = ast.parse(path.read_text(), filename=str(path))
    is_package = path.stem == "__init__"
    targets: set[str] = set()
    for node in _module_level_imports(tree.body):
        if isinstance(node, ast.Import):
            candidates = [alias.name for alias in node.names]
        else:
            base = _resolve_base(node, module, is_package)
            candidates = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                          for alias in node.names]
        targets.update(name for name in candidates if name in known and name != module)
    return targets


def import_graph(src: pathlib.Path = SRC, packages: tuple[str, ...] = PACKAGES) -> dict[str, set[str]]:
    """Module -> the modules it imports at module level, over every module under `packages`."""
    known = module_names(src, packages)
    return {name: imported_modules(name, path, known) if path.suffix == ".py" else set()
            for name, path in known.items()}


@functools.cache
def src_graph() -> dict[str, set[str]]:
    """The graph of src/ (built once per test session)."""
    return import_graph()


def _strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components, iteratively (the graph has hundreds of nodes)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                components.append(sorted(component))
    return components


def _shortest_cycle_through(start: str, members: set[str], graph: dict[str, set[str]]) -> list[str]:
    """A shortest path start -> ... -> start inside one strongly connected component."""
    parents: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for child in sorted(graph[node] & members):
                if child == start:  # walk back from node to start, then close the loop
                    path = [node]
                    while path[-1] != start:
                        path.append(parents[path[-1]])
                    return path[::-1] + [start]
                if child not in parents:
                    parents[child] = node
                    following.append(child)
        frontier = following
    raise AssertionError(f"{start} is in a strongly connected component without a cycle")


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One concrete cycle per group of mutually importing modules, each `[a, b, ..., a]`."""
    cycles = []
    for component in _strongly_connected(graph):
        if len(component) > 1 or component[0] in graph[component[0]]:
            cycles.append(_shortest_cycle_through(component[0], set(component), graph))
    return cycles


def test_the_graph_holds_exactly_the_imports_run_at_module_level(tmp_path):
    files = {
        "pkg/__init__.py": "from .a import f\n",
        "pkg/a.py": ("from __future__ import annotations\n"
                     "from typing import TYPE_CHECKING\n"
                     "import numpy\n"
                     "from . import b\n"
                     "from .sub import helper\n"
                     "from pkg import _ext\n"
                     "try:\n    import pkg.c\nexcept ImportError:\n    pass\n"
                     "if TYPE_CHECKING:\n    from .d import T\n"
                     "def f():\n    from .e import g\n"
                     "class K:\n    from .e import h\n"),
        "pkg/b.py": "", "pkg/c.py": "", "pkg/d.py": "", "pkg/e.py": "", "pkg/_ext.pyi": "",
        "pkg/sub/__init__.py": "def helper(): pass\n",
        "pkg/sub/deep.py": "from .. import a\nfrom ..sub import deep2\n",
        "pkg/sub/deep2.py": "",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    graph = import_graph(tmp_path, ("pkg",))
    assert graph["pkg"] == {"pkg.a"}
    # `from .sub import helper` names the package (helper is a function), `from pkg import _ext`
    # the extension module; TYPE_CHECKING, function and class bodies add nothing
    assert graph["pkg.a"] == {"pkg.b", "pkg.sub", "pkg._ext", "pkg.c"}
    assert graph["pkg.sub.deep"] == {"pkg.a", "pkg.sub.deep2"}


def test_find_cycles_reports_a_cycle_as_a_path():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e"}}
    assert sorted(find_cycles(graph)) == [["a", "b", "c", "a"], ["e", "e"]]
    assert find_cycles({"a": {"b"}, "b": set()}) == []


def test_no_module_level_import_cycle():
    cycles = find_cycles(src_graph())
    assert not cycles, "module-level import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def _runtime_layer(module: str) -> int | None:
    parts = module.split(".")
    if parts[0] != "runtime" or len(parts) < 2 or parts[1] not in RUNTIME_LAYERS:
        return None
    return RUNTIME_LAYERS.index(parts[1])


def test_runtime_layers_import_only_downward():
    graph = src_graph()
    upward = sorted(f"{module} -> {target}" for module, targets in graph.items() for target in targets
                    if None not in (_runtime_layer(module), _runtime_layer(target))
                    and _runtime_layer(target) > _runtime_layer(module))
    assert not upward, "imports from a lower runtime layer to a higher one:\n" + "\n".join(upward)


def test_runtime_never_imports_sot_at_module_level():
    graph = src_graph()
    offenders = sorted(f"{module} -> {target}" for module, targets in graph.items()
                       if module.split(".")[0] == "runtime"
                       for target in targets if target.split(".")[0] == "sot")
    assert not offenders


def test_runtime_never_names_sot_in_any_import():
    # not even inside a function or through importlib: a JIT registers itself with runtime.jit (or is
    # found through an entry point), so runtime works, eagerly, without one
    offenders = sorted(module for module, path in module_names().items()
                       if module.split(".")[0] == "runtime" and path.suffix == ".py"
                       and any(name == "sot" or name.startswith("sot.")
                               for name in all_imports(path.read_text(), module, path.stem == "__init__")))
    assert offenders == []


def test_the_opcode_executor_never_imports_codegen():
    # data flows frame -> executor -> SIR -> codegen: generated code reads the simulated frames, never
    # the other way round
    graph = src_graph()
    offenders = sorted(f"{module} -> {target}" for module, targets in graph.items()
                       if module.startswith("sot.opcode_executor")
                       for target in targets if target == "sot.codegen" or target.startswith("sot.codegen."))
    assert not offenders


# the stages of sot's pipeline: they never import sot.tools, not even inside a function; only sot.tools
# itself and the public face (sot/__init__.py, api.py, explain.py, testing.py) do
SOT_STAGES = ("hook", "translation", "opcode_executor", "ir", "guards", "dynamic", "codegen", "pyversion")


def all_imports(source: str, module: str, is_package: bool = False) -> set[str]:
    """Every module name `source` imports anywhere, functions and classes included (`from a import b`
    gives `a` and `a.b`), and the constant names it gives to importlib.import_module or __import__."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _resolve_base(node, module, is_package)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            called = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if called in ("import_module", "__import__") and isinstance(node.args[0].value, str):
                found.add(node.args[0].value)
    return found


def _names_the_tools(names: set[str]) -> bool:
    return any(name == "sot.tools" or name.startswith("sot.tools.") for name in names)


def test_no_sot_stage_imports_the_tools():
    stages = {f"sot.{stage}" for stage in SOT_STAGES}
    offenders = sorted(module for module, path in module_names().items()
                       if ".".join(module.split(".")[:2]) in stages and path.suffix == ".py"
                       and _names_the_tools(all_imports(path.read_text(), module, path.stem == "__init__")))
    assert offenders == [], "stages of sot that import sot.tools (they should emit into sot.translation.events)"


@pytest.mark.parametrize("source", ["from sot.tools import record", "import sot.tools.log", "from sot import tools",
                                    "def f():\n    from ..tools import record\n",
                                    "import importlib\nimportlib.import_module('sot.tools.report')"])
def test_the_tools_rule_sees_every_form_of_the_import(source):
    assert _names_the_tools(all_imports(source, "sot.translation.translator"))


def test_the_tools_rule_leaves_other_imports_alone():
    source = "from sot.translation import events\nfrom . import dump\nimport sot.toolsmith\n"
    assert not _names_the_tools(all_imports(source, "sot.translation.translator"))
