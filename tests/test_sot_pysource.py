"""SOT_DUMP writes each translation's generated code as readable Python (transformed.py), and each
resume function / loop body it calls beside it; the source says what the bytecode does.

The round trips execute the rendered source over the user's globals and the rendered namespace and
compare it with the generated code object run directly and with eager code.
"""
import ast
import contextlib
import io
import sys
import types

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import runtime as paddle
import sot
from sot.codegen.pysource import Unrenderable, render
from sot.translation import dump
from sot_helpers import assert_same_result, jit_of, rand, translators

import test_graph_breaks_differential as breaking  # (its programs: random functions with graph breaks)


def dumped(tmp_path, monkeypatch, fn, *args):
    """Run the to_static `fn` with SOT_DUMP on (its result must be eager's); the jit and its dump folder."""
    monkeypatch.setenv("SOT_DUMP", str(tmp_path))
    jit = jit_of(fn)
    assert_same_result(jit(*args), fn(*args))
    code = jit.sot_translator.code
    return jit, tmp_path / f"{code.co_name}_{code.co_firstlineno}"


def python_files(folder):
    """Every .py the dump wrote under `folder` but source.py, by path, each checked to parse."""
    files = {p: p.read_text() for p in sorted(folder.rglob("*.py")) if p.name != "source.py"}
    for path, text in files.items():
        ast.parse(text, str(path))
        assert "could not be rendered" not in text, text
    return files


def generated_code(jit):
    """The code object the translator cached for the (first) translation of the decorated frame."""
    (entry,) = jit.sot_translator.cache.entries
    return entry.code.code


def round_trip(jit, fn, *args):
    """The rendered source of the generated code, run; it must give what the generated code itself
    gives and what eager code gives."""
    generated = generated_code(jit)
    rendered = render(generated)
    namespace = {**fn.__globals__, **rendered.namespace}
    exec(compile(rendered.text, "<transformed>", "exec"), namespace)
    from_source = namespace[generated.co_name](*args)
    from_bytecode = types.FunctionType(generated, fn.__globals__)(*args)
    assert_same_result(from_source, from_bytecode)
    assert_same_result(from_source, fn(*args))
    return rendered


def tanh_mul(x, w):
    y = paddle.tanh(x) * w
    return y - 2, {"y": y}


def test_a_frame_without_a_break_reads_as_one_compiled_graph_call(tmp_path, monkeypatch):
    x, w = rand(2, 3), rand(2, 3)
    jit, folder = dumped(tmp_path, monkeypatch, tanh_mul, x, w)
    files = python_files(folder)
    assert [p.name for p in files] == ["transformed.py"]
    text = files[folder / "0" / "transformed.py"]
    assert "def tanh_mul(x, w):" in text and "return __compiled_graph_0(x, w)" in text
    assert "#   f_locals['x'] is a tensor of shape [2, 3], dtype float32, stop_gradient=True" in text
    assert "runs SIR_" in text and "graph break" not in text
    rendered = round_trip(jit, tanh_mul, x, w)
    assert rendered.children == {}


def breaks_once(x):
    y = paddle.tanh(x)
    n = y.numpy()
    return paddle.exp(y) * float(n.shape[0])


def test_a_break_shows_the_graph_the_breaking_line_and_the_resume_call(tmp_path, monkeypatch):
    x = rand(2, 3)
    jit, folder = dumped(tmp_path, monkeypatch, breaks_once, x)
    files = python_files(folder)
    text = files[folder / "0" / "transformed.py"]
    assert "def breaks_once(x):" in text and "= __compiled_graph_0(x)" in text
    assert "# graph break: [SOT-B002]" in text and "n = y.numpy()" in text
    assert "return __rerun_eagerly(" in text  # a Program failing at run time: the frame runs again eagerly
    assert "return __resume_0(" in text and "y = " in text
    resume = files[folder / "0" / "resume_0.py"]
    assert "def breaks_once(" in resume and "return paddle.exp(y) * float(n.shape[0])" in resume
    assert "Not rendered as Python" in resume  # says what it is: the user's bytecode, entered after a prologue
    resumed = files[folder / "1" / "transformed.py"]  # the resume function's own translation
    assert "return __compiled_graph_1(" in resumed
    rendered = round_trip(jit, breaks_once, x)
    assert set(rendered.children) == {"__resume_0"}


