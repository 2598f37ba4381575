"""`sot report --min-captured-ratio` against runs in which nothing was compiled: each must report 0%
captured and fail the gate, while a fully compiled run reports 100% and passes.

Each case is one script run by `sot run` in a fresh interpreter (the report holds every translator of
its process). The script compares the decorated function's result with the undecorated one's and
exits 1 on a difference, so `sot run`'s exit status 0 also says the JIT's results equal eager.
"""
import os
import re
import subprocess
import sys
import textwrap

import pytest

from sot.tools.cli import main
from sot.tools.report import captured_ratio, load

SCRIPT = textwrap.dedent('''\
    import sys

    import numpy as np

    import runtime as paddle
    import sot


    def affine(x):
        return paddle.tanh(x) * 2 + 1


    def forgets_a_global(x):
        global G_TEMPORARY
        G_TEMPORARY = 1
        del G_TEMPORARY  # a delete the replay cannot make: the whole frame runs eagerly
        return paddle.tanh(x) * 2


    def halves(x):
        yield x * 0.5
        yield paddle.tanh(x)


    def scaled(x, n=3):
        return x * n  # n is a Python int: one translation per value


    def results(fn, x):
        out = fn(x)
        return [t.numpy() for t in (out if isinstance(out, list) else [out])]


    CASES = {"affine": affine, "forgets_a_global": forgets_a_global, "halves": lambda x: list(halves(x))}
    x = paddle.to_tensor(np.linspace(-1, 1, 6, dtype="float32").reshape(2, 3))
    if sys.argv[1] == "scaled":  # past cache_size_limit=1, the calls with n = 2 and 3 run eagerly
        compiled = sot.to_static(scaled, cache_size_limit=1)
        pairs = [(compiled(x, n), scaled(x, n)) for n in (1, 2, 3)]
    else:
        if sys.argv[1] == "halves":
            generator = sot.to_static(halves)
            jit = lambda x: list(generator(x))
        else:
            jit = sot.to_static(CASES[sys.argv[1]])
        pairs = [pair for _ in range(3) for pair in zip(results(jit, x), results(CASES[sys.argv[1]], x), strict=True)]
    for got, want in pairs:
        if not np.allclose(np.asarray(got), np.asarray(want), rtol=1e-6, atol=1e-6):
            sys.exit(1)
''')


def run_case(tmp_path, case, **env):
    """The report of `sot run SCRIPT case` under `env` (its exit status asserted 0: JIT results equal eager)."""
    script = tmp_path / "cases.py"
    script.write_text(SCRIPT)
    out = tmp_path / "report.json"
    done = subprocess.run([sys.executable, "-m", "sot.tools.cli", "run", "--report", str(out), str(script), case],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "SOT_DISABLE": "0", "SOT_MIN_GRAPH_SIZE": "1", **env})
    assert done.returncode == 0, done.stderr
    return out


@pytest.mark.parametrize("case, env", [
    ("affine", {"SOT_DISABLE": "1"}),  # to_static returns the function: nothing is translated
    ("forgets_a_global", {}),          # the frame falls back whole and runs eagerly
    ("halves", {}),                    # a generator runs eagerly (the hook leaves its frames alone)
    ("affine", {"SOT_MIN_GRAPH_SIZE": "100"}),  # its graph is too small to compile: its ops run eagerly
])
def test_a_run_with_nothing_compiled_is_0_percent_and_fails_the_gate(tmp_path, capsys, case, env):
    out = run_case(tmp_path, case, **env)
    totals = load(out).totals
    assert totals["ops_captured"] == 0 and totals["captured_ratio"] == 0.0
    assert main(["report", str(out), "--min-captured-ratio", "0.5"]) == 1
    captured = capsys.readouterr()
    assert "captured 0%" in captured.out and "captured ratio 0.000 < --min-captured-ratio 0.5" in captured.err


def test_a_fully_compiled_run_is_100_percent_and_passes_the_gate(tmp_path, capsys):
    out = run_case(tmp_path, "affine")
    totals = load(out).totals
    assert totals["ops_captured"] > 0 and totals["eager_runs"] == 0 and totals["captured_ratio"] == 1.0
    assert main(["report", str(out), "--min-captured-ratio", "0.5"]) == 0
    assert "captured 100%" in capsys.readouterr().out


def test_calls_past_the_cache_limit_count_as_eager_runs(tmp_path):
    (scaled,) = load(run_case(tmp_path, "scaled")).functions
    assert (scaled.ops_captured, scaled.eager_runs, scaled.cache.eager_runs) == (1, 2, 2)
    assert scaled.captured_ratio == pytest.approx(1 / 3)


def test_the_ratio_counts_frames_run_eagerly_as_not_captured():
    assert captured_ratio(0, 0) == 0.0
    assert captured_ratio(0, 3) == 0.0
    assert captured_ratio(6, 0) == 1.0
    assert captured_ratio(6, 2) == 0.75


@pytest.mark.parametrize("min_graph_size, mark", [("1", "captured"), ("100", "eager")])
def test_the_html_report_marks_a_graph_too_small_to_compile_as_eager(tmp_path, min_graph_size, mark):
    out = run_case(tmp_path, "affine", SOT_MIN_GRAPH_SIZE=min_graph_size)
    folder = tmp_path / "html"
    assert main(["report", str(out), "--format", "html", "-o", str(folder)]) == 0
    page = (folder / "file0.html").read_text()
    line = SCRIPT.splitlines().index("    return paddle.tanh(x) * 2 + 1") + 1
    row = re.search(rf'<tr id="L{line}"[^>]*>', page).group(0)
    assert f'class="{mark}"' in row, row
