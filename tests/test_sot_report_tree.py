"""`Report.tree()` and the report formats nest what a break makes under the user's function.

A forward with two breaks and a loop breaking in its body (run for real as a loop body function)
are called with three batch sizes in a fresh process under `sot run` (the script checks each JIT
result against eager); the report it writes is then read here.
"""
import contextlib
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import sot
from sot.tools import formats
from sot.tools.cli import _explain_text
from sot.tools.report import Cache, FunctionReport, Report, load
from sot_helpers import jit_of, rand

SCRIPT = textwrap.dedent('''\
    import numpy as np

    import runtime as paddle
    import sot


    class Net(paddle.nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = paddle.nn.Linear(4, 4)

        def forward(self, x):
            h = self.fc(x)
            if h.abs().sum() >= 0:  # a decision on a tensor's value: breaks
                h = h * 2
            v = h.numpy()  # a tensor's value read in Python: breaks
            return h + float(v.mean())


    def loop(x):
        for i in range(4):
            x = x * 2
            x.numpy()  # breaks in every iteration: the loop runs for real
        return x + 1


    paddle.seed(0)
    net = Net()
    jit_net, jit_loop = sot.to_static(net), sot.to_static(loop)
    for b in (2, 3, 5):
        x = paddle.rand([b, 4])
        np.testing.assert_allclose(jit_net(x).numpy(), net(x).numpy(), rtol=1e-6)
        np.testing.assert_allclose(jit_loop(x).numpy(), loop(x).numpy(), rtol=1e-6)
''')
IF_LINE, NUMPY_LINE, FOR_LINE, LOOP_BREAK_LINE = 14, 16, 21, 23


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tree")
    (folder / "work.py").write_text(SCRIPT)
    env = {**os.environ, "SOT_MAX_LOOP_BREAKS": "2", "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, "-m", "sot", "run", "work.py", "--report", "r.json"], cwd=folder,
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return folder / "r.json"


def _shape(nodes):
    return [(n.function.qualname, n.function.kind, n.function.resumes_at, _shape(n.children)) for n in nodes]


def test_tree_has_one_root_per_user_function_and_nests_what_breaks_made(saved):
    tree = load(saved).tree()
    assert _shape(tree) == [
        ("Net.forward", "function", None, [
            ("Net.forward", "resume", IF_LINE + 1, [
                ("Net.forward", "resume", NUMPY_LINE, [
                    ("Net.forward", "resume", NUMPY_LINE + 1, [])])])]),
        ("loop", "function", None, [
            ("loop", "loop_body", FOR_LINE, [("loop", "resume", LOOP_BREAK_LINE, [])]),
            ("loop", "resume", LOOP_BREAK_LINE + 1, [])])]


def test_tree_names_the_break_each_resume_continues_after(saved):
    forward = load(saved).tree()[0]
    after_if = forward.children[0].function
    assert after_if.break_at.endswith(f"work.py:{IF_LINE}") and after_if.source.startswith("if h.abs().sum() >= 0:")
    body = load(saved).tree()[1].children[0].function
    assert body.break_at is None and body.source == "for i in range(4):"


def test_tree_leaves_out_a_resume_function_never_run_and_keeps_every_count(saved):
    report = load(saved)
    shown = [f for root in report.tree() for f in root.functions()]
    left_out = [f for f in report.functions if f not in shown]
    assert [(f.kind, f.translations, f.cache.entries) for f in left_out] == [("resume", 0, [])]  # the untaken branch
    for key in ("graphs", "breaks", "fallbacks", "recompiles", "ops_captured", "eager_runs"):
        assert sum(root.totals[key] for root in report.tree()) == report.totals[key], key


def test_report_with_tree_keys_round_trips_through_json(saved, tmp_path):
    report = load(saved)
    again = load(report.save(tmp_path / "again.json"))
    assert again.to_dict() == report.to_dict() == json.loads(saved.read_text())
    assert _shape(again.tree()) == _shape(report.tree())


def test_report_without_tree_keys_loads_and_nests_by_resume_of(saved, tmp_path):
    data = json.loads(saved.read_text())
    for f in data["functions"]:
        for key in ("id", "parent", "kind", "resumes_at", "break_at", "source", "carried"):
            del f[key]
    old = tmp_path / "old.json"
    old.write_text(json.dumps(data))
    tree = load(old).tree()
    assert [(n.function.qualname, n.function.resume_of) for n in tree] == [("Net.forward", None), ("loop", None)]
    assert [len(n.functions()) for n in tree] == [4, 4]
    assert all(f.kind == "function" for n in tree for f in n.functions())


def test_tree_of_a_parent_cycle_starts_at_its_first_function():
    a, b = (FunctionReport(name, "f.py", 1, [1], None, 1, 0.0, [], [], [], Cache(8, False), id=i, parent=1 - i)
            for i, name in enumerate("ab"))
    (root,) = Report([a, b]).tree()
    assert [f.qualname for f in root.functions()] == ["a", "b"]


@pytest.fixture(scope="module")
def texts(saved):
    report = load(saved)
    with contextlib.chdir(saved.parent):  # (files are shown relative to the working directory)
        return {fmt: formats.render(report, fmt) for fmt in ("text", "markdown", "junit")} | {
            "cache": formats.cache_text(report.functions), "why": formats.why_text(report.functions)}


def test_text_has_one_root_per_user_function_with_children_nested_by_kind(texts):
    lines = texts["text"].splitlines()
    roots = [line.split()[0] for line in lines[1:] if line and not line.startswith(" ")]
    assert roots == ["Net.forward", "loop"]
    nested = [line for line in lines if "└" in line]
    assert [(line.index("└"), line.split("└ ")[1].split(" at ")[0]) for line in nested] == [
        (2, "resume"), (6, "resume"), (10, "resume"), (2, "body of `for i in range(4):`"), (6, "resume"), (2, "resume")]
    assert f"└ resume at work.py:{IF_LINE + 1} after the break at work.py:{IF_LINE} `if h.abs().sum() >= 0:" in texts["text"]
    assert "from a break in" not in texts["text"]


def test_text_lists_a_break_met_on_every_translation_once_with_its_count(saved, texts):
    forward = load(saved).tree()[0].function
    assert forward.translations == 2 and len(forward.breaks) == 2
    places = [line.split(":")[1] for line in texts["text"].splitlines() if line.lstrip().startswith(f"work.py:{IF_LINE} ")]
    assert places == [f"{IF_LINE} (2x)"]
    assert len([line for line in texts["text"].splitlines() if f"work.py:{LOOP_BREAK_LINE} (2x): `x.numpy()` reads" in line]) == 1


def test_no_format_shows_names_generated_code_gives_resume_parameters(saved, texts):
    assert "__sot_" in saved.read_text()  # the guards themselves keep them
    for fmt, text in texts.items():
        assert "__sot_" not in text, fmt
    assert "<the value of `h` carried across the break> is a tensor of shape" in texts["cache"]
    assert "<stack slot 0 at the break (work.py:" in texts["cache"]  # (a loop body's placeholder: no expression)
    assert "<the loop's item>" in texts["cache"]


def test_cache_and_why_leave_out_a_resume_function_never_run(saved, texts):
    shown = [f for f in load(saved).functions if not f.idle]
    assert len(shown) == len(load(saved).functions) - 1
    for text in (texts["cache"], texts["why"]):
        assert len([line for line in text.splitlines() if not line.startswith(" ")]) == len(shown)


def test_sot_explain_command_names_each_function_and_lists_a_repeated_break_once(saved):
    with contextlib.chdir(saved.parent):
        text = _explain_text("loop", load(saved).function("loop"))
    headers = [line for line in text.splitlines() if line.startswith("== ")]
    assert sorted(h.split("  ")[0].split(" at ")[0] for h in headers) == [
        "== loop", "== loop > body of `for i in range(4):`", "== loop > resume", "== loop > resume"]
    assert len([line for line in text.splitlines() if "(2x)  | x.numpy()" in line]) == 1


def test_markdown_nests_children_and_counts_each_break_place_once(texts):
    rows = [line for line in texts["markdown"].splitlines() if line.startswith("| ")]
    assert [row.split("|")[1].strip() for row in rows[:2]] == ["function", "`Net.forward`"]
    assert rows[2].split("|")[1].strip().startswith("&nbsp;&nbsp;└ resume at work.py:")
    breaks = [row.split("|") for row in rows if "| break |" in row]
    assert sorted((cells[4].strip(), cells[5].strip()) for cells in breaks) == sorted(
        [(f"`work.py:{IF_LINE}`", "2"), (f"`work.py:{NUMPY_LINE}`", "2"), (f"`work.py:{NUMPY_LINE + 1}`", "2"),
         (f"`work.py:{LOOP_BREAK_LINE}`", "1"), (f"`work.py:{LOOP_BREAK_LINE}`", "2")])


def two_breaks(x):
    h = x * 2
    if h.abs().sum() >= 0:  # breaks: a decision on a tensor's value
        h = h + 1
    v = h.numpy()  # breaks: a tensor's value read in Python
    return h + float(v.mean())


def test_explain_text_nests_each_break_under_the_function_it_happened_in():
    x = rand(3, 4)
    want = two_breaks(x)
    got = sot.explain(jit_of(two_breaks), x)
    np.testing.assert_allclose(got.result.numpy(), want.numpy(), rtol=1e-6)
    assert [(p.depth, p.kind, [e.code for e in p.breaks]) for p in got.parts] == [
        (0, "function", ["SOT-B001"]), (1, "resume", ["SOT-B002"]), (2, "resume", ["SOT-B003"]), (3, "resume", [])]
    first, here = two_breaks.__code__.co_firstlineno, os.path.relpath(__file__)  # (as the text shows files)
    lines = str(got).split("  graph 0:")[0].splitlines()
    assert [line[:line.index("[")] for line in lines if "break:" in line] == \
        ["  break: ", "      break: ", "          break: "]
    assert [line.split("└ ")[1].split(" `")[0] for line in lines if "└" in line] == [
        f"resume at {here}:{first + 3} after the break at {here}:{first + 2}",
        f"resume at {here}:{first + 4} after the break at {here}:{first + 4}",
        f"resume at {here}:{first + 5} after the break at {here}:{first + 5}"]


def carries(x):
    return x * 2 + float(x.numpy().mean())  # breaks with `x * 2` on the stack


def carries_either(x, c):
    return (x if c else x * 2) + float(x.numpy().mean())  # `x` or `x * 2` on the stack: not named


def _carried(jit):
    from sot.codegen.carried import carried_positions
    from sot.codegen.resume_code import is_resume_code
    from sot_helpers import translators
    return [[p.col_offset if p else None for p in carried_positions(t.code)]
            for t in translators(jit) if is_resume_code(t.code)]


def test_stack_slots_a_resume_function_receives_are_named_by_their_expression_where_known():
    x = rand(2, 3)
    jit = jit_of(carries)
    np.testing.assert_allclose(jit(x).numpy(), carries(x).numpy(), rtol=1e-6)
    first = _carried(jit)[0]
    assert first[0] == len("    return ")  # `x * 2`, the left operand of `+`, at its column
    jit = jit_of(carries_either)
    np.testing.assert_allclose(jit(x, True).numpy(), carries_either(x, True).numpy(), rtol=1e-6)
    assert _carried(jit)[0][0] is None  # it comes from either branch: left unnamed
