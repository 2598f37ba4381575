"""Differential test of objects made in a compiled function: Hypothesis writes random functions that
make objects of a plain class, a dataclass and a namedtuple, set and read their attributes, call their
methods, link them to each other, store them on an object and in a list from outside, and break the
graph on tensor values with objects live; the JIT must give eager's results and leave eager's object
graph behind: the same classes, attributes in the same order, values, and which places hold one object
(on the first call, the translation, and on a cache hit)."""
import collections
import dataclasses

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import runtime as paddle
import sot


class Pt:
    def __init__(self, x, w=1.0):
        self.x = x
        self.w = w

    def step(self):
        return self.x * self.w + 1


@dataclasses.dataclass
class Rec:
    value: object
    tags: list = dataclasses.field(default_factory=list)


Pair = collections.namedtuple("Pair", "a b")


class Holder:
    pass


@st.composite
def programs(draw):
    """Source of `def f(x, box, log)`: tensors v0.., objects o0.. (o0 made first)."""
    lines, n, m = ["o0 = Pt(x * 2)"], 1, 1
    for _ in range(draw(st.integers(2, 8))):
        j, k = draw(st.integers(0, n - 1)), draw(st.integers(0, m - 1))
        c = draw(st.sampled_from([0.5, 2.0, -1.5]))
        kind = draw(st.sampled_from(["make", "rec", "pair", "set", "read", "method", "link", "store", "append",
                                     "if", "tag"]))
        if kind in ("make", "rec", "pair"):
            made = {"make": f"Pt(v{j} + {c}, {c})", "rec": f"Rec(v{j} * {c})", "pair": f"Pair(v{j}, o{k})"}[kind]
            lines.append(f"o{m} = {made}")
            m += 1
            continue
        obj = f"o{k}"
        if kind == "set":
            lines.append(f"if isinstance({obj}, Pt): {obj}.x = v{j} * {c}")
            continue
        if kind == "read":
            lines.append(f"v{n} = ({obj}.x if isinstance({obj}, Pt) else v{j}) + {c}")
        elif kind == "method":
            lines.append(f"v{n} = {obj}.step() if isinstance({obj}, Pt) else v{j} - {c}")
        elif kind == "link":
            lines.append(f"if not isinstance({obj}, Pair): {obj}.other = o{draw(st.integers(0, m - 1))}")
            continue
        elif kind == "store":
            lines.append(f"box.kept = {obj}")
            continue
        elif kind == "append":
            lines.append(f"log.append({obj})")
            continue
        elif kind == "tag":
            lines.append(f"if isinstance({obj}, Rec): {obj}.tags.append(v{j})")
            continue
        else:  # a decision on a tensor's value, with every object made so far live at the break
            lines += [f"if v{j}.sum() > {c}:", f"    v{n} = v{j} * 2",
                      f"    if isinstance({obj}, Pt): {obj}.w = {obj}.w + 1", "else:", f"    v{n} = v{j} - 1"]
        n += 1
    body = "\n    ".join(["v0 = x", *lines, f"return v{n - 1}, o{m - 1}, o0"])
    return f"def f(x, box, log):\n    {body}\n"


def canonical(value, seen):
    """`value` as plain data: an object becomes its class, the order it was first met in and its
    attributes (met again: only its order), so two graphs compare equal when they hold the same values
    in the same places and share objects in the same places."""
    if isinstance(value, paddle.Tensor):
        return ("tensor", value.dtype, tuple(value.shape), tuple(np.round(value.numpy(), 4).ravel().tolist()))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(canonical(v, seen) for v in value))
    if isinstance(value, (Pt, Rec, Holder)):
        if id(value) in seen:
            return ("again", seen[id(value)])
        seen[id(value)] = len(seen)
        return (type(value).__name__, seen[id(value)], tuple((k, canonical(v, seen)) for k, v in vars(value).items()))
    return value


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(source=programs(), seed=st.integers(0, 2**16))
def test_objects_made_in_a_compiled_function_leave_eagers_object_graph(source, seed):
    namespace = {"paddle": paddle, "Pt": Pt, "Rec": Rec, "Pair": Pair}
    exec(compile(source, "<generated>", "exec"), namespace)
    fn = namespace["f"]
    jit = sot.to_static(fn)
    rng = np.random.default_rng(seed)
    for _ in range(2):  # the translation, then the caches' hits (or a branch not seen yet)
        x = paddle.to_tensor(rng.uniform(-1, 1, (3,)).astype("float32"))
        eager_box, jit_box, eager_log, jit_log = Holder(), Holder(), [], []
        with sot.disable():
            want = fn(x, eager_box, eager_log)
        got = jit(x, jit_box, jit_log)
        assert canonical((got, jit_box, jit_log), {}) == canonical((want, eager_box, eager_log), {}), source
    assert jit.sot_translator.fallbacks == [], source
