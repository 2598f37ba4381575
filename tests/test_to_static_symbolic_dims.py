"""Sizes read from `x.shape` stay symbolic while they only flow into shape arguments.

A dynamic dim read with `x.shape[i]` (of an input or of a tensor computed in the frame) and passed,
alone or after `+`/`*`, to reshape/view/expand/broadcast_to/tile/split/zeros/ones/full keeps the translation
dynamic: batches of sizes 2..6 translate at most twice (the first call specialised, the second
dynamic). Where Python needs the value (a condition, `range`, a print, an index into a list), the
dim is specialised again: one translation per size, each result eager's.
"""
import copy

import numpy as np
import pytest

import runtime as paddle
import runtime.nn.functional as F
import sot
from runtime import nn
from sot_helpers import assert_same_result, fresh, jit_of, rand

BATCHES = (2, 3, 4, 5, 6)


class TinyViT(nn.Layer):
    """Patch embedding, a class token expanded to the batch, multi-head attention with the batch
    read from x.shape, the class token's output through a head (dropout: train and eval differ)."""

    def __init__(self, c=8, heads=2, patch=2):
        super().__init__()
        self.heads = heads
        self.patch_embed = nn.Conv2D(3, c, patch, stride=patch)
        self.cls_token = self.create_parameter([1, 1, c])
        self.qkv = nn.Linear(c, 3 * c)
        self.proj = nn.Linear(c, c)
        self.drop = nn.Dropout(0.0)
        self.head = nn.Linear(c, 4)

    def forward(self, x):
        x = self.patch_embed(x)
        x = x.flatten(2).transpose([0, 2, 1])
        B = x.shape[0]
        N, C = x.shape[1] + 1, x.shape[2]
        cls = self.cls_token.expand([B, -1, -1])
        x = paddle.concat([cls, x], axis=1)
        qkv = self.qkv(x).reshape([B, N, 3, self.heads, C // self.heads]).transpose([2, 0, 3, 1, 4])
        q, k, v = qkv[0], qkv[1], qkv[2]
        attn = F.softmax(q @ k.transpose([0, 1, 3, 2]) * (C // self.heads) ** -0.5, axis=-1)
        x = (attn @ v).transpose([0, 2, 1, 3]).reshape([B, N, C])
        x = self.drop(self.proj(x))
        return self.head(x[:, 0])


def vit_pair():
    """A TinyViT translated in place and an eager copy with the same parameters (a forward with a code
    object of its own: caches are per code object)."""
    paddle.seed(0)
    model = type("TinyViT", (TinyViT,), {"forward": fresh(TinyViT.forward)})()
    eager = copy.deepcopy(model)
    return sot.to_static(model), eager


def images(n):
    return rand(n, 3, 4, 4)


def test_vit_like_layer_translates_twice_for_five_batch_sizes():
    jit, eager = vit_pair()
    jit.eval()
    eager.eval()
    for n in BATCHES:
        x = images(n)
        assert_same_result(jit(x), eager(x))
    translator = jit.forward.sot_translator
    assert translator.translations == 2 and translator.fallbacks == []
    assert translator.shapes.static == {}
    assert translator.shapes.dynamic == {("f_locals['x']", 4): {0}}


def test_vit_like_layer_train_and_eval_each_translate_once_after_the_batch_became_dynamic():
    jit, eager = vit_pair()
    for mode in ("train", "eval", "train"):
        for layer in (jit, eager):
            getattr(layer, mode)()
        for n in BATCHES:
            x = images(n)
            assert_same_result(jit(x), eager(x))
    # train: specialised then dynamic; eval: once, dims already dynamic; train again: cached
    assert jit.forward.sot_translator.translations == 3


def test_gradients_through_the_vit_like_layer_equal_eagers():
    jit, eager = vit_pair()
    for n in BATCHES:
        x_np = images(n).numpy()
        grads = []
        for layer in (jit, eager):
            x = paddle.to_tensor(x_np, stop_gradient=False)
            out = layer(x)
            (out * out).sum().backward()
            grads.append([x.grad.numpy()] + [p.grad.numpy() for p in layer.parameters()])
            layer.clear_gradients()
        for got, want in zip(*grads):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert jit.forward.sot_translator.translations == 2


def flatten_by_batch(x):
    return paddle.reshape(x, [x.shape[0], -1]) * 2.0


def expand_token(x, token):
    B = x.shape[0]
    return paddle.concat([token.expand([B, -1, -1]), x], axis=1)


def zeros_of_batch(x):
    return paddle.concat([x, paddle.zeros([x.shape[0], 3])], axis=1) + paddle.ones([x.shape[0], 1])


def product_into_reshape(x):
    B, N, C = x.shape
    return x.reshape([B * N, C]).sum(axis=1) + paddle.full([1, B * N], 0.5)


def reshape_computed(x, w):
    h = x @ w
    return h.reshape([h.shape[0], h.shape[1], 2, -1])


def view_and_broadcast(x):
    B = x.shape[0]
    return x.view([B, 2, -1]) + paddle.broadcast_to(x[:, :1].unsqueeze(-1), [B, 2, 3])


def tile_token(x, token):
    return paddle.concat([token.tile([x.shape[0], 1, 1]), x], axis=1)


def split_by_batch(x):
    square, rest = paddle.split(x, [x.shape[0], -1], axis=1)
    return square.sum(axis=1), rest * 2.0


CASES = [(flatten_by_batch, lambda n: (rand(n, 2, 3),)),
         (expand_token, lambda n: (rand(n, 3, 4), rand(1, 1, 4))),
         (zeros_of_batch, lambda n: (rand(n, 2),)),
         (product_into_reshape, lambda n: (rand(n, 3, 4),)),
         (reshape_computed, lambda n: (rand(n, 3, 4), rand(4, 6))),
         (view_and_broadcast, lambda n: (rand(n, 6),)),
         (tile_token, lambda n: (rand(n, 3, 4), rand(1, 1, 4))),
         (split_by_batch, lambda n: (rand(n, 8),))]


@pytest.mark.parametrize("fn, make", CASES, ids=[fn.__name__ for fn, _ in CASES])
def test_a_size_read_from_shape_into_a_shape_argument_stays_dynamic(fn, make):
    jit = jit_of(fn)
    for n in BATCHES:
        args = make(n)
        assert_same_result(jit(*args), fn(*args))
    translator = jit.sot_translator
    assert translator.translations == 2 and translator.fallbacks == []
    assert translator.shapes.static == {}


def test_flatten_by_batch_matches_numpy():
    x = rand(3, 2, 3)
    np.testing.assert_allclose(flatten_by_batch(x).numpy(), x.numpy().reshape(3, -1) * 2.0)


def tile_split_loss(x, w):
    B = x.shape[0]
    tiled = (x * w).tile([1, B])  # [B, 4 * B]
    head, rest = paddle.split(tiled, [B, -1], axis=1)
    return (head * head).sum() + rest.reshape([B * 3, -1]).sum()


@pytest.mark.parametrize("fn, x_shape", [(reshape_computed, (3, 4)), (tile_split_loss, (4,))],
                         ids=["reshape", "tile_split"])
def test_gradients_through_dynamic_sizes_equal_eagers(fn, x_shape):
    jit = jit_of(fn)
    w_np = rand(4, 6).numpy() if fn is reshape_computed else rand(4).numpy()
    for n in BATCHES:
        x_np = rand(n, *x_shape).numpy()
        grads = []
        for run in (jit, fn):
            x, w = paddle.to_tensor(x_np, stop_gradient=False), paddle.to_tensor(w_np, stop_gradient=False)
            out = run(x, w)
            (out * out).sum().backward()
            grads.append((out.numpy(), x.grad.numpy(), w.grad.numpy()))
        for got, want in zip(*grads):
            np.testing.assert_allclose(got, want, rtol=1e-5)
    assert jit.sot_translator.translations == 2 and jit.sot_translator.shapes.static == {}


def branch_on_batch(x):
    if x.shape[0] > 3:
        return x * 2.0
    return x - 1.0


def loop_over_batch(x):
    total = x[0] * 0.0
    for i in range(x.shape[0]):
        total = total + x[i] * float(i)
    return total


def print_batch(x):
    print("batch", x.shape[0])
    return x + 1.0


SCALES = [1.0, 10.0]


def index_a_list(x):
    return x * SCALES[x.shape[0] % 2]


def scale_by_batch(x):
    return x * x.shape[0]


def halve_batch(x):
    return x.reshape([x.shape[0] // 2, -1])


SPECIALISED = [branch_on_batch, loop_over_batch, print_batch, index_a_list, scale_by_batch, halve_batch]


@pytest.mark.parametrize("fn", SPECIALISED, ids=[fn.__name__ for fn in SPECIALISED])
def test_python_needing_the_size_specialises_it(fn, capsys):
    jit = jit_of(fn)
    sizes = (2, 3, 4, 6)
    for n in sizes:
        x = rand(n, 4)
        want = fn(x)
        eager_out = capsys.readouterr().out
        assert_same_result(jit(x), want)
        assert capsys.readouterr().out == eager_out
    translator = jit.sot_translator
    assert translator.translations == len(sizes) and translator.fallbacks == []  # one per size
    (why,) = translator.shapes.static[("f_locals['x']", 2)].values()
    assert "`.shape` read at" in why and "its value needed at translation time" in why
    assert "f_locals['x'] dim 0 (rank 2): static, `.shape` read" in translator.shapes.describe()


def test_branch_on_batch_matches_numpy():
    x = rand(4, 2)
    np.testing.assert_allclose(branch_on_batch(x).numpy(), x.numpy() * 2.0)


def test_returning_a_size_specialises_it():
    def reshape_and_return_batch(x):
        B = x.shape[0]
        return x.reshape([B, -1]), B

    jit = jit_of(reshape_and_return_batch)
    for n in (2, 3, 4):
        x = rand(n, 2, 2)
        assert_same_result(jit(x), reshape_and_return_batch(x))
    assert jit.sot_translator.translations == 3
    assert ("f_locals['x']", 3) in jit.sot_translator.shapes.static


def test_explain_shows_the_size_computed_by_the_graph():
    jit = jit_of(flatten_by_batch)
    jit(rand(2, 2, 3))
    report = sot.explain(jit, rand(3, 2, 3))
    assert report.translations == 1 and report.fallbacks == []
    (text,) = report.sir_texts
    assert "runtime.shape(" in text and "__getitem__(0)" in text and "# int32[]" in text
    assert "float32[-1, 6]" in text  # the -1 inferred: B cancels out of [B, 2, 3] and [B, -1]


# ----- a shape tensor read as numbers (PaddleSeg's `F.interpolate(x, paddle.shape(y)[2:])`)

def upsample_to(x, short_cut):
    x = F.interpolate(x, paddle.shape(short_cut)[2:], mode="bilinear", align_corners=False)
    return paddle.concat([x, short_cut], axis=1)


def test_a_shape_tensor_of_static_dims_is_known_while_translating():
    x, short_cut = rand(1, 2, 4, 4), rand(1, 2, 8, 6)
    report = sot.explain(fresh(upsample_to), x, short_cut)
    assert_same_result(report.result, upsample_to(x, short_cut))
    assert (report.graph_count, report.break_count, report.fallbacks) == (1, 0, []), str(report)


def test_a_shape_tensor_of_dynamic_dims_is_read_when_the_graph_runs():
    jit = jit_of(upsample_to)
    for size in (6, 7, 9):  # the second miss makes the short_cut's dims dynamic: their values are unknown
        x, short_cut = rand(1, 2, 4, 4), rand(1, 2, 8, size)
        assert_same_result(jit(x, short_cut), upsample_to(x, short_cut))
    assert jit.sot_translator.breaks == [] and jit.sot_translator.fallbacks == []
    assert jit.sot_translator.translations == 2  # the second one with dynamic dims served the third size
