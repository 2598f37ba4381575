"""A dim a recompile would make dynamic but the code reads as a Python int stays static (each new size
translates again): `sot.explain`, `sot.report()` (JSON, text, markdown) and `sot cache why` say so,
naming the dim as the code does (`x dim 0`), why, and the line with its source as written. A dim
kept static by `sot.mark_static` is reported as such; a dim used only symbolically is not reported.

Every JIT result (and what it prints) is compared with the eager run of the same code.
"""
import gc
import inspect
import json
import subprocess
import sys
import textwrap

import numpy as np

import runtime as paddle
import sot
from sot.dynamic.shapes import KeptStatic
from sot.tools import formats
from sot.tools.cli import main
from sot.tools.report import Report, load
from sot_helpers import assert_same_result, jit_of, rand

READ_AS_INT = "read as a Python int"


def print_batch(x):
    print(x.shape[0])
    return x * 2


def loop_over_batch(x):
    y = x * 2
    for _ in range(x.shape[0]):
        y = y + 1
    return y


def branch_on_batch(x):
    n = x.shape[0]
    if n > 4:
        return x * 3
    return x - 1


def batch_of(t):
    return t.shape[0]


def branch_on_a_callees_batch(x):
    n = batch_of(x)
    if n > 4:
        return x * 3
    return x - 1


def scale_by_named_batch(batch):
    return batch * int(batch.shape[0])


def flatten_by_batch(x):
    return x.reshape([x.shape[0], -1]) * 2


def double(x):
    return x * 2


def stacked_loss(x, w):
    return paddle.concat([x, x * w]).sum()


def line_of(fn, text):
    """The line number in this file of the first line of `fn` containing `text`, and that line stripped."""
    lines, first = inspect.getsourcelines(fn)
    (found,) = [(first + i, line.strip()) for i, line in enumerate(lines) if text in line][:1]
    return found


def run_batches(fn, capsys, batches=(2, 3)):
    """A to_static copy of `fn` run on x of each batch size: result and output as eager's. The copy."""
    jit = jit_of(fn)
    for n in batches:
        x = rand(n, 4)
        want = fn(x)
        printed = capsys.readouterr().out
        assert_same_result(jit(x), want)
        assert capsys.readouterr().out == printed
    return jit


def explain_batch(jit, fn, capsys, n=5):
    """sot.explain of `jit` on batch `n`: its result and output as eager's. The Explanation."""
    x = rand(n, 4)
    want = fn(x)
    printed = capsys.readouterr().out
    explanation = sot.explain(jit, x)
    assert_same_result(explanation.result, want)
    assert capsys.readouterr().out == printed
    return explanation


def report_of(jit):
    """The FunctionReport of `jit`'s code, in a Report of its own, from sot.report()."""
    gc.collect()  # earlier copies of the function (dropped, awaiting the collector) are not reported
    code = jit.sot_translator.code
    (mine,) = [f for f in sot.report().functions if f.qualname == code.co_qualname and f.file == code.co_filename]
    assert mine.translations == jit.sot_translator.translations
    return Report([mine])


READS = [(print_batch, "print(x.shape[0])", None), (loop_over_batch, "range(x.shape[0])", None),
         (branch_on_batch, "n = x.shape[0]", "if n > 4:")]


def expected(fn, read, needed):
    """The KeptStatic of x dim 0 read as an int by `fn` on the line holding `read` (`needed`: another
    line whose instruction needed the value)."""
    line, source = line_of(fn, read)
    need = (__file__, *line_of(fn, needed)) if needed else ("", 0, "")
    return KeptStatic("x dim 0", READ_AS_INT, __file__, line, source, *need)


def test_reading_the_batch_as_an_int_keeps_it_static_and_translates_per_size(capsys):
    for fn, _, _ in READS:
        jit = run_batches(fn, capsys, (2, 3, 5))
        assert jit.sot_translator.translations == 3 and jit.sot_translator.fallbacks == []
    np.testing.assert_array_equal(loop_over_batch(paddle.ones([3, 2])).numpy(), np.full((3, 2), 5.0, "float32"))


