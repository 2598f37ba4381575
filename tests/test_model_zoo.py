"""Model code as PaddleNLP / PaddleClas / PaddleSeg / PaddleDetection write it (tests/zoo_models.py),
eagerly and under `sot.to_static`.

Each model is built twice from one seed; one copy runs eagerly, the other under the JIT. Oracles:
the eager forward output, the eager losses of 3 training steps (backward, optimizer step) and the
eager parameters after them. Where the same ops run in the same order the comparison is exact; the
graph and break counts of `sot.explain` are pinned where they are stable, so a regression in what is
captured shows.
"""
import itertools

import numpy as np
import pytest

import runtime as paddle
import runtime.nn as nn
import runtime.nn.functional as F
import sot
import zoo_models as zoo
from sot_helpers import jit_of, translators

STEPS = 3


@pytest.fixture(autouse=True)
def _forget_translations():
    """Each test starts from empty caches: the models' forward code is shared by the tests, and their
    translations would otherwise add up towards the cache limit in whatever order the tests run."""
    yield
    sot.reset()


def _pair(cls, *args, **kwargs):
    """The same model twice from one seed: eager, and under to_static (its forward translated)."""
    paddle.seed(0)
    eager = cls(*args, **kwargs)
    paddle.seed(0)
    return eager, sot.to_static(cls(*args, **kwargs))


def _train(model, step_loss, opt_cls=paddle.optimizer.Adam, **opt_kwargs):
    """STEPS optimizer steps of `step_loss(model, i)`; the losses. Seeded alike for random ops."""
    opt = opt_cls(learning_rate=0.01, parameters=model.parameters(), **opt_kwargs)
    paddle.seed(1)
    losses = []
    for i in range(STEPS):
        loss = step_loss(model, i)
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(float(loss))
    return losses


def _assert_trains_alike(eager, jit, step_loss, rtol=0.0, atol=0.0, **opt_kwargs):
    """Eager and JIT training give the same losses and parameters; the parameters did move; no frame
    of the JIT fell back to eager."""
    before = {k: v.numpy().copy() for k, v in eager.state_dict().items()}
    want = _train(eager, step_loss, **opt_kwargs)
    got = _train(jit, step_loss, **opt_kwargs)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)
    want_state, got_state = eager.state_dict(), jit.state_dict()
    assert list(got_state) == list(want_state)
    for key, value in want_state.items():
        np.testing.assert_allclose(got_state[key].numpy(), value.numpy(), rtol=rtol, atol=atol, err_msg=key)
    assert any(not np.array_equal(before[k], v.numpy()) for k, v in want_state.items())
    assert all(t.fallbacks == [] for t in translators(jit.forward))


def _explained(jit, *args, **kwargs):
    """sot.explain of the JIT model's forward on these arguments, with no fallback."""
    report = sot.explain(jit.forward, *args, **kwargs)
    assert report.fallbacks == [], str(report)
    return report


def _ids(shape, high, seed=0):
    return paddle.to_tensor(np.random.default_rng(seed).integers(0, high, shape))


# ---------------------------------------------------------------- GPT-2
def test_gpt2_forward_training_and_kv_cache_generation_match_eager():
    eager, jit = _pair(zoo.GPTLMHeadModel)
    ids = _ids((2, 6), 17)
    np.testing.assert_array_equal(jit(ids).numpy(), eager(ids).numpy())
    report = _explained(jit, ids)
    assert (report.graph_count, report.break_count) == (1, 0)

    def lm_loss(model, i):
        logits = model(ids[:, :-1])
        return F.cross_entropy(logits.reshape([-1, logits.shape[-1]]), ids[:, 1:].reshape([-1]))

    _assert_trains_alike(eager, jit, lm_loss)
    np.testing.assert_array_equal(zoo.greedy_generate(jit, ids[:, :3]).numpy(),
                                  zoo.greedy_generate(eager, ids[:, :3]).numpy())
    # one step with the cache: a single graph, the cached keys and values among its outputs
    logits, past = eager(ids[:, :3], use_cache=True)
    step = _explained(jit, ids[:, 3:4], past_key_values=past, use_cache=True)
    want_logits, want_past = eager(ids[:, 3:4], past_key_values=past, use_cache=True)
    assert (step.graph_count, step.break_count) == (1, 0)
    np.testing.assert_array_equal(step.result[0].numpy(), want_logits.numpy())
    for (gk, gv), (wk, wv) in zip(step.result[1], want_past):
        np.testing.assert_array_equal(gk.numpy(), wk.numpy())
        np.testing.assert_array_equal(gv.numpy(), wv.numpy())


