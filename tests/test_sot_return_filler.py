"""`returns.filler` compiles a return/effect template into one generated function: it must build
exactly what the template walker `returns.fill` builds (same structure, same objects, fresh
containers per call), and the functions that use it must still return eager's structures."""
import numpy as np
import pytest

import runtime as paddle
import sot
from sot.codegen.returns import In, NewSet, Out, Passed, fill, filler



class Row(list):
    """A list subclass: rebuilt by its own type, as `fill` rebuilds it."""

TEMPLATES = [
    Out(0),
    (Out(1), In(0)),
    [Out(0), (Passed(0), "text"), {"k": Out(1), 3: [In(1)]}],
    (),
    [],
    {},
    ("only", 1, None, 2.5),
    NewSet({1, 2}),
    Row([Out(0), Passed(1)]),
]


def _same(a, b) -> bool:
    """Equal structure, with the very same leaf objects (tensors and constants are passed through)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (set, frozenset)):
        return a == b
    return a is b


@pytest.mark.parametrize("node", TEMPLATES, ids=repr)
def test_filler_builds_what_fill_builds(node):
    values, inputs, passed = (object(), object()), (object(), object()), (7, [1])
    assert _same(filler(node)(values, inputs, passed), fill(node, values, inputs, passed))


@pytest.mark.parametrize("node", [[Out(0)], {"k": In(0)}, NewSet({1}), ([Out(0)],)], ids=repr)
def test_filler_makes_fresh_mutable_containers_per_call(node):
    make = filler(node)
    first, second = make((1,), (2,), ()), make((1,), (2,), ())
    assert first == second
    inner = (lambda r: r[0] if isinstance(r, tuple) else r)
    assert inner(first) is not inner(second)


def test_tuple_and_print_returning_function_matches_eager(capsys):
    def f(x):
        y = x + 1
        print("mid", 3)
        return y * 2, [x, {"y": y}], "tag"

    x = paddle.to_tensor(np.arange(4, dtype=np.float32))
    eager = f(x)
    eager_out = capsys.readouterr().out
    jit = sot.to_static(f)
    for _ in range(2):
        got = jit(x)
        assert capsys.readouterr().out == eager_out
        assert np.array_equal(got[0].numpy(), eager[0].numpy())
        assert got[1][0] is x and isinstance(got[1][1], dict)
        assert np.array_equal(got[1][1]["y"].numpy(), eager[1][1]["y"].numpy())
        assert got[2] == "tag"