def breaks_twice(x):
    y = paddle.tanh(x)
    a = y.numpy()
    z = paddle.exp(y) + 1
    b = z.numpy()
    return z * float(a.shape[0] + b.shape[1])


def test_each_break_of_a_chain_is_written_where_its_translation_is(tmp_path, monkeypatch):
    x = rand(2, 3)
    jit, folder = dumped(tmp_path, monkeypatch, breaks_twice, x)
    files = python_files(folder)
    first, second = files[folder / "0" / "transformed.py"], files[folder / "1" / "transformed.py"]
    assert "a = y.numpy()" in first and "b = z.numpy()" not in first
    assert "b = z.numpy()" in second and "= __compiled_graph_1(" in second
    assert "z = paddle.exp(y) + 1" in files[folder / "0" / "resume_0.py"]
    assert "return z * float(a.shape[0] + b.shape[1])" in files[folder / "1" / "resume_0.py"]
    round_trip(jit, breaks_twice, x)


def halves(y):
    n = y.numpy()
    return y * float(n.size) / 12


def calls_halves(x):
    y = paddle.tanh(x)
    z = halves(y)
    return z + 1


def test_a_break_inside_an_inlined_callee_resumes_the_callee_then_passes_its_result_to_the_caller(
        tmp_path, monkeypatch):
    x = rand(2, 3)
    jit, folder = dumped(tmp_path, monkeypatch, calls_halves, x)
    files = python_files(folder)
    text = files[folder / "0" / "transformed.py"]
    assert "n = y.numpy()" in text
    callee_result = next(line.split(" = ")[0].strip() for line in text.splitlines() if " = __resume_0(" in line)
    assert f"return __resume_1({callee_result}, x, y)" in text
    assert "return y * float(n.size) / 12" in files[folder / "0" / "resume_0.py"]
    assert "return z + 1" in files[folder / "0" / "resume_1.py"]
    round_trip(jit, calls_halves, x)


def loop_with_a_branch(x, items):
    for w in items:
        if x.sum() > 1e9:  # a tensor condition in every iteration (never taken)
            x = x - 1
        x = x * w
    return x + 1


def test_a_loop_run_for_real_reads_as_a_for_loop_calling_its_body(tmp_path, monkeypatch):
    x, items = rand(3), [1.001] * 50
    jit, folder = dumped(tmp_path, monkeypatch, loop_with_a_branch, x, items)
    files = python_files(folder)
    text = files[folder / "0" / "transformed.py"]
    assert "the loop runs for real" in text and "if x.sum() > 1e9:" in text
    loop = next(line.strip() for line in text.splitlines() if line.strip().startswith("for "))
    assert loop.endswith(":") and "= __loop_body(" in text and ", x = __loop_body(" in text
    body = files[folder / "0" / "loop_body.py"]
    assert "x = x * w" in body and "def loop_with_a_branch(__sot_item, x, items):" in body
    rendered = round_trip(jit, loop_with_a_branch, x, items)
    assert set(rendered.children) == {"__loop_body", "__resume_0"}


def tensor_while(x):
    steps = 0
    while x.sum() < 10:  # a tensor condition at the head of each iteration
        x = x * 2
        steps += 1
    return x, steps


def test_a_while_loop_run_for_real_reads_as_while_true(tmp_path, monkeypatch):
    x = paddle.to_tensor(np.array([1e-3, 2e-3], "float32"))
    jit, folder = dumped(tmp_path, monkeypatch, tensor_while, x)
    files = python_files(folder)
    loops = [text for text in files.values() if "while True:" in text]
    assert loops and all("= __loop_body(x, steps)" in text for text in loops)
    assert any("x = x * 2" in text for path, text in files.items() if path.name == "loop_body.py")
    round_trip(jit, tensor_while, x)


def breaks_in_a_try(x):
    y = paddle.exp(x)
    try:
        a = y.numpy()
    except ValueError:
        a = None
    return y * 2, a is None