# ---------------------------------------------------------------- BERT
def _bert_batch():
    rng = np.random.default_rng(0)
    ids = rng.integers(1, 23, (3, 6))
    ids[0, 4:] = 0  # padding: the attention mask hides it
    ids[2, 3:] = 0
    token_types = (np.arange(6) >= 3).astype("int64")[None].repeat(3, 0)
    return paddle.to_tensor(ids), paddle.to_tensor(token_types), paddle.to_tensor([0, 2, 1])


def test_bert_classifier_forward_dict_outputs_and_training_match_eager():
    eager, jit = _pair(zoo.BertForSequenceClassification)
    ids, token_types, labels = _bert_batch()
    for model in (eager, jit):
        model.eval()
    np.testing.assert_array_equal(jit(ids, token_types).numpy(), eager(ids, token_types).numpy())
    report = _explained(jit, ids, token_types)
    assert (report.graph_count, report.break_count) == (1, 0)
    want = eager.bert(ids, token_types, return_dict=True)
    got = sot.to_static(jit.bert)(ids, token_types, return_dict=True)
    assert list(got) == list(want) == ["last_hidden_state", "pooler_output"]
    for key in want:
        np.testing.assert_array_equal(got[key].numpy(), want[key].numpy())
    for model in (eager, jit):
        model.train()  # dropout on: the same seed draws the same masks

    def classification_loss(model, i):
        loss, _ = model(ids, token_type_ids=token_types, labels=labels)
        return loss

    _assert_trains_alike(eager, jit, classification_loss, opt_cls=paddle.optimizer.AdamW, weight_decay=0.01)


def test_a_decorated_bert_train_step_breaks_only_at_backward_and_the_optimizer():
    eager, other = _pair(zoo.BertForSequenceClassification)
    model = other.forward.__self__
    ids, token_types, labels = _bert_batch()

    def train_step(model, opt, ids, token_types, labels):
        loss, logits = model(ids, token_type_ids=token_types, labels=labels)
        loss.backward()
        opt.step()
        opt.clear_grad()
        return loss, logits

    jit_step = sot.to_static(train_step)
    opts = [paddle.optimizer.AdamW(learning_rate=0.01, parameters=m.parameters()) for m in (eager, model)]
    for i in range(STEPS):
        paddle.seed(i)
        want = train_step(eager, opts[0], ids, token_types, labels)
        paddle.seed(i)
        got = jit_step(model, opts[1], ids, token_types, labels) if i else sot.explain(
            jit_step, model, opts[1], ids, token_types, labels)
        if not i:
            report, got = got, got.result
            assert report.fallbacks == [] and report.graph_count >= 1, str(report)
            assert [b.code for b in report.breaks] == ["SOT-B003"] * 3, str(report)  # backward, step, clear_grad
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g.numpy(), w.numpy())
    for key, value in eager.state_dict().items():
        np.testing.assert_array_equal(model.state_dict()[key].numpy(), value.numpy(), err_msg=key)


# ---------------------------------------------------------------- ViT
def _images(shape, seed=0):
    return paddle.to_tensor(np.random.default_rng(seed).standard_normal(shape).astype("float32"))


def test_vit_with_drop_path_forward_and_training_match_eager():
    eager, jit = _pair(zoo.VisionTransformer)
    x, labels = _images((3, 3, 8, 8)), paddle.to_tensor([0, 4, 2])
    paddle.seed(3)
    want = eager(x)
    paddle.seed(3)
    report = _explained(jit, x)  # training mode: dropout and stochastic depth draw alike from the seed
    np.testing.assert_array_equal(report.result.numpy(), want.numpy())
    # `paddle.shape(x)[0]` as an expand size and `paddle.to_tensor(1 - drop_prob)` are captured
    assert (report.graph_count, report.break_count) == (1, 0), str(report)
    _assert_trains_alike(eager, jit, lambda model, i: F.cross_entropy(model(x), labels))
    for model in (eager, jit):
        model.eval()
    np.testing.assert_array_equal(jit(x).numpy(), eager(x).numpy())


