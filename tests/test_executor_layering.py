"""The executor sits below `runtime.static`: it imports nothing of it, reads programs only through
the Protocols of `runtime.executor.program`, and asks the installed front end for the rest."""
import ast
import pathlib

import pytest

import runtime as paddle
from runtime import static
from runtime.executor import program as program_api
from runtime.static.frontend import STATIC_FRONTEND

EXECUTOR_DIR = pathlib.Path(program_api.__file__).parent


def _imported_modules(path: pathlib.Path) -> list[str]:
    """Every module `path` imports, anywhere in it (function bodies included), as an absolute
    name; also every string handed to a call (an `importlib.import_module("...")`)."""
    package = "runtime.executor"
    names = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[:len(package.split(".")) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            names += [module] + [f"{module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Call):
            names += [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    return names


@pytest.mark.parametrize("path", sorted(EXECUTOR_DIR.glob("*.py")), ids=lambda p: p.name)
def test_no_executor_module_imports_runtime_static(path):
    upward = [m for m in _imported_modules(path) if m == "runtime.static" or m.startswith("runtime.static.")]
    assert upward == [], f"{path.name} imports {upward}"


def _members(protocol: type) -> set[str]:
    """The attributes and methods a Protocol names (not those every class has)."""
    own = {n for n in vars(protocol) if not n.startswith("__") and n not in ("_is_protocol", "_abc_impl")}
    return own | set(getattr(protocol, "__annotations__", {}))


def _static_program():
    main = static.Program()
    with static.program_guard(main, static.Program()):
        x = static.data("x", [2, 3], "float32")
        y = paddle.tanh(x)
    return main, y


@pytest.mark.parametrize("protocol", ["Variable", "Operator", "Block", "Program"])
def test_static_programs_provide_everything_the_executor_protocols_name(static_mode, protocol):
    main, y = _static_program()
    block = main.global_block()
    sample = {"Variable": y, "Operator": block.ops[0], "Block": block, "Program": main}[protocol]
    missing = sorted(n for n in _members(getattr(program_api, protocol)) if not hasattr(sample, n))
    assert missing == []


def test_the_static_front_end_provides_everything_the_executor_asks_for():
    missing = sorted(n for n in _members(program_api.Frontend) if not hasattr(STATIC_FRONTEND, n))
    assert missing == [] and program_api.frontend() is STATIC_FRONTEND


def test_without_a_front_end_an_executor_names_what_is_missing(monkeypatch):
    monkeypatch.setattr(program_api, "_frontend", None)
    with pytest.raises(RuntimeError, match="no program front end is installed"):
        static.Executor()