def test_explain_names_the_dim_kept_static_with_its_line_and_source(capsys):
    for fn, read, needed in READS:
        jit = run_batches(fn, capsys)
        explanation = explain_batch(jit, fn, capsys)
        want = expected(fn, read, needed)
        assert explanation.kept_static == [want]
        line = f"  x dim 0 kept static: {READ_AS_INT} at {__file__}:{want.line} `{want.source}`"
        assert any(text.startswith(line) for text in str(explanation).splitlines()), str(explanation)


def test_the_line_that_needed_the_value_is_named_when_it_is_another():
    """`n = x.shape[0]` then `if n > 4`: the read and the condition; the read in a callee is named there."""
    want = expected(branch_on_batch, "n = x.shape[0]", "if n > 4:")
    assert (want.needed_line, want.needed_source) == (want.line + 1, "if n > 4:")
    jit = jit_of(branch_on_a_callees_batch)
    for n in (2, 3, 5):
        x = rand(n, 4)
        assert_same_result(jit(x), branch_on_a_callees_batch(x))
    read, needed = line_of(batch_of, "return t.shape[0]"), line_of(branch_on_a_callees_batch, "if n > 4:")
    assert jit.sot_translator.shapes.kept_static() == [KeptStatic("x dim 0", READ_AS_INT, __file__, *read,
                                                                  __file__, *needed)]
    assert f", its value needed at {__file__}:{needed[0]} `if n > 4:`" in \
        jit.sot_translator.shapes.kept_static()[0].text()


def test_the_report_saves_the_dims_kept_static_and_shows_them(capsys, tmp_path):
    for fn, read, needed in READS:
        jit = run_batches(fn, capsys, (2, 3, 5))
        report = report_of(jit)
        want = expected(fn, read, needed)
        (data,) = report.to_dict()["functions"]
        assert data["kept_static"] == [{"dim": "x dim 0", "why": READ_AS_INT, "file": __file__, "line": want.line,
                                        "source": want.source, "needed_file": want.needed_file,
                                        "needed_line": want.needed_line, "needed_source": want.needed_source}]
        path = report.save(tmp_path / f"{fn.__name__}.json")
        assert load(path) == report and json.loads(path.read_text())["functions"][0]["kept_static"]
        text = formats.render(report, "text")
        assert f"x dim 0 kept static: {READ_AS_INT} at " in text and f":{want.line} `{want.source}`" in text
        markdown = formats.render(report, "markdown")
        assert "## Dims kept static" in markdown
        assert f"| x dim 0 | {READ_AS_INT} | `test_sot_static_dims_reported.py:{want.line}` | `{want.source}` |" \
            in markdown
        assert main(["cache", "why", fn.__name__, str(path)]) == 0
        why = capsys.readouterr().out
        assert f"x dim 0 kept static: {READ_AS_INT} at " in why and f":{want.line} `{want.source}`" in why


def test_a_report_without_the_key_still_loads(capsys, tmp_path):
    """Reports written before the key existed load with no dim kept static."""
    report = report_of(run_batches(print_batch, capsys, (2, 3, 5)))
    data = report.to_dict()
    del data["functions"][0]["kept_static"]
    path = tmp_path / "old.json"
    path.write_text(json.dumps(data))
    assert load(path).functions[0].kept_static == []


def test_the_name_the_code_uses_names_the_dim():
    jit = jit_of(scale_by_named_batch)
    for n in (2, 3, 5):
        x = rand(n, 4)
        assert_same_result(jit(x), scale_by_named_batch(x))
    (kept,) = jit.sot_translator.shapes.kept_static()
    assert (kept.dim, kept.why, kept.source) == ("batch dim 0", READ_AS_INT,
                                                 "return batch * int(batch.shape[0])")