# ---------------------------------------------------------------- MobileNetV3
def test_mobilenet_v3_with_se_blocks_and_batchnorm_trains_like_eager():
    eager, jit = _pair(zoo.MobileNetV3)
    x, labels = _images((2, 3, 16, 16)), paddle.to_tensor([1, 3])
    paddle.seed(3)
    want = eager(x)
    paddle.seed(3)
    report = _explained(jit, x)
    np.testing.assert_array_equal(report.result.numpy(), want.numpy())
    assert (report.graph_count, report.break_count) == (1, 0)
    # PaddleClas trains it with Momentum and L2 decay (BatchNorm's parameters exempt by their ParamAttr)
    _assert_trains_alike(eager, jit, lambda model, i: F.cross_entropy(model(x), labels),
                         opt_cls=paddle.optimizer.Momentum, momentum=0.9,
                         weight_decay=paddle.regularizer.L2Decay(1e-4))
    for model in (eager, jit):
        model.eval()  # the running statistics the training steps updated, and dropout scaled for inference
    np.testing.assert_array_equal(jit(x).numpy(), eager(x).numpy())


def test_mobilenet_v3_trains_like_eager_on_images_of_three_sizes():
    """Multi-scale training (PaddleDetection, PaddleSeg): from the second size on the spatial dims are dynamic,
    and the backward of strided convs and pools reads their sizes at run time."""
    eager, jit = _pair(zoo.MobileNetV3)
    batches = [_images((2, 3, size, size), size) for size in (16, 20, 24)]
    labels = paddle.to_tensor([1, 3])
    _assert_trains_alike(eager, jit, lambda model, i: F.cross_entropy(model(batches[i]), labels),
                         opt_cls=paddle.optimizer.Momentum, momentum=0.9)
    report = _explained(jit, _images((2, 3, 28, 28)))
    assert "float32[2, 3, -1, -1]" in report.sir_texts[0] and report.graph_count == 1, str(report)


# ---------------------------------------------------------------- UNet
def _segmentation_batch(size, seed=0):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 3, (2, size, size, 1))
    labels[0, :2] = 255  # PaddleSeg's ignore_index
    return _images((2, 3, size, size), seed), paddle.to_tensor(labels)


def test_unet_with_skip_connections_and_bilinear_upsampling_trains_like_eager():
    for use_deconv, size in ((False, 11), (True, 12)):  # 11: interpolate to sizes that do not double
        eager, jit = _pair(zoo.UNet, use_deconv=use_deconv)
        x, labels = _segmentation_batch(size)
        report = _explained(jit, x)
        want = eager(x)
        assert isinstance(report.result, list) and len(report.result) == 1
        np.testing.assert_array_equal(report.result[0].numpy(), want[0].numpy())
        assert (report.graph_count, report.break_count) == (1, 0), str(report)
        # the compiled backward sums the gradients a skip connection gets in another order (float32 rounding);
        # PaddleSeg trains with Momentum (Adam would blow up the rounding noise of the conv biases before
        # BatchNorm, whose true gradient is 0, to steps of the learning rate)
        _assert_trains_alike(eager, jit, lambda model, i: zoo.seg_cross_entropy(model(x)[0], labels),
                             rtol=1e-5, atol=1e-6, opt_cls=paddle.optimizer.Momentum, momentum=0.9)


def test_unet_trains_like_eager_on_images_of_three_sizes_in_one_graph():
    """With dynamic sizes, `F.interpolate(x, paddle.shape(short_cut)[2:])` resizes to sizes the graph
    reads when it runs: the decoder stays in the graph."""
    eager, jit = _pair(zoo.UNet)
    batches = [_segmentation_batch(size, size) for size in (11, 12, 14)]
    _assert_trains_alike(eager, jit, lambda model, i: zoo.seg_cross_entropy(model(batches[i][0])[0], batches[i][1]),
                         rtol=1e-5, atol=1e-6, opt_cls=paddle.optimizer.Momentum, momentum=0.9)
    x, _ = _segmentation_batch(13)
    report = _explained(jit, x)
    np.testing.assert_allclose(report.result[0].numpy(), eager(x)[0].numpy(), rtol=1e-5, atol=1e-6)
    assert "float32[2, 3, -1, -1]" in report.sir_texts[0], str(report)
    assert (report.graph_count, report.break_count) == (1, 0), str(report)


