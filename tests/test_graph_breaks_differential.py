"""Differential test of graph breaks: Hypothesis writes random functions that mix tensor work with
decisions on tensor values, prints (of values read as Python, which break, and of tensors, which are
deferred to after the graph), writes to a list and an object passed in, calls of a function that
breaks inside, loops that break in every iteration (short ones, and long ones that run for real),
item assignment and breaks inside `no_grad` blocks and `try` bodies; the JIT must give eager's
results, gradients, printed text and side effects, on the first call (translation) and on a hit."""
import contextlib
import io

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import runtime as paddle
import sot
from sot_helpers import assert_same_result


class Box:
    def __init__(self):
        self.n = 0

    def __eq__(self, other):
        return isinstance(other, Box) and other.n == self.n


@st.composite
def programs(draw):
    """Source of `def f(x, log, box)` with 2-7 statements over tensors v0..vk."""
    lines, n = [], 1
    for _ in range(draw(st.integers(2, 7))):
        j = draw(st.integers(0, n - 1))
        c = draw(st.sampled_from([0.5, 1.0, 2.0, -1.5]))
        kind = draw(st.sampled_from(["arith", "tanh", "if", "print", "show", "append", "count", "call", "loop",
                                     "setitem", "no_grad", "try"]))
        if kind == "arith":
            lines.append(f"v{n} = v{j} * {c} + 1")
        elif kind == "tanh":
            lines.append(f"v{n} = paddle.tanh(v{j})")
        elif kind == "if":
            lines += [f"if v{j}.sum() > {c}:", f"    v{n} = v{j} * 2", "else:", f"    v{n} = v{j} - 1"]
        elif kind == "print":
            lines.append(f"print('v{j}', v{j}.numpy().round(4).tolist())")
            continue
        elif kind == "show":
            lines.append(f"print('v{j}', v{j}, sep=':')")
            continue
        elif kind == "call":  # a break inside a called function: resumed inside it
            lines.append(f"v{n} = helper(v{j})")
        elif kind == "loop":  # a break in every iteration; 40 iterations: the loop runs for real
            k = draw(st.sampled_from([3, 40]))
            loop = [f"for i in range({k}):", f"    if v{j}.sum() > {c}:", f"        v{j} = v{j} * 0.5",
                    f"    v{j} = v{j} + i * 0.01"]
            if draw(st.booleans()):  # inside a no_grad block
                loop = ["with paddle.no_grad():", *("    " + line for line in loop)]
            lines += loop
            continue
        elif kind == "setitem":
            lines += [f"v{n} = v{j} * {c}", f"v{n}[0] = {c}"]
        elif kind == "no_grad":  # a break inside the block: resumed in it, in its grad mode
            lines += ["with paddle.no_grad():", f"    v{n} = v{j} * {c}", f"    if v{n}.sum() > {c}:",
                      f"        v{n} = v{n} + 1", f"    v{n} = v{n} * v{j}"]
        elif kind == "try":
            lines += ["try:", f"    v{n} = v{j} - {c}", f"    print('t', v{n}.numpy().round(4).tolist())",
                      "except ValueError:", f"    v{n} = v{j}"]
        elif kind == "append":
            lines.append(f"log.append(v{j} + {c})")
            continue
        else:
            lines.append("box.n = box.n + 1")
            continue
        n += 1
    body = "\n    ".join(["v0 = x", *lines, f"return v{n - 1} * box.n, len(log)"])
    return f"def f(x, log, box):\n    {body}\n"


HELPER = """
def helper(t):
    u = t * 2
    if u.mean() > 0:
        u = u - 1
    return u + 1
"""


def run(fn, x, log, box):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        result = fn(x, log, box)
    return result, out.getvalue()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(source=programs(), seed=st.integers(0, 2**16))
def test_breaks_give_eager_results_prints_and_side_effects(source, seed):
    namespace = {"paddle": paddle}
    exec(compile(HELPER + source, "<generated>", "exec"), namespace)
    fn = namespace["f"]
    jit = sot.to_static(fn)
    rng = np.random.default_rng(seed)
    for _ in range(2):  # the translation, then the caches' hits (or a branch not seen yet)
        values = rng.uniform(-1, 1, (3,)).astype("float32")
        x_eager, x_jit = (paddle.to_tensor(values, stop_gradient=False) for _ in range(2))
        eager_state, jit_state = ([1.0], Box()), ([1.0], Box())
        with sot.disable():
            want, want_out = run(fn, x_eager, *eager_state)
        got, got_out = run(jit, x_jit, *jit_state)
        assert got_out == want_out, source
        assert_same_result(got, want)
        assert got[0].stop_gradient == want[0].stop_gradient, source
        if not want[0].stop_gradient:
            want[0].sum().backward()
            got[0].sum().backward()
            np.testing.assert_allclose(x_jit.grad.numpy(), x_eager.grad.numpy(), rtol=1e-5, atol=1e-6)
        assert_same_result(jit_state[0], eager_state[0])  # the list written, item by item
        assert jit_state[1] == eager_state[1]
    assert jit.sot_translator.translations >= 1 and jit.sot_translator.fallbacks == []  # broken, never given up
