"""`sot explain SCRIPT:FUNCTION` of a function the script does not decorate: translated through a
wrapper bound for the run, explained like `sot.explain(fn, ...)` in Python."""
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
    import sot


    def plain(x):
        y = x * 2
        if float(y.sum()) > 0:  # a tensor read into Python: a break
            y = y + 1
        return y - 3


    @sot.to_static
    def decorated(x):
        return (x + 1) * 2


    def caller(x):
        return plain(x) * decorated(x)


    if __name__ == "__main__":
        x = paddle.to_tensor(np.arange(3, dtype="float32"))
        print("result:", caller(x).numpy().tolist())
''')


@pytest.fixture(scope="module")
def script(tmp_path_factory):
    path = tmp_path_factory.mktemp("explain_plain") / "plain_and_decorated.py"
    path.write_text(SCRIPT)
    return path


def _in_process(path, name):
    """sot.explain of the script's function `name`, called with the argument its __main__ gives it."""
    namespace = runpy.run_path(str(path), run_name="explained_in_process")
    x = paddle.to_tensor(np.arange(3, dtype="float32"))
    return namespace, sot.explain(namespace[name], x)


@pytest.mark.parametrize("name", ["plain", "decorated"])
def test_explain_counts_match_sot_explain_decorated_or_not(script, name):
    done = sot_cli("explain", f"{script}:{name}")
    assert done.returncode == 0, done.stderr
    header = re.search(r"^explain (\w+): (\d+) graph\(s\), (\d+) break\(s\), (\d+) fallback\(s\)$", done.stdout, re.M)
    assert header is not None, done.stdout
    namespace, expected = _in_process(script, name)
    assert (header[1], int(header[2]), int(header[3])) == (name, expected.graph_count, expected.break_count)
    assert int(header[2]) >= 1 and (int(header[3]) == 1) == (name == "plain")
    # the script's result under the CLI is the eager one (the wrapper changed how, not what, it computes)
    x = paddle.to_tensor(np.arange(3, dtype="float32"))
    with sot.disable():
        eager = namespace["caller"](x).numpy().tolist()
    assert f"result: {eager}" in done.stdout


def test_a_function_the_script_does_not_define_exits_2_with_one_line(script):
    done = sot_cli("explain", f"{script}:missing")
    assert done.returncode == 2
    assert done.stderr.splitlines() == [f"sot explain: {script} defines no function 'missing' at its top level"]


def test_help_says_how_the_function_gets_its_arguments():
    done = sot_cli("explain", "--help")
    assert done.returncode == 0
    assert "FUNCTION gets its arguments from SCRIPT itself" in done.stdout and "sys.argv[1:]" in done.stdout