# ---------------------------------------------------------------- seq2seq with attention
def _translation_batch():
    rng = np.random.default_rng(0)
    src = rng.integers(2, 13, (3, 5))
    src[0, 3:] = 1  # eos and padding: masked out of the attention, and past sequence_length
    src[2, 4:] = 1
    trg = rng.integers(2, 11, (3, 5))
    return paddle.to_tensor(src), paddle.to_tensor([3, 5, 4]), paddle.to_tensor(trg[:, :-1]), \
        paddle.to_tensor(trg[:, 1:])


@pytest.mark.parametrize("rnn", ["lstm", "gru"])
def test_seq2seq_with_attention_and_a_teacher_forcing_loop_trains_like_eager(rnn):
    eager, jit = _pair(zoo.Seq2SeqAttnModel, rnn=rnn)
    src, src_length, trg, label = _translation_batch()
    report = _explained(jit, src, src_length, trg)
    np.testing.assert_array_equal(report.result.numpy(), eager(src, src_length, trg).numpy())
    assert (report.graph_count, report.break_count) == (1, 0), str(report)  # the loop over time unrolled

    def loss(model, i):
        logits = model(src, src_length, trg)
        return F.cross_entropy(logits.reshape([-1, logits.shape[-1]]), label.reshape([-1]))

    # the compiled backward adds the gradients of the steps that share a weight in another order
    _assert_trains_alike(eager, jit, loss, rtol=1e-5, atol=1e-6, grad_clip=nn.ClipGradByGlobalNorm(1.0))


# ---------------------------------------------------------------- VAE
def test_vae_reparameterisation_with_randn_like_trains_like_eager():
    eager, jit = _pair(zoo.VAE)
    x = paddle.to_tensor(np.random.default_rng(0).random((5, 12)).astype("float32"))
    paddle.seed(4)
    want = eager(x)
    paddle.seed(4)  # the same noise eps: randn_like draws from the seeded generator in the graph too
    report = _explained(jit, x)
    for got, exp in zip(report.result, want):
        np.testing.assert_array_equal(got.numpy(), exp.numpy())
    assert (report.graph_count, report.break_count) == (1, 0), str(report)
    _assert_trains_alike(eager, jit, lambda model, i: zoo.vae_loss(x, *model(x)))
    for model in (eager, jit):
        model.eval()  # z = mu: no noise
    np.testing.assert_array_equal(jit(x)[0].numpy(), eager(x)[0].numpy())


# ---------------------------------------------------------------- BiGRU-CRF
def _brute_force_crf(emission, transitions, length, gold, start, stop):
    """log Z, the gold path's score and the best path with its score, by enumerating every path."""
    def score(path):
        inner = sum(transitions[a, b] for a, b in zip(path, path[1:]))
        return transitions[start, path[0]] + inner + transitions[path[-1], stop] + sum(
            emission[k, t] for k, t in enumerate(path))

    paths = list(itertools.product(range(transitions.shape[0]), repeat=length))
    scores = np.array([score(p) for p in paths], dtype=np.float64)
    best = int(scores.argmax())
    return np.log(np.exp(scores).sum()), score(tuple(gold[:length])), scores[best], paths[best]


