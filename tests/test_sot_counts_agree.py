"""`sot.explain` and `sot.report()` count the same graphs, breaks and fallbacks for one call.

Each case runs in a fresh process (caches and the translator registry start empty), calls its
function once under `sot.explain`, and compares the explanation's counts with those of the report's
functions for that name (the function, its resume functions and callees translated on their own, as
`sot explain SCRIPT:FUNCTION` shows them). The result is also checked against the eager call.
"""
import json
import re
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent('''\
    import json, sys

    import numpy as np

    import runtime as paddle
    import runtime.nn as nn
    import sot
    from sot.tools import formats
    from sot.tools.report import report


    def one_break(x):
        y = paddle.tanh(x) * 2
        n = y.numpy().sum()  # breaks: the value is needed in Python
        return y + float(n)


    class Inner(nn.Layer):
        def forward(self, x):
            y = x * 2
            return y + float(y.numpy().sum())  # breaks inside the sublayer call


    class Outer(nn.Layer):
        def __init__(self):
            super().__init__()
            self.inner = Inner()
            self.lin = nn.Linear(3, 3)

        def forward(self, x):
            h = paddle.tanh(self.lin(x))
            return self.inner(h) * 3


    def loop(x):
        for _ in range(3):
            x = x * 2
            x.numpy()  # breaks on every iteration
        return x + 1


    def scaled(x, n):
        return x * n  # n is guarded: each new value needs a translation


    # to_static held here: the report registers translators weakly, and explain's own wrapper of a plain
    # function is dropped when it returns
    CASES = {"one_break": (sot.to_static(one_break), "one_break"), "layer": (Outer(), "Outer.forward"),
             "loop": (sot.to_static(loop), "loop"),
             "past_limit": (sot.to_static(scaled, cache_size_limit=1), "scaled")}
    fn, name = CASES[sys.argv[1]]
    x = paddle.to_tensor(np.arange(6, dtype="float32").reshape(2, 3) / 10)
    args = (x, 5) if name == "scaled" else (x,)
    if name == "scaled":  # two values fill the one-entry cache: the call explained runs eagerly (SOT-L001)
        fn(x, 1), fn(x, 2)
    want = getattr(fn, "forward", getattr(fn, "__wrapped__", fn))(*args).numpy()
    e = sot.explain(fn, *args)
    functions = report().function(name)
    print(json.dumps({
        "same_result": bool(np.allclose(e.result.numpy(), want)),
        "explain": [e.graph_count, e.break_count, len(e.fallbacks)],
        "report": [sum(f.graph_count for f in functions), sum(len(f.breaks) for f in functions),
                   sum(len(f.fallbacks) for f in functions)],
        "text": formats.render(report(), "text")}))
''')


@pytest.mark.parametrize("case, least_breaks", [("one_break", 1), ("layer", 1), ("loop", 3)])
def test_explain_and_report_count_the_same(tmp_path, case, least_breaks):
    script = tmp_path / "counts.py"
    script.write_text(SCRIPT)
    done = subprocess.run([sys.executable, str(script), case], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["same_result"]
    assert got["explain"] == got["report"]
    per_function = [int(m) for m in re.findall(r"^ +(\d+) graph\(s\)", got["text"], re.M)]
    assert f"{sum(per_function)} graph(s)" in got["text"].splitlines()[0]  # `sot report`: lines add up to the total
    assert got["explain"][0] >= 1 and got["explain"][1] >= least_breaks  # the case does compile and break


def test_a_call_past_the_cache_limit_is_one_fallback_in_both(tmp_path):
    script = tmp_path / "counts.py"
    script.write_text(SCRIPT)
    done = subprocess.run([sys.executable, "-W", "ignore", str(script), "past_limit"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["same_result"]
    # breaks and fallbacks; graphs differ by scope: the report keeps the graph of the first call
    assert got["explain"][1:] == got["report"][1:] == [0, 1]
