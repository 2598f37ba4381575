"""Objects of plain Python classes constructed inside a compiled function.

`Box(x)` is simulated: its `__init__` is inlined, its attributes live in the simulation, and where
the object escapes (returned, stored into an outside object or a global, live at a graph break) the
generated code makes it again after the graph, one object however many places hold it. Every test
compares the compiled call against the same function run eagerly; the classes that cannot be made
this way still give eager's result, made for real at a graph break.
"""
import collections
import dataclasses

import numpy as np
import pytest

import runtime as paddle
import runtime.distribution as D
import sot
from sot_helpers import assert_same_result, jit_of, translators


def _x(sign=1.0, grad=False):
    return paddle.to_tensor(np.array([[1.0, -2.0], [4.0, 0.5]], "float32") * sign, stop_gradient=not grad)


def assert_same_object(got, want, seen=None):
    """Same class, same attributes in the same order, each equal (objects compared the same way)."""
    seen = set() if seen is None else seen
    if id(want) in seen:
        return
    seen.add(id(want))
    assert type(got) is type(want)
    assert list(vars(got)) == list(vars(want))
    for name, value in vars(want).items():
        if hasattr(value, "__dict__") and not isinstance(value, paddle.Tensor):
            assert_same_object(getattr(got, name), value, seen)
        else:
            assert_same_result(getattr(got, name), value)


def _captured(fn, *args, graphs=1, breaks=()):
    """The compiled call and its explanation: no fallback, `graphs` graphs and the `breaks` codes."""
    jit = jit_of(fn)
    report = sot.explain(jit, *args)
    assert all(t.fallbacks == [] for t in translators(jit))
    assert [b.code for b in report.breaks] == list(breaks)
    assert report.graph_count == graphs
    return jit, report.result


class Box:
    scale = 2.0

    def __init__(self, x, shift=1.0):
        self.x = x
        self.shift = shift

    def value(self):
        return self.x * self.scale + self.shift


class Scaled(Box):
    def __init__(self, x):
        super().__init__(x, shift=0.5)
        self.extra = x.sum()

    def value(self):
        return super().value() + self.extra


@dataclasses.dataclass
class Output:
    logits: object
    loss: object = None
    notes: list = dataclasses.field(default_factory=list)

    def __post_init__(self):
        self.notes.append("made")


class Celsius:
    def __init__(self, t):
        self.kelvin = t + 273.0

    @property
    def celsius(self):
        return self.kelvin - 273.0

    @celsius.setter
    def celsius(self, value):
        self.kelvin = value + 273.0


def uses_a_box(x):
    return Box(x + 1).value() * 2


def uses_a_subclass(x):
    return Scaled(x).value()


def test_an_object_used_inside_the_function_is_one_graph():
    for fn in (uses_a_box, uses_a_subclass):
        x = _x()
        jit, got = _captured(fn, x)
        assert_same_result(got, fn(x))
        assert_same_result(jit(_x(-1.0)), fn(_x(-1.0)))


def returns_objects(x):
    box = Box(x * 2)
    return box, box, Output(x.sum(), loss=x.mean())


def test_returned_objects_are_made_once_with_eagers_attributes():
    x = _x()
    jit, got = _captured(returns_objects, x)
    want = returns_objects(x)
    for g, w in zip(got, want):
        assert_same_object(g, w)
    assert got[0] is got[1] and got[0] is not got[2]
    again = jit(x)  # a cache hit makes new objects, as every eager call does
    assert again[0] is not got[0]
    assert_same_object(again[2], want[2])


class Node:
    def __init__(self, value):
        self.value = value
        self.next = None


def linked(x):
    a, b = Node(x), Node(x + 1)
    a.next, b.next = b, a
    return a


def test_objects_that_hold_each_other_are_made():
    x = _x()
    _, got = _captured(linked, x)
    want = linked(x)
    assert_same_object(got, want)
    assert got.next.next is got


class Holder:
    pass


def stores_an_object(x, holder):
    box = Box(x * 3)
    holder.box = box
    box.later = x + 1  # written after it was stored: the caller sees it, as eagerly
    return box


def stores_into_a_global(x):
    global LAST
    LAST = Box(x - 1)
    return x


def test_an_object_stored_outside_is_the_returned_one():
    x = _x()
    want_holder, got_holder = Holder(), Holder()
    want = stores_an_object(x, want_holder)
    _, got = _captured(stores_an_object, x, got_holder)
    assert_same_object(got, want)
    assert got_holder.box is got
    assert_same_object(got_holder, want_holder)


def test_an_object_stored_into_a_global():
    global LAST
    stores_into_a_global(_x())
    want = LAST
    _captured(stores_into_a_global, _x())
    assert_same_object(LAST, want)
    assert LAST is not want  # made anew by the compiled call, as every eager call makes one