def test_bigru_crf_loss_and_viterbi_decode_match_eager_and_brute_force():
    eager, jit = _pair(zoo.BiGruCrf)
    rng = np.random.default_rng(0)
    ids, lengths = paddle.to_tensor(rng.integers(1, 15, (3, 4))), paddle.to_tensor([4, 2, 3])
    labels = paddle.to_tensor(rng.integers(0, 4, (3, 4)))
    report = _explained(jit, ids, lengths, labels)
    np.testing.assert_array_equal(report.result.numpy(), eager(ids, lengths, labels).numpy())
    # the loops over time steps (`enumerate` of a tensor) unrolled, the cached `_initial_alpha` written back
    assert (report.graph_count, report.break_count) == (1, 0), str(report)
    np.testing.assert_array_equal(jit.crf._initial_alpha.numpy(), eager.crf._initial_alpha.numpy())
    decoded = _explained(jit, ids, lengths)
    want_scores, want_paths = eager(ids, lengths)
    np.testing.assert_array_equal(decoded.result[0].numpy(), want_scores.numpy())
    np.testing.assert_array_equal(decoded.result[1].numpy(), want_paths.numpy())
    assert (decoded.graph_count, decoded.break_count) == (1, 0), str(decoded)

    # eager against enumerating every path
    crf = eager.crf
    emission = eager.fc(eager.gru(eager.word_embedding(ids), sequence_length=lengths)[0])
    log_z, gold = crf(emission, lengths).numpy(), crf.gold_score(emission, labels, lengths).numpy()
    for b, length in enumerate(lengths.numpy()):
        want = _brute_force_crf(emission.numpy()[b], crf.transitions.numpy(), length, labels.numpy()[b],
                                crf.start_idx, crf.stop_idx)
        np.testing.assert_allclose([log_z[b], gold[b], want_scores.numpy()[b]], want[:3], rtol=1e-5)
        assert tuple(want_paths.numpy()[b][:length]) == want[3]

    _assert_trains_alike(eager, jit, lambda model, i: model(ids, lengths, labels), rtol=1e-6, atol=1e-7)


