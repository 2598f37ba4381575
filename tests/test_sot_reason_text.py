"""Break and fallback details say what happened in the user's terms, quoting the expression as written.

Each case runs a function under to_static and eagerly (same result), then checks the detail recorded
for its break or fallback: it starts with the source expression the instruction's positions cut out
of the file, and it names nothing of the simulator (Variables, SIR symbols, static var names, opcodes,
static-graph APIs). `docs/reasons.md` has a section for every reason code, linked from the README.
"""
import contextlib
import copy
import dis
import pathlib
import re
import sys
import types

import pytest

import runtime as paddle
import sot
from sot import config
from sot.pyversion import Instruction
from sot.tools import formats
from sot.tools.report import Report
from sot.translation.reasons import REASONS
from sot.translation.source_text import quoted
from sot_helpers import assert_same_result, assert_user_terms, events, jit_of, rand
from test_graph_breaks_in_loops import decides_on_the_item, long_pure_loop, reads_the_loop_variable_after

ROOT = pathlib.Path(__file__).resolve().parent.parent


def forward(x, w):
    h = paddle.matmul(x, w)
    if h.sum() > 0:
        h = h * 2
    v = h.numpy()
    return h + float(v.mean())


def test_the_details_quote_the_expressions_the_user_wrote():
    x, w = rand(2, 4), rand(4, 4)
    jit = jit_of(forward)
    assert_same_result(jit(x, w), forward(x, w))
    assert {(code, detail) for code, detail, _ in events(jit)} == {
        ("SOT-B001", "`h.sum() > 0` decides on a tensor's value"),
        ("SOT-B002", "`h.numpy()` reads a tensor's value into Python"),
        ("SOT-B003", "`v.mean()` calls numpy.ndarray.mean, which sot cannot trace (NumPy on values)"),
    }


def after_a_non_ascii_name(x):
    größe = 2.0
    return x * float(größe * x.numpy().sum())  # columns count UTF-8 bytes: "größe" is 7 of them


def multi_line(x):
    return x + float(
        x.numpy().sum())


def long_expression(x):
    return x + float(x.numpy().sum() + x.numpy().sum() + x.numpy().sum() + x.numpy().sum() + 1)


@pytest.mark.parametrize("fn, detail", [
    (after_a_non_ascii_name, "`x.numpy()` reads a tensor's value into Python"),
    (multi_line, "`x.numpy()` reads a tensor's value into Python"),
    (long_expression, "`x.numpy()` reads a tensor's value into Python"),
])
def test_an_expression_is_cut_at_its_columns(fn, detail):
    x = rand(3)
    jit = jit_of(fn)
    assert_same_result(jit(x), fn(x))
    assert events(jit)[0][1] == detail


def test_an_expression_over_lines_is_quoted_on_one_line_and_a_long_one_is_cut():
    code = multi_line.__code__
    (call,) = [i for i in dis.get_instructions(code) if i.opname == "CALL" and i.positions.end_lineno >
               i.positions.lineno]  # float(...) spans two lines
    assert quoted(code, call) == "float( x.numpy().sum())"
    code = long_expression.__code__
    outer = max((i for i in dis.get_instructions(code) if i.opname == "CALL"),
                key=lambda i: i.positions.end_col_offset - i.positions.col_offset)
    text = quoted(code, outer)
    assert text.endswith("...") and len(text) == 72 and text.startswith("float(x.numpy().sum() + ")


def test_without_columns_the_line_is_quoted_and_without_a_file_nothing():
    code = forward.__code__
    line = code.co_firstlineno + 2
    assert quoted(code, Instruction("POP_JUMP_IF_FALSE", lineno=line, positions=None)) == "if h.sum() > 0:"
    made = {}
    exec(compile("def f(x):\n    if x.sum() > 0:\n        return x\n    return -x\n", "<made>", "exec"), made)
    x = rand(3)
    jit = sot.to_static(made["f"])
    assert_same_result(jit(x), made["f"](x))
    assert [d for _, d, _ in events(jit)] == ["this line decides on a tensor's value"]


def as_int(x):
    return x * int(x.sum())


def update_through_a_view(x):
    y = x + 0
    z = y.reshape([6])
    y += 1
    return z


def masked(x):
    return x[x > 0.5]


def hashes_a_caught_exception(x):
    try:
        raise ValueError("v")
    except ValueError as e:
        return x + hash(e) % 2


SCRATCH = types.ModuleType("scratch")


def sets_a_module_attribute(x):
    SCRATCH.mark = 1
    return x


