"""`sot explain SCRIPT:Class.method`, `SCRIPT:obj.method` and `SCRIPT:net` (a Layer object: its forward)
of methods the script does not decorate: translated for the run, explained like `sot.explain` in Python."""
import re
import runpy
import textwrap

import numpy as np
import pytest

import runtime as paddle
import sot
from test_sot_tools import sot_cli

SCRIPT = textwrap.dedent('''\
    import numpy as np

    import runtime as paddle


    class Scaler:
        def __init__(self, k):
            self.k = k

        def apply(self, x):
            y = x * self.k
            if float(y.sum()) > 0:  # a tensor read into Python: a break
                y = y + 1
            return y.tanh()


    class Net(paddle.nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = paddle.nn.Linear(3, 2)

        def forward(self, x):
            return self.fc(x).tanh() * 2


    paddle.seed(0)
    scaler = Scaler(2.0)
    net = Net()


    def inputs():
        return paddle.to_tensor(np.arange(6, dtype="float32").reshape([2, 3]))


    if __name__ == "__main__":
        print("result:", scaler.apply(inputs()).numpy().tolist(), net(inputs()).numpy().tolist())
''')


@pytest.fixture(scope="module")
def script(tmp_path_factory):
    path = tmp_path_factory.mktemp("explain_methods") / "methods.py"
    path.write_text(SCRIPT)
    return path


def _in_process(path, target):
    """The script loaded as a module (not run as __main__), and sot.explain of what `target` names,
    called with the script's input."""
    ns = runpy.run_path(str(path), run_name="explained_in_process")
    if target in ("Scaler.apply", "scaler.apply"):
        return ns, sot.explain(ns["Scaler"].apply, ns["scaler"], ns["inputs"]())
    return ns, sot.explain(ns["net"], ns["inputs"]())


def _header(out):
    found = re.search(r"^explain (\S+): (\d+) graph\(s\), (\d+) break\(s\), (\d+) fallback\(s\)$", out, re.M)
    assert found is not None, out
    return found[1], int(found[2]), int(found[3])


@pytest.mark.parametrize("target", ["Scaler.apply", "scaler.apply", "net", "net.forward", "Net.forward"])
def test_explain_a_method_or_a_layer_counts_as_sot_explain(script, target):
    done = sot_cli("explain", f"{script}:{target}")
    assert done.returncode == 0, done.stderr
    ns, expected = _in_process(script, target)
    assert _header(done.stdout) == (target, expected.graph_count, expected.break_count)
    assert expected.graph_count >= 1 and (expected.break_count == 1) == ("apply" in target)
    qualname = "Scaler.apply" if "apply" in target else "Net.forward"
    assert f"== {qualname}  " in done.stdout
    # the script's result under the CLI is the eager one
    with sot.disable():
        eager = [ns["scaler"].apply(ns["inputs"]()).numpy().tolist(), ns["net"](ns["inputs"]()).numpy().tolist()]
    assert f"result: {eager[0]} {eager[1]}" in done.stdout


@pytest.mark.parametrize("target, words", [("scaler.missing", "no class or object 'scaler' with a method 'missing'"),
                                           ("Nothing.apply", "no class or object 'Nothing' with a method 'apply'")])
def test_a_method_the_script_does_not_have_exits_2_with_one_line(script, target, words):
    done = sot_cli("explain", f"{script}:{target}")
    assert done.returncode == 2
    assert len(done.stderr.splitlines()) == 1 and words in done.stderr


def test_help_names_each_form():
    done = sot_cli("explain", "--help")
    assert done.returncode == 0
    assert all(form in done.stdout for form in ("Model.step", "model.step", "a Layer object"))
