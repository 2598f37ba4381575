"""Sizes known only at run time that cancel: a KV cache's length is dynamic, yet `arange(past,
past + n)`, `k_len - past_len` and a causal mask's `mask[k_len - q_len:]` have static lengths, so
greedy generation translates three times (the prompt, the first cached step, then every step with
the cache's length dynamic) instead of once per token. `arange(seq_len)` has the dynamic length
itself. Sizes pass through the ops a transformer uses (embedding, linear, split, reshape,
transpose, matmul, broadcasts, reductions, indexing), so attention over a dynamic sequence length
translates twice for any number of lengths. Sizes of different origins never cancel: their
difference is read, which specialises them. Every result is eager's, eager's checked against NumPy."""
import contextlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import runtime as paddle
import runtime.nn.functional as F
import sot
import zoo_models as zoo
from sot_helpers import assert_same_result, jit_of


def positions(past, ids):
    start = past.shape[-2]
    return paddle.arange(start, start + ids.shape[-1], dtype="int64") * 2


def causal_rows(past, new):
    k = paddle.concat([past, new], axis=0)
    q_len, k_len = new.shape[0], k.shape[0]
    mask = paddle.tril(paddle.ones([k_len, k_len], dtype="bool"))[k_len - q_len:, :]
    return paddle.where(mask, paddle.ones([q_len, k_len]), paddle.zeros([q_len, k_len])), k_len - past.shape[0]


def unrelated_difference(a, b):
    return a.sum() * (a.shape[0] - b.shape[0])  # two inputs' sizes: nothing says how they differ


def shrunk_shape(x):
    return paddle.zeros([x.shape[0] - 1]) + 1  # a size that is 1 of a size-2 x


def _tensor(shape, seed=0):
    return paddle.to_tensor(np.random.default_rng(seed).standard_normal(shape).astype("float32"))


def _agrees(fn, jit, args, expected):
    """Eager's result is `expected` (NumPy's), and the compiled one is eager's."""
    with sot.disable():
        want = fn(*args)
    np.testing.assert_allclose(want.numpy(), expected, rtol=1e-6)
    assert_same_result(jit(*args), want)


def test_arange_from_a_run_time_size_has_a_static_length():
    jit = jit_of(positions)
    ids = paddle.to_tensor(np.zeros((1, 2), "int64"))
    for n in (3, 4, 5, 6, 7):
        _agrees(positions, jit, (_tensor((1, 2, n, 4)), ids), np.arange(n, n + 2) * 2)
    assert jit.sot_translator.translations == 2  # the first size, then the cache's length dynamic
    assert jit.sot_translator.shapes.kept_static() == []


def test_a_causal_mask_sliced_by_run_time_sizes_keeps_its_static_rows():
    jit = jit_of(causal_rows)
    new = _tensor((2, 3), 1)
    for n in (3, 4, 5, 6):
        past = _tensor((n, 3))
        with sot.disable():
            want = causal_rows(past, new)
        k = n + 2
        np.testing.assert_array_equal(want[0].numpy(), np.tril(np.ones((k, k)))[k - 2:].astype("float32"))
        assert want[1] == 2
        got = jit(past, new)
        assert_same_result(got, want)
    assert jit.sot_translator.translations == 2
    assert jit.sot_translator.shapes.kept_static() == []  # `k_len - past_len` was the int 2, never read


def test_sizes_of_different_inputs_do_not_cancel():
    jit = jit_of(unrelated_difference)
    for n, m in ((3, 2), (4, 2), (5, 3), (6, 6)):
        a, b = _tensor((n,)), _tensor((m,))
        _agrees(unrelated_difference, jit, (a, b), a.numpy().sum() * (n - m))
    assert "f_locals['a'] dim 0 (rank 1): static" in jit.sot_translator.shapes.describe()


def doubled_length(a):
    k = paddle.concat([a, a, paddle.ones([2])])  # twice a's size plus 2: not a's size plus an int
    return k[k.shape[0] - a.shape[0]:] * 2


def test_a_concat_of_two_run_time_sizes_does_not_cancel_against_one():
    jit = jit_of(doubled_length)
    for n in (3, 4, 5, 2):
        a = _tensor((n,))
        _agrees(doubled_length, jit, (a,), np.concatenate([a.numpy(), a.numpy(), np.ones(2, "float32")])[n + 2:] * 2)
    assert "f_locals['a'] dim 0 (rank 1): static" in jit.sot_translator.shapes.describe()


def test_a_size_that_may_be_one_is_a_shape_argument_for_sizes_that_keep_it_at_least_two():
    jit = jit_of(shrunk_shape)
    for n in (3, 4, 5, 2):
        _agrees(shrunk_shape, jit, (_tensor((n,)),), np.ones(n - 1, "float32"))
    assert jit.sot_translator.shapes.describe() == "f_locals['x'] dim 0 (rank 1): dynamic for sizes of at least " \
                                                  "3, a size less 1 is a shape argument"
    assert jit.sot_translator.translations == 3  # 3, then 4 and 5 (dynamic from 3 on), then 2