def breaks_with_an_object(x):
    box = Box(x * 2)
    if box.x.sum() > 0:  # a data-dependent branch: the box is live at the break
        box.tag = "positive"
        box.x = box.x + 1
    else:
        box.tag = "other"
    return box, box.value()


def test_an_object_live_at_a_graph_break():
    for sign in (1.0, -1.0):
        x = _x(sign)
        want = breaks_with_an_object(x)
        _, got = _captured(breaks_with_an_object, x, graphs=2, breaks=["SOT-B001"])
        assert_same_object(got[0], want[0])
        assert_same_result(got[1], want[1])


def dataclass_output(x):
    out = Output(x * 2)
    out.loss = (out.logits ** 2).mean()
    out.notes.append("loss")
    return out


def test_a_dataclass_with_defaults_and_post_init():
    x = _x()
    _, got = _captured(dataclass_output, x)
    assert_same_object(got, dataclass_output(x))


def property_setter(x):
    c = Celsius(x)
    c.celsius = c.celsius * 2
    return c.kelvin, c


def test_a_property_setter_on_an_object_made_in_the_function():
    x = _x()
    _, got = _captured(property_setter, x)
    want = property_setter(x)
    assert_same_result(got[0], want[0])
    assert_same_object(got[1], want[1])


def test_changing_the_class_between_calls_is_seen():
    x = _x()
    jit = jit_of(uses_a_box)
    assert_same_result(jit(x), uses_a_box(x))
    old_scale, old_value = Box.scale, Box.value
    try:
        Box.scale = 5.0
        assert_same_result(jit(x), uses_a_box(x))
        Box.value = lambda self: self.x - self.shift
        assert_same_result(jit(x), uses_a_box(x))
    finally:
        Box.scale, Box.value = old_scale, old_value
    assert_same_result(jit(x), uses_a_box(x))


def missing_attribute(x):
    box = Box(x)
    try:
        return box.missing
    except AttributeError as e:
        return x + 1, str(e), hasattr(box, "shift"), hasattr(box, "missing"), getattr(box, "other", None)


def test_a_missing_attribute_raises_as_eagerly():
    x = _x()
    _, got = _captured(missing_attribute, x)
    assert_same_result(got, missing_attribute(x))


def identity(x):
    a, b = Box(x), Box(x)
    return a is b, a is a, a is not None, isinstance(a, Box), type(a) is Box


def test_identity_and_type_of_new_objects():
    x = _x()
    _, got = _captured(identity, x, graphs=0)  # no tensor work: the tuple is made without a graph
    assert got == identity(x)


Pair = collections.namedtuple("Pair", "a b")


class Slotted:
    __slots__ = ("x",)

    def __init__(self, x):
        self.x = x


class OwnNew:
    def __new__(cls, x):
        obj = super().__new__(cls)
        obj.made_by_new = True
        return obj

    def __init__(self, x):
        self.x = x


class Listish(list):
    pass


def unsupported_classes(x):
    p, s, o = Listish([x, x + 1]), Slotted(x * 2), OwnNew(x * 3)
    return p[0] + p[1] + s.x + o.x, o.made_by_new


@pytest.mark.parametrize("why", ["derives from a class written in C", "have only __slots__", "defines __new__"])
def test_classes_it_cannot_simulate_are_made_for_real(why):
    x = _x()
    jit = jit_of(unsupported_classes)
    report = sot.explain(jit, x)
    assert_same_result(report.result, unsupported_classes(x))
    assert any(b.code == "SOT-B003" and why in b.detail for b in report.breaks)
    assert all(t.fallbacks == [] for t in translators(jit))


class Checked:
    def __init__(self, x):
        if x.sum() > 0:  # a data-dependent branch inside __init__: the construction runs for real
            self.x = x
        else:
            self.x = -x


def breaks_inside_init(x):
    return Checked(x * 2).x + 1


def test_a_break_inside_init_makes_the_object_for_real():
    for sign in (1.0, -1.0):
        x = _x(sign)
        jit = jit_of(breaks_inside_init)
        report = sot.explain(jit, x)
        assert_same_result(report.result, breaks_inside_init(x))
        assert [b.code for b in report.breaks] == ["SOT-B001"]


def normal_log_prob(loc, value):
    dist = D.Normal(loc, paddle.ones_like(loc) * 2.0)
    return dist.log_prob(value).sum() + dist.entropy().sum()


def test_a_distribution_made_in_the_function_is_captured_with_its_gradient():
    loc, value = _x(grad=True), _x(-0.5)
    want = normal_log_prob(loc, value)
    want.backward()
    want_grad = loc.grad.numpy().copy()
    loc.clear_gradient()
    _, got = _captured(normal_log_prob, loc, value)
    got.backward()
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    np.testing.assert_allclose(loc.grad.numpy(), want_grad, rtol=1e-6)


class Span(collections.namedtuple("Span", "start end")):
    def length(self):
        return self.end - self.start

    @property
    def middle(self):
        return (self.start + self.end) / 2


