"""SOT_DUMP=DIR writes each translation's artifacts with stable names; the SOT_* knobs live in sot.config.

Every JIT result here is also compared with the eager result: dumping must not change what runs.
"""
import ast
import pathlib
import types

import numpy as np
import pytest

import runtime as paddle
import sot
from sot import config
from sot.translation.dump import dump_translation

ARTIFACTS = {"source.py", "sir.txt", "program.txt", "bytecode.txt", "guards.txt", "transformed.py"}


def tensor(*shape):
    return paddle.to_tensor(np.random.rand(*shape).astype("float32"))


def fresh(fn):
    """A copy of `fn` with its own code object, so its code cache starts empty (caches are per code)."""
    return types.FunctionType(fn.__code__.replace(), fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)


def tanh_mul(x, y):
    return paddle.tanh(x) * y - 2


def identity(x):
    return x


def assert_matches_eager(jit_out, eager_out):
    assert jit_out.dtype == eager_out.dtype and jit_out.shape == eager_out.shape
    np.testing.assert_array_equal(jit_out.numpy(), eager_out.numpy())


def dump_folder(root, fn):
    return root / f"{fn.__code__.co_name}_{fn.__code__.co_firstlineno}"


def test_a_translation_writes_every_artifact_under_stable_names(tmp_path, monkeypatch):
    monkeypatch.setenv("SOT_DUMP", str(tmp_path))
    fn = fresh(tanh_mul)
    x, y = tensor(2, 3), tensor(2, 3)
    assert_matches_eager(sot.to_static(fn)(x, y), tanh_mul(x, y))

    folder = dump_folder(tmp_path, fn) / "0"
    assert {p.name for p in folder.iterdir()} == ARTIFACTS
    assert [p.name for p in tmp_path.iterdir()] == [f"tanh_mul_{fn.__code__.co_firstlineno}"]
    text = {name: (folder / name).read_text() for name in ARTIFACTS}
    assert "return paddle.tanh(x) * y - 2" in text["source.py"]
    assert "runtime.tanh(var_0)" in text["sir.txt"] and "__mul__" in text["sir.txt"]
    assert "__sub__" in text["sir.txt"]
    ops = [line.split("= ", 1)[1].split("(")[0] for line in text["program.txt"].splitlines() if "} = " in line]
    assert ops == ["tanh", "multiply", "assign_value", "subtract"]
    guards = text["guards.txt"].splitlines()
    assert "f_locals['x'] is a tensor of shape [2, 3], dtype float32, stop_gradient=True" in guards
    assert any(g.startswith("type(f_locals['y']) is ") for g in guards)
    assert "generated code tanh_mul" in text["bytecode.txt"]
    assert "RETURN_VALUE" in text["bytecode.txt"] and "LOAD_FAST" in text["bytecode.txt"]
    assert " at 0x" not in text["bytecode.txt"]  # no memory addresses: two runs' dumps diff cleanly


def test_the_next_translation_of_the_same_code_goes_to_the_next_number(tmp_path, monkeypatch):
    monkeypatch.setenv("SOT_DUMP", str(tmp_path))
    fn = fresh(tanh_mul)
    jit = sot.to_static(fn)
    for shape in ([2, 3], [3, 4], [2, 3]):  # the third call hits the cache: no new dump
        x, y = tensor(*shape), tensor(*shape)
        assert_matches_eager(jit(x, y), tanh_mul(x, y))
    assert jit.sot_translator.translations == 2
    folder = dump_folder(tmp_path, fn)
    assert sorted(p.name for p in folder.iterdir()) == ["0", "1"]
    assert "shape [2, 3]" in (folder / "0" / "guards.txt").read_text()
    assert "shape [-1, -1]" in (folder / "1" / "guards.txt").read_text()  # both dims changed: dynamic
    assert "float32[-1, -1]" in (folder / "1" / "sir.txt").read_text()


def test_nothing_is_written_when_sot_dump_is_unset(tmp_path, monkeypatch):
    monkeypatch.delenv("SOT_DUMP", raising=False)
    monkeypatch.chdir(tmp_path)
    fn = fresh(tanh_mul)
    x, y = tensor(2, 3), tensor(2, 3)
    jit = sot.to_static(fn)
    assert_matches_eager(jit(x, y), tanh_mul(x, y))
    assert jit.sot_translator.translations == 1
    assert list(tmp_path.iterdir()) == []
    monkeypatch.setenv("SOT_DUMP", "")
    assert dump_translation(fn.__code__, None, None, fn.__code__, []) is None


def test_an_unwritable_dump_directory_warns_and_the_translation_still_runs(tmp_path, monkeypatch):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("SOT_DUMP", str(blocker / "dumps"))
    fn = fresh(tanh_mul)
    x, y = tensor(2, 3), tensor(2, 3)
    jit = sot.to_static(fn)
    with pytest.warns(RuntimeWarning, match=r"SOT_DUMP: cannot write the dump of tanh_mul"):
        out = jit(x, y)
    assert_matches_eager(out, tanh_mul(x, y))
    assert jit.sot_translator.translations == 1 and jit.sot_translator.fallbacks == []
    assert blocker.read_text() == "not a directory"