def test_a_break_under_a_try_hands_what_it_raises_to_the_handlers_resume_function(tmp_path, monkeypatch):
    x = rand(2)
    jit, folder = dumped(tmp_path, monkeypatch, breaks_in_a_try, x)
    files = python_files(folder)
    text = files[folder / "0" / "transformed.py"]
    assert "except BaseException as __sot_error:" in text and "return __resume_1(__sot_raised_1, x, y)" in text
    assert "the `except` handler of line" in files[folder / "0" / "resume_1.py"]
    round_trip(jit, breaks_in_a_try, x)


def loop_breaks_in_a_try(x):
    try:
        for i in range(3):
            n = x.numpy()
            x = x + float(n.size)
    except ValueError:
        x = x - 1
    return x


def test_a_loop_step_under_a_try_takes_the_next_item_inside_the_try(tmp_path, monkeypatch):
    x = rand(3)
    jit, folder = dumped(tmp_path, monkeypatch, loop_breaks_in_a_try, x)
    files = python_files(folder)
    steps = [text for text in files.values() if "= next(" in text]  # a resume function's break at FOR_ITER
    assert steps
    for text in steps:
        lines = [line.strip() for line in text.splitlines()]
        at = next(n for n, line in enumerate(lines) if "= next(" in line)
        item = lines[at].split(" = ")[0]
        assert lines[at - 1] == "try:" and lines[at + 1] == "except BaseException as __sot_error:"
        assert f"if {item} is __exhausted:" in lines
    round_trip(jit, loop_breaks_in_a_try, x)


class Log:
    """A context manager recording its enter and exit."""

    def __init__(self):
        self.log = []

    def __enter__(self):
        self.log.append("enter")
        return self

    def __exit__(self, kind, value, tb):
        self.log.append(("exit", None if kind is None else kind.__name__))
        return False


def branches_in_a_with(x, manager):
    with manager:
        if x.sum() > 0:
            y = x + 1
        else:
            y = x * 2
    return y


def test_a_tensor_condition_in_a_with_block_tests_its_truth_inside_the_try(tmp_path, monkeypatch):
    x = rand(3)
    jit, folder = dumped(tmp_path, monkeypatch, branches_in_a_with, x, Log())
    text = python_files(folder)[folder / "0" / "transformed.py"]
    assert "if x.sum() > 0:" in text
    truth = next(line.strip() for line in text.splitlines() if "= bool(" in line)  # may raise: in the try
    assert text.count("try:") == 2 and f"if not {truth.split(' = ')[0]}:" in text
    round_trip(jit, branches_in_a_with, x, Log())


def numpy_under_no_grad(x):
    y = x * 3
    with paddle.no_grad():
        n = y.numpy()
        z = y + float(n.size)
    return z * 2


def test_a_resume_function_inside_a_grad_mode_block_enters_it_again(tmp_path, monkeypatch):
    x = rand(2, 3, grad=True)
    jit, folder = dumped(tmp_path, monkeypatch, numpy_under_no_grad, x)
    files = python_files(folder)
    assert "__enter_grad_mode(" in files[folder / "0" / "transformed.py"]
    resume = files[folder / "0" / "resume_0.py"]
    assert "value stack on entry (bottom first): [no_grad().__exit__, " in resume
    assert "z = y + float(n.size)" in resume
    round_trip(jit, numpy_under_no_grad, x)


def keeps_a_temporary_across_a_store(x, y):
    __sot_t0 = x  # a temporary reading a local: read as that local until the local is written
    x = y
    return __sot_t0, x


def loops_branches_and_calls(items, scale):
    total, seen = 0, []
    for item in items:
        if item is None:
            continue
        __sot_t1 = item
        total += __sot_t1 * scale
        seen.append(round(item, ndigits=1))
        if total > 100:
            return total, seen, "early"
    key, value = sorted({"b": 2, "a": 1}.items())[0]
    while True:
        scale -= 1
        if scale < 0:
            return total, seen, key, value, items[1:-1]


@pytest.mark.parametrize("fn, args", [(keeps_a_temporary_across_a_store, (1, 2)),
                                      (loops_branches_and_calls, ([1.25, None, 2.5, 3.0], 2)),
                                      (loops_branches_and_calls, ([50.0, 60.0], 1))])
def test_plain_code_rendered_and_run_gives_what_the_code_gives(fn, args):
    rendered = render(fn.__code__)
    ast.parse(rendered.text)
    scope = {**fn.__globals__, **rendered.namespace}
    exec(compile(rendered.text, "<rendered>", "exec"), scope)
    assert scope[fn.__name__](*args) == fn(*args)