def test_a_batch_used_only_as_a_shape_is_not_reported(capsys):
    jit = run_batches(flatten_by_batch, capsys)
    explanation = explain_batch(jit, flatten_by_batch, capsys)
    assert jit.sot_translator.translations == 2 and jit.sot_translator.shapes.dynamic == {("f_locals['x']", 2): {0}}
    assert explanation.kept_static == [] and "kept static" not in str(explanation)
    report = report_of(jit)
    assert report.functions[0].kept_static == [] and report.to_dict()["functions"][0]["kept_static"] == []
    assert "kept static" not in formats.render(report, "text") + formats.render(report, "markdown")


def test_a_dim_marked_static_is_reported_as_marked():
    jit = jit_of(double)
    for n in (2, 3, 5):
        x = rand(n, 4)
        sot.mark_static(x, 0)
        assert_same_result(jit(x), double(x))
    assert jit.sot_translator.translations == 3
    mark = line_of(test_a_dim_marked_static_is_reported_as_marked, "sot.mark_static(x, 0)")
    want = KeptStatic("x dim 0", "marked static by sot.mark_static", __file__, *mark)
    assert jit.sot_translator.shapes.kept_static() == [want]
    assert report_of(jit).functions[0].kept_static == [want]
    x = rand(6, 4)
    explanation = sot.explain(jit, x)  # not marked: the miss makes the dim dynamic, nothing is kept static
    assert_same_result(explanation.result, double(x))
    assert explanation.kept_static == [] and jit.sot_translator.shapes.dynamic == {("f_locals['x']", 2): {0}}


def test_a_dim_a_gradient_rule_needs_is_reported_with_that_reason():
    jit = jit_of(stacked_loss)
    for n in (2, 3, 5):
        x_np, w_np = rand(n, 4).numpy(), rand(4).numpy()
        grads = []
        for run in (jit, stacked_loss):
            x, w = paddle.to_tensor(x_np, stop_gradient=False), paddle.to_tensor(w_np, stop_gradient=False)
            loss = run(x, w)
            loss.backward()
            grads.append((loss.numpy(), x.grad.numpy(), w.grad.numpy()))
        for got, want in zip(*grads):
            np.testing.assert_array_equal(got, want)
    (kept,) = jit.sot_translator.shapes.kept_static()
    assert kept.dim == "x dim 0" and kept.why.startswith("the gradient cannot be built for dynamic dims")
    assert (kept.file, kept.source) == (__file__, "return paddle.concat([x, x * w]).sum()")


def test_reset_forgets_the_dims_kept_static(capsys):
    jit = run_batches(print_batch, capsys, (2, 3, 5))
    assert [k.dim for k in jit.sot_translator.shapes.kept_static()] == ["x dim 0"]
    jit.sot_translator.reset()
    assert jit.sot_translator.shapes.kept_static() == []
    x = rand(2, 4)
    want = print_batch(x)
    printed = capsys.readouterr().out
    assert_same_result(jit(x), want)
    assert capsys.readouterr().out == printed and jit.sot_translator.shapes.kept_static() == []


SCRIPT = textwrap.dedent('''\
    import numpy as np

    import runtime as paddle


    def print_batch(x):
        print(x.shape[0])
        return x * 2


    for n in (2, 3, 5):
        print_batch(paddle.to_tensor(np.ones((n, 4), "float32")))
''')


def test_the_sot_explain_command_names_the_dim_kept_static(tmp_path):
    script = tmp_path / "batches.py"
    script.write_text(SCRIPT)
    plain = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    done = subprocess.run([sys.executable, "-m", "sot.tools.cli", "explain", f"{script}:print_batch"],
                          capture_output=True, text=True, timeout=120)
    assert plain.returncode == 0 and done.returncode == 0, done.stderr
    assert done.stdout.startswith(plain.stdout)  # the script's own output, as it runs without the JIT
    assert f"  x dim 0 kept static: {READ_AS_INT} at {script}:7 `print(x.shape[0])`" in done.stdout.splitlines()