def redirects(x):
    with contextlib.redirect_stdout(sys.stderr):
        pass
    return x


def prints_an_array(x):
    print(x.numpy().round(1))
    return x + 1


def frees_its_input(x):
    x.stop_gradient = False
    return x * 2


def deep(x, n):
    return x if n == 0 else deep(x + 1, n - 1)


def defines_a_class(x):
    class Local:  # a comment of the statement is not quoted
        scale = 2
    return x * Local.scale


CASES = [
    (as_int, lambda: (rand(2),), "SOT-B002", "`int(x.sum())` reads a tensor's value into Python"),
    (update_through_a_view, lambda: (rand(2, 3),), "SOT-S001", "`y += 1` updates a tensor in place"),
    (masked, lambda: (rand(4),), "SOT-B005", "`x[x > 0.5]` indexes by a boolean mask"),
    (hashes_a_caught_exception, lambda: (rand(2),), "SOT-G001", "`hash(e)` hashes an exception"),
    (sets_a_module_attribute, lambda: (rand(2),), "SOT-S001", "`SCRATCH.mark` sets the attribute 'mark' of scratch"),
    (redirects, lambda: (rand(2),), "SOT-S001", "`setattr(sys, self._stream, self._new_target)` sets the "
                                                 "attribute 'stdout' of sys"),
    (prints_an_array, lambda: (rand(2),), "SOT-B003", "`print(x.numpy().round(1))` prints a numpy.ndarray object"),
    (frees_its_input, lambda: (rand(2),), "SOT-S001", "`x.stop_gradient` sets the stop_gradient of a tensor"),
    (deep, lambda: (rand(2), 40), "SOT-B003", "`deep(x + 1, n - 1)` recurses into deep deeper than"),
    (defines_a_class, lambda: (rand(2),), "SOT-U001", "`class Local` uses a class statement"),
    (reads_the_loop_variable_after, lambda: (rand(3), [1.001] * 100), "SOT-C002",
     "`x.sum() > 1e9` breaks the graph inside loops with 100 iterations left"),
    (long_pure_loop, lambda: (rand(3), 200), "SOT-C003", "`for i in range(n)` loops 200 times"),
    (decides_on_the_item, lambda: (rand(3), 300), "SOT-C003",  # (3.11: the jump's positions are the `if`'s)
     re.compile(r"`(if )?i % 2` needs the value of the loop's item")),
]


@pytest.mark.parametrize("fn, args, code, starts", CASES, ids=[case[0].__name__ for case in CASES])
def test_each_detail_is_in_the_users_terms(fn, args, code, starts):
    inputs = args()
    want = fn(*copy.deepcopy(inputs))
    jit = jit_of(fn)
    assert_same_result(jit(*inputs), want)
    recorded = events(jit)
    starts = starts if isinstance(starts, re.Pattern) else re.compile(re.escape(starts))
    assert any(c == code and starts.match(d) for c, d, _ in recorded), recorded
    for _, detail, _ in recorded:
        assert_user_terms(detail)


def two_ops(x):
    return x * 2 + 1


def test_a_small_graph_and_the_cache_limit_say_no_internal_name():
    config.set_min_graph_size(3)
    try:
        jit = jit_of(two_ops)
        x = rand(2)
        assert_same_result(jit(x), two_ops(x))
        (small,) = jit.sot_translator.small_graphs
    finally:
        config.set_min_graph_size(None)
    assert small.code == "SOT-C001"
    assert_user_terms(small.detail)


def test_the_text_report_quotes_the_expression_and_links_the_codes_section():
    x, w = rand(2, 4), rand(4, 4)
    jit = jit_of(forward)
    assert_same_result(jit(x, w), forward(x, w))
    mine = [f for f in sot.report().functions if f.qualname == "forward" and f.file == __file__]
    text = formats.render(Report(mine), "text")
    assert "see docs/reasons.md#sot-b001)" in text
    assert "`h.sum() > 0` decides on a tensor's value" in text


def test_every_code_has_a_section_in_docs_reasons_linked_from_the_readme():
    page = (ROOT / "docs" / "reasons.md").read_text()
    sections = re.findall(r"^## (SOT-[A-Z]\d{3})$", page, re.M)
    assert sorted(sections) == sorted(REASONS) and len(sections) == len(set(sections))
    readme = (ROOT / "README.md").read_text()
    command_section = readme.split("## The sot command", 1)[1].split("\n## ", 1)[0]
    assert "docs/reasons.md" in command_section