def test_explain_gives_the_generated_code_of_each_translation_that_ran_as_python():
    x = rand(2, 3)
    report = sot.explain(jit_of(breaks_once), x)
    assert_same_result(report.result, breaks_once(x))
    first, resumed = report.sources  # the frame up to its break, then its resume function
    for text in report.sources:
        ast.parse(text)
    assert "def breaks_once(x):" in first and "n = y.numpy()" in first and "return __resume_0(" in first
    assert "return __compiled_graph_" in resumed and "graph break" not in resumed


def test_code_the_renderer_does_not_know_raises_unrenderable():
    def formats(x):
        return f"{x}"

    with pytest.raises(Unrenderable, match="FORMAT_SIMPLE"):
        render(formats.__code__)


def test_a_dump_whose_source_cannot_be_rendered_says_so_and_the_translation_runs(tmp_path, monkeypatch):
    def refuse(*args, **kwargs):
        raise Unrenderable("a shape it does not know")

    monkeypatch.setattr(dump, "render", refuse)
    x = rand(2, 3)
    jit, folder = dumped(tmp_path, monkeypatch, breaks_once, x)
    text = (folder / "0" / "transformed.py").read_text()
    assert "could not be rendered as Python (a shape it does not know); see bytecode.txt" in text
    assert jit.sot_translator.fallbacks == [] and len(jit.sot_translator.breaks) == 1
    assert (folder / "0" / "bytecode.txt").exists()


def test_a_debugger_steps_through_the_users_own_lines(tmp_path, monkeypatch):
    """The .py files are for reading: what runs keeps the user's file and line numbers, so a tracer
    (pdb) sees only lines of the user's function, through the generated code (at the breaking line)
    and its resume function."""
    x = rand(2, 3)
    jit, _ = dumped(tmp_path, monkeypatch, breaks_once, x)
    code = breaks_once.__code__
    lines = []

    def tracer(frame, event, arg):
        if frame.f_code.co_name == code.co_name:
            if event == "line":
                lines.append((frame.f_code.co_filename, frame.f_lineno))
            return tracer
        return None

    sys.settrace(tracer)
    try:
        out = jit(x)
    finally:
        sys.settrace(None)
    assert_same_result(out, breaks_once(x))
    function = range(code.co_firstlineno, code.co_firstlineno + 4)
    assert lines and {f for f, _ in lines} == {code.co_filename} and all(n in function for _, n in lines)
    assert code.co_firstlineno + 2 in {n for _, n in lines}  # the breaking line
    assert len(translators(jit)) == 2


def printed(fn, *args):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        result = fn(*args)
    return result, out.getvalue()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(source=breaking.programs(), seed=st.integers(0, 2**16))
def test_the_rendered_source_of_random_breaking_programs_does_what_the_generated_code_does(source, seed):
    """Each run gets its own inputs and state: the rendered source, the generated code and eager code
    give the same result, print the same text and make the same side effects."""
    namespace = {"paddle": paddle}
    exec(compile(breaking.HELPER + source, "<generated>", "exec"), namespace)
    fn = namespace["f"]
    jit = sot.to_static(fn)
    values = np.random.default_rng(seed).uniform(-1, 1, (3,)).astype("float32")

    def inputs():
        return paddle.to_tensor(values), [1.0], breaking.Box()

    printed(jit, *inputs())
    generated = generated_code(jit)
    try:
        rendered = render(generated)
    except Unrenderable as e:  # a loop run for real inside a `with` block: its handler covers the loop
        assert "a protected range with a jump" in str(e), source
        return
    scope = {**fn.__globals__, **rendered.namespace}
    exec(compile(rendered.text, "<transformed>", "exec"), scope)
    runs = []
    for run in (scope["f"], types.FunctionType(generated, fn.__globals__), fn):
        args = inputs()
        with sot.disable() if run is fn else contextlib.nullcontext():
            result, text = printed(run, *args)
        runs.append((result, text, args[1], args[2]))
    for result, text, log, box in runs[:2]:
        assert text == runs[2][1], source
        assert_same_result(result, runs[2][0])
        assert_same_result(log, runs[2][2])
        assert box == runs[2][3]