@settings(max_examples=60, deadline=None)
@given(st.sampled_from([None, 0, 1, 2, 3, 5]), st.sampled_from([None, 0, 1, 2, 3, 5]))
def test_slices_bounded_by_sizes_of_the_sliced_dim_match_eager(from_end, to_end):
    """`k[K - a:K - b]` (either bound left out where None) of a tensor whose length K is dynamic."""
    def sliced(past, new):
        k = paddle.concat([past, new], axis=0)
        size = k.shape[0]
        start = None if from_end is None else size - from_end
        stop = None if to_end is None else size - to_end
        return k[start:stop] * 2

    jit = jit_of(sliced)
    for n in (3, 4, 5, 2):
        past, new = _tensor((n, 2), n), _tensor((2, 2), 9)
        with sot.disable():
            want = sliced(past, new)
        whole = np.concatenate([past.numpy(), new.numpy()])
        k = len(whole)
        np.testing.assert_array_equal(want.numpy(), whole[None if from_end is None else k - from_end:
                                                          None if to_end is None else k - to_end] * 2)
        assert_same_result(jit(past, new), want)
    # K is past's size + 2: a bound K - a with a <= 2 is at least past's size, never negative, and
    # cancels against K; a larger `a` is read, and past's size specialised
    cancels = all(end is None or end <= 2 for end in (from_end, to_end))
    assert (jit.sot_translator.translations == 2) is cancels


def test_greedy_generation_with_a_kv_cache_translates_three_times_for_twelve_tokens():
    paddle.seed(0)
    model = zoo.GPTLMHeadModel(max_positions=32)
    model.eval()
    ids = paddle.to_tensor(np.array([[1, 2, 3]], dtype="int64"))
    with sot.disable():
        want = zoo.greedy_generate(model, ids, max_new_tokens=12)
    jit = sot.to_static(model)
    got = zoo.greedy_generate(jit, ids, max_new_tokens=12)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    translator = jit.forward.sot_translator
    assert (translator.translations, translator.cache.eager, translator.fallbacks) == (3, False, [])
    assert translator.shapes.kept_static() == []
    assert "f_locals['past_key_values'][0][0] dim 2 (rank 4): dynamic" in translator.shapes.describe()


def with_positions(x):
    return x + paddle.arange(x.shape[1]).unsqueeze(0).astype("float32")  # a transformer's position ids


def without_the_first(x):
    return paddle.arange(1, x.shape[0], dtype="float32")  # n - 1 items: 1 of a size-2 x


def test_arange_to_a_run_time_size_has_that_size():
    jit = jit_of(with_positions)
    for n in (3, 4, 5, 6):
        x = _tensor((2, n))
        _agrees(with_positions, jit, (x,), x.numpy() + np.arange(n, dtype="float32"))
    assert jit.sot_translator.translations == 2
    assert "f_locals['x'] dim 1 (rank 2): dynamic" in jit.sot_translator.shapes.describe()


def test_arange_that_keeps_one_item_of_a_small_size_is_dynamic_for_larger_ones():
    jit = jit_of(without_the_first)
    for n in (3, 4, 5, 2):
        _agrees(without_the_first, jit, (_tensor((n,)),), np.arange(1, n, dtype="float32"))
    assert jit.sot_translator.shapes.describe() == "f_locals['x'] dim 0 (rank 1): dynamic for sizes of at least " \
                                                  "3, arange from 1 to a size"
    assert jit.sot_translator.translations == 3


def heads(x, w):
    """Self-attention's size bookkeeping: q and k of x [B, T, 8] through one projection, split, reshape
    and transpose; their lengths are one size, and the merged heads reshape back with a static -1."""
    B, T, _ = x.shape
    q, k = paddle.matmul(x, w).split(2, axis=-1)
    q = q.reshape([B, T, 2, 4]).transpose([0, 2, 1, 3])
    k = k.reshape([B, T, 2, 4]).transpose([0, 2, 1, 3])
    scores = paddle.matmul(q, k, transpose_y=True) * (q.shape[2] - k.shape[2] + 1)
    mask = paddle.tril(paddle.ones([k.shape[2], k.shape[2]]))[k.shape[2] - q.shape[2]:, :]
    out = paddle.matmul(F.softmax(scores + mask.unsqueeze(0).unsqueeze(0), axis=-1), q)
    return out.transpose([0, 2, 1, 3]).reshape([B, T, -1]).sum(axis=-1, keepdim=True)


def test_sizes_pass_through_attentions_ops():
    jit = jit_of(heads)
    w = _tensor((8, 16), 3)
    for n in (3, 4, 5, 6, 2):
        x = _tensor((2, n, 8), n)
        xn, wn = x.numpy().astype("float64"), w.numpy().astype("float64")
        q, k = np.split(xn @ wn, 2, axis=-1)
        q, k = (t.reshape(2, n, 2, 4).transpose(0, 2, 1, 3) for t in (q, k))
        s = q @ k.transpose(0, 1, 3, 2) + np.tril(np.ones((n, n)))
        p = np.exp(s - s.max(-1, keepdims=True))
        expected = ((p / p.sum(-1, keepdims=True)) @ q).transpose(0, 2, 1, 3).reshape(2, n, 8).sum(-1, keepdims=True)
        with sot.disable():
            want = heads(x, w)
        np.testing.assert_allclose(want.numpy(), expected, rtol=1e-4, atol=1e-5)
        assert_same_result(jit(x, w), want)
    assert jit.sot_translator.translations == 2
    assert jit.sot_translator.shapes.kept_static() == []
    (entry,) = [e for e in jit.sot_translator.cache.entries if "[2, -1, 8]" in str(e.payload)]
    assert "float32[2, -1, 8]" in str(entry.payload).split("reshape")[-1]  # the merged heads' -1 inferred


