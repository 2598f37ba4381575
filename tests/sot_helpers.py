"""Helpers shared by the to_static tests: fresh code objects, JIT-vs-eager comparison.

Caches are per code object, so each test translates a copy of its function (`fresh`) and
starts from an empty cache. `captured` is the common assertion: eager and JIT agree, and the
frame was translated (no fallback recorded)."""
import dis
import re
import sys
import types

import numpy as np

import runtime as paddle
import sot


def rand(*shape, grad=False):
    """A float32 tensor of uniform values; grad=True makes it record gradients."""
    return paddle.to_tensor(np.random.rand(*shape).astype("float32"), stop_gradient=not grad)


def fresh(fn):
    """A copy of `fn` with its own code object, so its code cache starts empty."""
    return types.FunctionType(fn.__code__.replace(), fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)


def jit_of(fn, **options):
    """to_static of a fresh copy of `fn`."""
    return sot.to_static(fresh(fn), **options)


def assert_same_result(jit, eager):
    """Same types, same structure; tensors equal in dtype, shape and values (exactly)."""
    assert type(jit) is type(eager)
    if isinstance(eager, (tuple, list)):
        assert len(jit) == len(eager)
        for j, e in zip(jit, eager):
            assert_same_result(j, e)
    elif isinstance(eager, dict):
        assert list(jit) == list(eager)
        for k in eager:
            assert_same_result(jit[k], eager[k])
    elif isinstance(eager, (set, frozenset)):
        assert list(jit) == list(eager)  # the same items, iterated in the same order
    elif isinstance(eager, paddle.Tensor):
        assert jit.dtype == eager.dtype and jit.shape == eager.shape
        np.testing.assert_array_equal(jit.numpy(), eager.numpy())
    else:
        assert jit == eager


def tensors_of(result):
    """The tensors among a result (itself, or the items of a tuple/list)."""
    return [r for r in (result if isinstance(result, (tuple, list)) else (result,)) if isinstance(r, paddle.Tensor)]


def run_with_grads(fn, inputs, *args):
    """fn(*inputs, *args), then backward of the sum of its tensor outputs that require grad: the result,
    each input's gradient and the grad mode after the call (gradients are cleared afterwards)."""
    result = fn(*inputs, *args)
    mode_after = paddle.is_grad_enabled()
    live = [t for t in tensors_of(result) if not t.stop_gradient]
    if live:
        sum(t.sum() for t in live).backward()
    grads = [None if t.grad is None else t.grad.numpy().copy() for t in inputs]
    for t in inputs:
        t.clear_gradient()
    return result, grads, mode_after


def assert_like_eager_with_grads(got, want, got_grads, want_grads, got_mode, want_mode):
    """What `run_with_grads` gave for the JIT equals what it gave for eager: result, stop_gradient
    flags, each input's gradient and the grad mode after the call."""
    assert_same_result(got, want)
    assert [t.stop_gradient for t in tensors_of(got)] == [t.stop_gradient for t in tensors_of(want)]
    for g, w in zip(got_grads, want_grads):
        assert (g is None) == (w is None)
        if w is not None:
            np.testing.assert_allclose(g, w, rtol=1e-6)
    assert got_mode == want_mode


def frames_of(fn, *args):
    """fn(*args) and the (file, name) of every Python frame it ran (sys.setprofile's 'call' events)."""
    ran = []

    def profile(frame, event, arg):
        if event == "call":
            ran.append((frame.f_code.co_filename, frame.f_code.co_name))

    sys.setprofile(profile)
    try:
        result = fn(*args)
    finally:
        sys.setprofile(None)
    return result, ran


def captured(fn, *args, **kwargs):
    """Runs fn eagerly and under to_static, checks both agree and that the frame was translated."""
    jit = jit_of(fn)
    assert_same_result(jit(*args, **kwargs), fn(*args, **kwargs))
    assert jit.sot_translator.fallbacks == [] and jit.sot_translator.translations == 1
    return jit


def explained_like_eager(fn, make_args):
    """fn on arguments from `make_args()` eagerly, and on another set under `sot.explain` (a fresh copy):
    the same result, the arguments left alike (containers mutated as eager mutates them), and the frame
    captured (a graph ran, nothing ran eagerly). The Explanation, to check the breaks."""
    eager_args, jit_args = make_args(), make_args()
    want = fn(*eager_args)
    report = sot.explain(fresh(fn), *jit_args)
    assert_same_result(report.result, want)
    assert_same_result(list(jit_args), list(eager_args))
    assert report.fallbacks == [] and report.graph_count >= 1, str(report)
    return report


def translators(jit):
    """The translator of a to_static function and, depth first, those its graph breaks made."""
    out, stack = [], [jit.sot_translator]
    while stack:
        t = stack.pop()
        if all(t is not seen for seen in out):
            out.append(t)
            stack.extend(reversed(t.children))
    return out


def events(jit):
    """Every break and fallback recorded for `jit` and its resume functions: (code, reason, where)."""
    found = []
    for t in translators(jit):
        found += [(e.code, e.detail, e.where) for e in t.breaks]
        found += [(f.code, f.reason, f.where) for f in t.fallbacks]
    return found


# what only the simulator knows: Variable reprs, SIR symbols, static var names, static-graph advice, opcodes
INTERNAL_NAMES = re.compile(r"\w*Variable\(|\bvar_\d+|\w+\.tmp_\d+|Executor\.run|fetch_list|\bf_locals\b|__sot_|"
                            r"\b(?:%s)\b" % "|".join(sorted(dis.opmap, key=len, reverse=True)))


def assert_user_terms(detail):
    """A break or fallback detail names nothing of the simulator (see INTERNAL_NAMES)."""
    found = INTERNAL_NAMES.search(detail)
    assert found is None, f"{found.group()!r} in {detail!r}"