def test_source_that_inspect_cannot_find_is_reported_as_missing(tmp_path, monkeypatch):
    monkeypatch.setenv("SOT_DUMP", str(tmp_path))
    namespace = {"paddle": paddle}
    exec(compile("def made(x):\n    return paddle.exp(x)\n", "<generated>", "exec"), namespace)
    made = namespace["made"]
    x = tensor(2)
    assert_matches_eager(sot.to_static(made)(x), paddle.exp(x))
    source = (tmp_path / "made_1" / "0" / "source.py").read_text()
    assert "source not available" in source and "<generated>:1" in source


def test_a_frame_without_computed_tensors_says_it_has_no_program(tmp_path, monkeypatch):
    monkeypatch.setenv("SOT_DUMP", str(tmp_path))
    fn = fresh(identity)
    x = tensor(2)
    assert sot.to_static(fn)(x) is x
    folder = dump_folder(tmp_path, fn) / "0"
    assert {p.name for p in folder.iterdir()} == ARTIFACTS
    assert "no Program" in (folder / "program.txt").read_text()


def test_knobs_are_read_when_used_not_at_import(tmp_path, monkeypatch):
    monkeypatch.delenv("SOT_DISABLE", raising=False)
    monkeypatch.delenv("SOT_DUMP", raising=False)
    assert not config.disabled() and config.dump_dir() is None
    monkeypatch.setenv("SOT_DISABLE", "0")
    assert not config.disabled()
    assert sot.to_static(tanh_mul) is not tanh_mul
    monkeypatch.setenv("SOT_DISABLE", "yes")
    assert config.disabled()
    assert sot.to_static(tanh_mul) is tanh_mul
    monkeypatch.setenv("SOT_DUMP", str(tmp_path))
    assert config.dump_dir() == tmp_path


def test_only_sot_config_reads_the_environment():
    """One registry for the SOT_* knobs: no other sot module reads os.environ or names a knob."""
    src = pathlib.Path(sot.__file__).parent
    offenders = []
    for path in sorted(src.rglob("*.py")):
        if path.name == "config.py" and path.parent == src:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv"):
                offenders.append(f"{path.relative_to(src)}:{node.lineno} os.{node.attr}")
    assert offenders == []


def breaks_at_numpy(x):
    y = paddle.tanh(x)
    y.numpy()
    return paddle.exp(y) * 2


def test_a_frame_that_breaks_is_dumped_with_its_break_and_so_is_its_resume_function(tmp_path, monkeypatch):
    monkeypatch.setenv("SOT_DUMP", str(tmp_path))
    fn = fresh(breaks_at_numpy)
    x = tensor(2, 3)
    jit = sot.to_static(fn)
    assert_matches_eager(jit(x), breaks_at_numpy(x))
    assert len(jit.sot_translator.breaks) == 1
    # the resume function keeps the frame's name and first line, so its dump is the folder's next number
    folder = dump_folder(tmp_path, fn)
    assert sorted(p.name for p in folder.iterdir()) == ["0", "1"]
    broken, resumed = folder / "0", folder / "1"
    assert {p.name for p in broken.iterdir()} == ARTIFACTS | {"break.txt", "resume_0.py"}
    assert {p.name for p in resumed.iterdir()} == ARTIFACTS
    first_line = fn.__code__.co_firstlineno
    reason = (broken / "break.txt").read_text()
    assert reason.startswith("[SOT-B002]") and "numpy" in reason and f"{__file__}:{first_line + 2}" in reason
    sir = (broken / "sir.txt").read_text()
    assert "runtime.tanh(var_0)" in sir and "exp" not in sir  # the graph before the break only
    ops = [line.split("= ", 1)[1].split("(")[0] for line in (broken / "program.txt").read_text().splitlines()
           if "} = " in line]
    assert ops == ["tanh"]
    assert "generated code breaks_at_numpy" in (broken / "bytecode.txt").read_text()
    assert "f_locals['x'] is a tensor of shape [2, 3]" in (broken / "guards.txt").read_text()
    resumed_sir = (resumed / "sir.txt").read_text()
    assert "runtime.exp(" in resumed_sir and "tanh" not in resumed_sir


def halved(x):
    return x * 0.5


def calls_halved(x):
    y = paddle.tanh(x)
    return halved(y) + 1


def test_each_sir_statement_names_the_user_line_that_made_it(tmp_path, monkeypatch):
    monkeypatch.setenv("SOT_DUMP", str(tmp_path))
    fn = fresh(calls_halved)
    x = tensor(2, 3)
    jit = sot.to_static(fn)
    assert_matches_eager(jit(x), calls_halved(x))
    assert jit.sot_translator.breaks == [] and jit.sot_translator.fallbacks == []
    statements = [line.strip() for line in (dump_folder(tmp_path, fn) / "0" / "sir.txt").read_text().splitlines()
                  if "||" in line]
    name, line = pathlib.Path(__file__).name, fn.__code__.co_firstlineno
    callee_line = halved.__code__.co_firstlineno + 1  # the inlined callee's statement: its own line
    assert [s.split("(", 1)[0].split("= ", 1)[1] for s in statements] == ["runtime.tanh", "var_1.__mul__",
                                                                          "var_2.__add__"]
    assert [s.rsplit("  # ", 1)[1] for s in statements] == [f"{name}:{line + 1}", f"{name}:{callee_line}",
                                                            f"{name}:{line + 2}"]