def test_a_gpt_forward_and_its_gradients_over_five_sequence_lengths_translate_twice():
    paddle.seed(0)
    eager = zoo.GPTLMHeadModel(max_positions=32)
    paddle.seed(0)
    model = zoo.GPTLMHeadModel(max_positions=32)
    jit = sot.to_static(model)
    for n in (5, 6, 7, 8, 9):
        ids = paddle.to_tensor(np.random.default_rng(n).integers(0, 17, (2, n)))
        losses = []
        for layer, run in ((eager, eager), (model, jit)):
            with sot.disable() if run is eager else contextlib.nullcontext():
                logits = run(ids)
            loss = F.cross_entropy(logits[:, :-1].reshape([-1, 17]), ids[:, 1:].reshape([-1]))
            loss.backward()
            losses.append((loss.numpy(), [p.grad.numpy() for p in layer.parameters()]))
            layer.clear_gradients()
        (got, got_grads), (want, want_grads) = losses[1], losses[0]
        np.testing.assert_allclose(got, want, rtol=1e-5)
        for g, e in zip(got_grads, want_grads):
            np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-6)
    assert jit.forward.sot_translator.translations == 2


@pytest.mark.parametrize("dtype", [None, "int32"])
def test_arange_over_sizes_keeps_the_dtype_asked_for(dtype):
    def ranged(x):
        n = x.shape[0]
        return paddle.arange(n, n + 3, dtype=dtype) if dtype else paddle.arange(n, n + 3)

    jit = jit_of(ranged)
    for n in (3, 4, 5):
        x = _tensor((n,))
        with sot.disable():
            want = ranged(x)
        assert want.dtype == paddle.int64 if dtype is None else paddle.int32
        assert_same_result(jit(x), want)
    assert jit.sot_translator.translations == 2


def shifted_loss(model, ids):
    logits = model(ids)
    return F.cross_entropy(logits[:, :-1].reshape([-1, 17]), ids[:, 1:].reshape([-1]))


def test_a_language_model_step_with_its_shifted_loss_stays_dynamic_for_lengths_of_at_least_three():
    """`logits[:, :-1]` keeps one item of a length of 2: the length stays dynamic for lengths of at least
    3 (guarded so), and a length of 2 gets a translation of its own."""
    paddle.seed(0)
    model = zoo.GPTLMHeadModel(max_positions=32)
    jit = jit_of(shifted_loss)
    for n in (5, 6, 7, 8, 9, 2, 3):
        ids = paddle.to_tensor(np.random.default_rng(n).integers(0, 17, (2, n)))
        with sot.disable():
            want = shifted_loss(model, ids)
        assert_same_result(jit(model, ids), want)
    assert jit.sot_translator.translations == 3  # 5, then 6 (dynamic from 3 on), then 2
    dynamic = [e for e in jit.sot_translator.cache.entries if any(">= 3" in str(g) for g in e.guards)]
    assert len(dynamic) == 1 and any("f_locals['ids']._data.shape[1] >= 3" in str(g) for g in dynamic[0].guards)


def squeezed_product(x):
    return (x * 2).squeeze()  # x [n, 1]: dim 0 is x's, guarded at least 2, so squeeze never drops it


def test_squeeze_of_a_dim_whose_size_is_an_inputs_stays_dynamic():
    jit = jit_of(squeezed_product)
    for n in (3, 4, 5):
        x = _tensor((n, 1))
        _agrees(squeezed_product, jit, (x,), x.numpy().squeeze(-1) * 2)
    assert jit.sot_translator.translations == 2
    assert "f_locals['x'] dim 0 (rank 2): dynamic" in jit.sot_translator.shapes.describe().splitlines()


def last_rows_of_a_grown_cache(past, new):
    k = paddle.concat([past, new], axis=0)
    tail = k[k.shape[0] - 2:, :]  # [2, m]: its columns keep past's size
    return tail * (tail.shape[1] - past.shape[1] + 1)


def test_a_slice_by_sizes_keeps_the_sizes_of_the_dims_it_takes_whole():
    jit = jit_of(last_rows_of_a_grown_cache)
    for n, m in ((3, 4), (4, 5), (5, 6), (6, 3)):
        past, new = _tensor((n, m), n), _tensor((2, m), m)
        _agrees(last_rows_of_a_grown_cache, jit, (past, new), new.numpy())
    assert jit.sot_translator.translations == 2 and jit.sot_translator.shapes.kept_static() == []