# ---------------------------------------------------------------- PP-YOLOE head
def test_ppyoloe_head_with_anchors_from_meshgrid_trains_like_eager():
    eager, jit = _pair(zoo.PPYOLOEHead)
    rng = np.random.default_rng(0)
    feats = [_images((2, 8, 2, 3), 1), _images((2, 4, 4, 6), 2)]  # strides 16 and 8 of a 32x48 image
    report = _explained(jit, feats)
    scores, boxes = eager(feats)  # (training mode: each call updates BatchNorm's statistics, once each)
    np.testing.assert_array_equal(report.result[0].numpy(), scores.numpy())
    np.testing.assert_array_equal(report.result[1].numpy(), boxes.numpy())
    assert (report.graph_count, report.break_count) == (1, 0), str(report)
    # eager against NumPy: the anchor centres, at stride 16 then 8, of the boxes' first corner
    centres = [np.stack(np.meshgrid(np.arange(w) + 0.5, np.arange(h) + 0.5), -1).reshape(-1, 2) * s
               for h, w, s in ((2, 3, 16), (4, 6, 8))]
    distances = (np.concatenate(centres) - boxes.numpy()[..., :2]) / np.repeat([16.0, 8.0], [6, 24])[:, None]
    assert ((distances >= 0) & (distances <= 4)).all()  # DFL distances lie in [0, reg_max]
    cls_target = paddle.to_tensor(rng.random((2, 3, 30)).astype("float32"))
    box_target = paddle.to_tensor(rng.random((2, 30, 4)).astype("float32") * 32)

    def loss(model, i):
        scores, boxes = model(feats)
        return F.binary_cross_entropy(scores, cls_target) + F.l1_loss(boxes, box_target) * 0.01

    frozen = eager.proj_conv.weight.numpy().copy()
    _assert_trains_alike(eager, jit, loss, rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(jit.proj_conv.weight.numpy(), frozen)  # stop_gradient: not trained


# ---------------------------------------------------------------- runtime gaps these models hit
def test_to_tensor_of_python_data_in_a_translated_function_is_a_graph_constant():
    def scale(x, p=0.1):
        keep = paddle.to_tensor(1 - p, dtype=x.dtype)
        return x / keep * paddle.to_tensor([1.0, 2.0, 3.0]), paddle.to_tensor(x)

    x = paddle.to_tensor(np.arange(6, dtype="float32").reshape(2, 3), stop_gradient=False)
    report = sot.explain(scale, x)
    want = scale(x)
    assert (report.graph_count, report.break_count, report.fallbacks) == (1, 0, []), str(report)
    for got, exp in zip(report.result, want):
        assert (got.dtype, got.stop_gradient) == (exp.dtype, exp.stop_gradient)
        np.testing.assert_array_equal(got.numpy(), exp.numpy())
    np.testing.assert_allclose(want[0].numpy(), x.numpy() / np.float32(0.9) * [1, 2, 3], rtol=1e-6)


def test_to_tensor_in_static_mode_is_a_constant_or_a_copy_of_a_var():
    paddle.enable_static()
    try:
        main = paddle.static.Program()
        with paddle.static.program_guard(main, paddle.static.Program()):
            x = paddle.static.data("x", [2, 3], "float32")
            x.stop_gradient = False
            const = paddle.to_tensor([1.0, 2.0, 3.0])
            copy = paddle.to_tensor(x, dtype="float64")
            out = (x * const).sum() + (x * copy.astype("float32")).sum()
            grads = paddle.static.gradients([out], [x])
        assert isinstance(const, paddle.static.Variable) and const.stop_gradient and copy.stop_gradient
        feed = np.arange(6, dtype="float32").reshape(2, 3)
        got_const, got_copy, got_grad = paddle.static.Executor().run(
            main, feed={"x": feed}, fetch_list=[const, copy, grads[0]])
    finally:
        paddle.disable_static()
    np.testing.assert_array_equal(got_const, np.array([1.0, 2.0, 3.0], "float32"))
    assert got_copy.dtype == np.float64
    np.testing.assert_array_equal(got_copy, feed.astype("float64"))
    # the copy stops the gradient: d/dx of sum(x * c) + sum(x * stop_gradient(x)) is c + x
    np.testing.assert_array_equal(got_grad, np.array([1.0, 2.0, 3.0], "float32") + feed)


def test_a_size_from_paddle_shape_of_a_known_shape_keeps_the_size_known():
    def cls_tokens(x, cls):
        tokens = cls.expand((paddle.shape(x)[0], -1, -1))
        n, c = tokens.shape[1:]
        return tokens.reshape((-1, n * c))

    x, cls = paddle.rand([3, 4, 5]), paddle.rand([1, 2, 5])
    report = sot.explain(cls_tokens, x, cls)
    assert (report.graph_count, report.break_count, report.fallbacks) == (1, 0, []), str(report)
    np.testing.assert_array_equal(report.result.numpy(), np.broadcast_to(cls.numpy(), (3, 2, 5)).reshape(3, 10))


_WEIGHT = np.random.default_rng(5).random((4, 3, 3, 3)).astype("float32")
# ops whose gradient needs the input's spatial sizes: with dynamic dims those are known only at run time
_SIZED_BACKWARD = {
    "interpolate": lambda x, w: F.interpolate(x, scale_factor=2, mode="bilinear"),
    "max_pool": lambda x, w: F.max_pool2d(x, 3, 2, padding=1),
    "adaptive_max_pool": lambda x, w: F.adaptive_max_pool2d(x, 1),
    "avg_pool_ceil_mode": lambda x, w: F.avg_pool2d(x, 2, ceil_mode=True),
    "unfold": lambda x, w: F.unfold(x, 2, 2),
    "strided_conv": lambda x, w: F.conv2d(x, w, stride=2, padding=1),
    "strided_conv_same": lambda x, w: F.conv2d(x, w, stride=2, padding="SAME"),
    "strided_conv_nhwc": lambda x, w: F.conv2d(x.transpose([0, 2, 3, 1]), w, stride=(2, 1), padding=1,
                                               data_format="NHWC"),
}


@pytest.mark.parametrize("name", _SIZED_BACKWARD)
def test_backward_with_spatial_sizes_known_only_at_run_time(name):
    op = _SIZED_BACKWARD[name]

    def scaled(x, w):
        return op(x, w) * 2

    jit = jit_of(scaled)  # (a code object of its own: the cache of `scaled` is per code object, shared by the cases)
    for size in (6, 7, 9):  # from the second size on, the spatial dims are dynamic
        x = _images((2, 3, size, size + 1), size)
        (x_jit, w_jit), (x_eager, w_eager) = ((paddle.to_tensor(x.numpy(), stop_gradient=False),
                                               paddle.to_tensor(_WEIGHT, stop_gradient=False)) for _ in range(2))
        report = sot.explain(jit, x_jit, w_jit)
        want = scaled(x_eager, w_eager)
        (report.result * report.result).sum().backward()
        (want * want).sum().backward()
        np.testing.assert_array_equal(report.result.numpy(), want.numpy())
        for got, exp in ((x_jit, x_eager), (w_jit, w_eager)):
            assert (got.grad is None) == (exp.grad is None)
            if exp.grad is not None:
                np.testing.assert_allclose(got.grad.numpy(), exp.grad.numpy(), rtol=1e-5, atol=1e-6)
    assert "float32[2, 3, -1, -1]" in report.sir_texts[0]


def test_rand_like_and_randn_like_draw_as_rand_and_randn_with_the_shape_and_dtype_of_x():
    x = paddle.zeros([3, 4], dtype="float64")
    for like, plain in ((paddle.rand_like, paddle.rand), (paddle.randn_like, paddle.randn)):
        paddle.seed(7)
        got = like(x)
        paddle.seed(7)
        want = plain([3, 4], dtype="float64")
        assert got.dtype == paddle.float64 and got.shape == [3, 4]
        np.testing.assert_array_equal(got.numpy(), want.numpy())
        assert like(x, dtype="float32").dtype == paddle.float32
    assert (paddle.rand_like(x).numpy() < 1).all() and (paddle.rand_like(x).numpy() >= 0).all()


def test_a_loop_over_a_tensor_unrolls_over_its_rows():
    def rows(x):
        out = []
        for i, row in enumerate(x):
            out.append(row * i)
        return paddle.stack([r * 2 for r in x]) + paddle.stack(out)

    x = paddle.to_tensor(np.arange(6, dtype="float32").reshape(3, 2))
    report = sot.explain(rows, x)
    assert (report.graph_count, report.break_count, report.fallbacks) == (1, 0, []), str(report)
    np.testing.assert_array_equal(report.result.numpy(), rows(x).numpy())
    np.testing.assert_array_equal(rows(x).numpy(), x.numpy() * 2 + x.numpy() * np.arange(3)[:, None])


def test_a_loop_over_a_0d_tensor_raises_the_eager_error():
    def over_a_scalar(x):
        return [r for r in x.sum()]

    with pytest.raises(TypeError, match="iteration over a 0-D tensor"):
        sot.to_static(over_a_scalar)(paddle.ones([2]))


def test_interpolate_to_sizes_a_static_program_reads_when_it_runs():
    paddle.enable_static()
    try:
        main = paddle.static.Program()
        with paddle.static.program_guard(main, paddle.static.Program()):
            x = paddle.static.data("x", [1, 2, -1, -1], "float32")
            like = paddle.static.data("like", [1, 1, -1, -1], "float32")
            bilinear = F.interpolate(x, paddle.shape(like)[2:], mode="bilinear")
            nearest = F.interpolate(x, [paddle.shape(like)[2], 5], mode="nearest")
        assert bilinear.shape == [1, 2, -1, -1] and nearest.shape == [1, 2, -1, 5]
        feed = {"x": np.random.default_rng(0).random((1, 2, 3, 4)).astype("float32"),
                "like": np.zeros((1, 1, 7, 6), "float32")}
        got = paddle.static.Executor().run(main, feed=feed, fetch_list=[bilinear, nearest])
    finally:
        paddle.disable_static()
    eager_x = paddle.to_tensor(feed["x"])
    np.testing.assert_array_equal(got[0], F.interpolate(eager_x, [7, 6], mode="bilinear").numpy())
    np.testing.assert_array_equal(got[1], F.interpolate(eager_x, [7, 5], mode="nearest").numpy())


def test_the_second_derivative_of_a_resize_to_run_time_sizes_says_it_is_not_supported():
    paddle.enable_static()
    try:
        with paddle.static.program_guard(paddle.static.Program(), paddle.static.Program()):
            x = paddle.static.data("x", [1, 1, -1, -1], "float32")
            x.stop_gradient = False
            like = paddle.static.data("like", [1, 1, -1, -1], "float32")
            y = F.interpolate(x, paddle.shape(like)[2:], mode="bilinear")
            (g,) = paddle.static.gradients([(y * y).sum()], [x])
            with pytest.raises(NotImplementedError, match="second derivative of a resize to sizes known only"):
                paddle.static.gradients([(g * g).sum()], [x])
    finally:
        paddle.disable_static()