class Output2(__import__("typing").NamedTuple):
    logits: object
    aux: object = None


def namedtuples(x, given):
    s = Span(x, end=x * 3)
    o = Output2(s.length())
    replaced = s._replace(start=x + 1)
    first, second = given
    return (s, o, replaced, s.middle, o.aux, len(s), s[1], s + (1,), s[:1], s._asdict()["end"],
            given.a * first + second, Pair._make([x, given.b]), type(s) is Span, isinstance(o, tuple))


def test_namedtuples_made_returned_and_given():
    x = _x()
    given = Pair(x + 2, x - 2)
    jit, got = _captured(namedtuples, x, given)
    want = namedtuples(x, given)
    assert_same_result(got, want)  # (types first: a namedtuple comes back a namedtuple of its class)
    assert f"{jit(x, given)[1]._fields}" == "('logits', 'aux')"


def namedtuple_at_a_break(x):
    s = Span(x, x * 2)
    if x.sum() > 0:  # the namedtuple is live at the break: made again there
        s = s._replace(end=s.end + 1)
    return s


def test_a_namedtuple_live_at_a_break():
    for sign in (1.0, -1.0):
        x = _x(sign)
        graphs = 2 if sign > 0 else 1  # (the rest after a false test only returns what it was given)
        _, got = _captured(namedtuple_at_a_break, x, graphs=graphs, breaks=["SOT-B001"])
        assert_same_result(got, namedtuple_at_a_break(x))


def namedtuple_text(x):
    p = Pair(1, "b")
    return x + p.a, f"{p}", str(Pair(2, 3))


def test_a_namedtuple_of_constants_prints_as_one():
    x = _x()
    _, got = _captured(namedtuple_text, x)
    assert_same_result(got, namedtuple_text(x))


def to_tensor_of_objects(x, array):
    return x * paddle.to_tensor(array) + paddle.to_tensor([1.0, 2.0], place=paddle.CPUPlace())


def test_a_runtime_function_given_another_librarys_object_breaks_once_at_the_call():
    """Only a runtime function given an object of its own subpackage (a distribution's helper) is inlined;
    `to_tensor(ndarray)` or a place made in the function break at the call, run for real, as before."""
    x, array = paddle.to_tensor(np.array([3.0, 4.0], "float32")), np.array([1.0, -1.0], "float32")
    jit = jit_of(to_tensor_of_objects)
    report = sot.explain(jit, x, array)
    assert_same_result(report.result, to_tensor_of_objects(x, array))
    assert [b.code for b in report.breaks] == ["SOT-G001", "SOT-G001"]
    assert all(t.fallbacks == [] for t in translators(jit))


def same_object(x, a, b):
    return x + 1 if a is b else x - 1


def test_identity_of_two_objects_passed_in_is_guarded():
    """`a is b` of two objects from outside folds, guarded as `a is b`: the other answer retranslates."""
    x, one, other = _x(), Holder(), Holder()
    jit = jit_of(same_object)
    for a, b in ((one, one), (one, other), (one, one)):
        assert_same_result(jit(x, a, b), same_object(x, a, b))
    assert all(t.fallbacks == [] for t in translators(jit))


@dataclasses.dataclass(frozen=True)
class Frozen:
    scale: float
    bias: object = None


def frozen_config(x):
    cfg = Frozen(2.0, x + 1)
    try:
        cfg.scale = 3.0  # raises FrozenInstanceError: the write runs for real, at a break
    except dataclasses.FrozenInstanceError as e:
        caught = type(e).__name__
    return x * cfg.scale + cfg.bias, cfg, caught


def test_a_frozen_dataclass_is_made_in_the_graph_and_stays_frozen():
    x = _x()
    jit = jit_of(frozen_config)
    report = sot.explain(jit, x)
    want = frozen_config(x)
    assert_same_result(report.result[0], want[0])
    assert_same_object(report.result[1], want[1])
    assert report.result[2] == want[2] == "FrozenInstanceError"
    assert [b.code for b in report.breaks] == ["SOT-B003"]  # the write, not the construction
    with pytest.raises(dataclasses.FrozenInstanceError):
        report.result[1].scale = 1.0


def test_a_class_attribute_read_through_a_new_object_can_become_a_dynamic_number():
    """`self.scale` found on the class of an object made in the function, changed between calls, becomes a
    graph input read through the class (it was read through the object, which generated code cannot load)."""
    x = _x()
    jit = jit_of(uses_a_box, fallback=False)
    old_scale = Box.scale
    try:
        for scale in (2.0, 5.0, 7.0, 9.0):
            Box.scale = scale
            assert_same_result(jit(x), uses_a_box(x))
    finally:
        Box.scale = old_scale
    assert sum(t.translations for t in translators(jit)) == 2  # the first value, then the number as an input
