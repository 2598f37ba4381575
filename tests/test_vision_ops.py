"""paddle.vision.ops detection ops: the numbers and gradients PaddlePaddle 3.3.1 gave
(tests/fixtures/paddle/detops/record_detops.py: boxes past the image, sub-pixel boxes, tied scores,
aligned True/False, sampling_ratio -1 and 2, boxes_num per image), gradients by finite differences,
Paddle's argument errors, and to_static of detection heads equal to eager.

Integer outputs (nms indices) must be equal; float outputs are compared at rtol = atol = 1e-10 in
float64 (1e-6 where Paddle computes in float32: prior_box, float32 box_coder)."""
import json
import pathlib

import numpy as np
import pytest

import runtime as paddle
import sot
from helpers import fd_grad
from sot_helpers import assert_like_eager_with_grads, assert_same_result, events, fresh, run_with_grads

V = paddle.vision.ops
HERE = pathlib.Path(__file__).parent / "fixtures" / "paddle" / "detops"
REF = np.load(HERE / "detops.npz")
ERRORS = json.loads((HERE / "detops_errors.json").read_text())
TOL = dict(rtol=1e-10, atol=1e-10)
F32_TOL = dict(rtol=1e-6, atol=1e-6)


def _t(a, grad=False):
    return paddle.to_tensor(a, stop_gradient=not grad)


def _weighted_grads(y, key, inputs):
    """Backward of sum(y * the recorded weights); the gradients of `inputs` (a dict name -> tensor)."""
    (y * _t(REF[key + "_w"].astype(y.numpy().dtype))).sum().backward()
    return {k: t.grad.numpy() for k, t in inputs.items()}


# ---------------------------------------------------------------- nms
NMS_BOXES, NMS_SCORES, NMS_CAT = (REF[k] for k in ("nms_boxes", "nms_scores", "nms_cat"))


@pytest.mark.parametrize("thr", [0.1, 0.3, 0.7])
@pytest.mark.parametrize("case,kwargs", [
    ("plain", {}),
    ("scores", {"scores": True}),
    ("cat", {"scores": True, "category_idxs": True, "categories": [0, 1, 2]}),
    ("cat_top4", {"scores": True, "category_idxs": True, "categories": [0, 1, 2], "top_k": 4}),
    ("cat_sub", {"scores": True, "category_idxs": True, "categories": [1, 5]}),
    ("top4_nocat", {"scores": True, "top_k": 4}),
])
def test_nms_keeps_what_paddle_kept(thr, case, kwargs):
    kw = dict(kwargs)
    if kw.pop("scores", False):
        kw["scores"] = _t(NMS_SCORES)
    if kw.pop("category_idxs", False):
        kw["category_idxs"] = _t(NMS_CAT)
    got = V.nms(_t(NMS_BOXES), thr, **kw)
    assert got.dtype == paddle.int64
    np.testing.assert_array_equal(got.numpy(), REF[f"nms_{int(thr * 10)}_{case}"])


def _greedy_nms_reference(boxes, scores, threshold):
    """NumPy greedy NMS over the boxes by descending score, equal scores in index order (runtime's rule)."""
    order = sorted(range(len(scores)), key=lambda i: -scores[i])  # sorted() is stable: ties by index
    area = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    kept = []
    for i in order:
        ix = np.maximum(0, np.minimum(boxes[i, 2], boxes[kept, 2]) - np.maximum(boxes[i, 0], boxes[kept, 0]))
        iy = np.maximum(0, np.minimum(boxes[i, 3], boxes[kept, 3]) - np.maximum(boxes[i, 1], boxes[kept, 1]))
        iou = ix * iy / (area[i] + area[kept] - ix * iy)
        if not np.any(iou > threshold):
            kept.append(i)
    return np.array(kept, dtype=np.int64)


def test_nms_takes_tied_scores_in_index_order():
    """Paddle's CPU kernel orders equal scores as its unstable sort leaves them; runtime takes them in index
    order (a documented difference): on ties the earlier box suppresses the later one."""
    tb, ts = REF["nms_tie_boxes"], REF["nms_tie_scores"]
    assert len(set(ts.tolist())) < len(ts)  # the fixture has ties
    np.testing.assert_array_equal(V.nms(_t(tb), 0.5, _t(ts)).numpy(), _greedy_nms_reference(tb, ts, 0.5))
    mb, ms = REF["nms_many_boxes"], REF["nms_many_scores"]
    np.testing.assert_array_equal(V.nms(_t(mb), 0.2, _t(ms)).numpy(), _greedy_nms_reference(mb, ms, 0.2))


def _by_score_then_index(scores, *arrays):
    """`arrays` reordered by descending score, equal scores by their first column: the same rows in one order,
    whichever order a kernel left equal-scored rows in."""
    order = np.lexsort((arrays[0][:, 0] if arrays[0].ndim > 1 else arrays[0], -scores))
    return [a[order] for a in arrays]


def test_nms_float32_single_and_empty():
    got = V.nms(_t(NMS_BOXES.astype("float32")), 0.3, _t(NMS_SCORES.astype("float32")))
    np.testing.assert_array_equal(got.numpy(), REF["nms_f32"])
    np.testing.assert_array_equal(V.nms(_t(NMS_BOXES[:1]), 0.3).numpy(), REF["nms_single"])
    empty = V.nms(_t(np.zeros((0, 4))), 0.3, _t(np.zeros(0)))
    assert empty.dtype == paddle.int64 and empty.shape == [0]


def test_nms_matches_a_numpy_greedy_oracle():
    """Suppression in score order: a box survives unless a kept, higher-scored box has IoU > threshold."""
    rng = np.random.default_rng(5)
    xy = rng.uniform(0, 20, size=(30, 2))
    boxes = np.concatenate([xy, xy + rng.uniform(1, 8, size=(30, 2))], axis=1)
    scores = rng.uniform(size=30)
    keep = []
    for i in np.argsort(-scores):
        ious = []
        for j in keep:
            iw = max(0.0, min(boxes[i, 2], boxes[j, 2]) - max(boxes[i, 0], boxes[j, 0]))
            ih = max(0.0, min(boxes[i, 3], boxes[j, 3]) - max(boxes[i, 1], boxes[j, 1]))
            area = lambda b: (b[2] - b[0]) * (b[3] - b[1])  # noqa: E731
            ious.append(iw * ih / (area(boxes[i]) + area(boxes[j]) - iw * ih))
        if all(iou <= np.float32(0.4) for iou in ious):
            keep.append(i)
    np.testing.assert_array_equal(V.nms(_t(boxes), 0.4, _t(scores)).numpy(), keep)


# ---------------------------------------------------------------- box_coder
@pytest.mark.parametrize("normalized", [True, False])
def test_box_coder_gives_what_paddle_gave(normalized):
    prior, pvar, target, deltas = (REF[k] for k in ("bc_prior", "bc_pvar", "bc_target", "bc_deltas"))
    s = f"_{int(normalized)}"
    enc = V.box_coder(_t(prior), _t(pvar), _t(target), "encode_center_size", normalized)
    np.testing.assert_allclose(enc.numpy(), REF["bc_enc_t" + s], **TOL)
    enc = V.box_coder(_t(prior), [0.1, 0.1, 0.2, 0.2], _t(target), "encode_center_size", normalized)
    np.testing.assert_allclose(enc.numpy(), REF["bc_enc_l" + s], **F32_TOL)  # the list is float32 in Paddle
    dec = V.box_coder(_t(prior), _t(pvar), _t(deltas), "decode_center_size", normalized)
    np.testing.assert_allclose(dec.numpy(), REF["bc_dec_t" + s], **TOL)
    f32 = [_t(a.astype("float32")) for a in (prior, deltas)]
    dec = V.box_coder(f32[0], [0.1, 0.1, 0.2, 0.2], f32[1], "decode_center_size", normalized)
    np.testing.assert_allclose(dec.numpy(), REF["bc_dec_l32" + s], rtol=1e-5, atol=1e-5)


def test_box_coder_decode_along_axis_1():
    prior, pvar, deltas1 = (REF[k] for k in ("bc_prior", "bc_pvar", "bc_deltas1"))
    got = V.box_coder(_t(prior), _t(pvar), _t(deltas1), "decode_center_size", True, axis=1)
    np.testing.assert_allclose(got.numpy(), REF["bc_dec_axis1"], **TOL)
    got = V.box_coder(_t(prior.astype("float32")), [0.1, 0.2, 0.3, 0.4], _t(deltas1.astype("float32")),
                      "decode_center_size", False, axis=1)
    np.testing.assert_allclose(got.numpy(), REF["bc_dec_axis1_l32"], rtol=1e-5, atol=1e-5)


def test_box_coder_decode_inverts_encode():
    """Decoding the encoding of each target against each prior gives the target back (normalized boxes; for
    pixel boxes Paddle's encoding measures the centre without the +1 pixel and its decoding with it)."""
    prior, pvar, target = (REF[k] for k in ("bc_prior", "bc_pvar", "bc_target"))
    enc = V.box_coder(_t(prior), _t(pvar), _t(target), "encode_center_size", True)
    dec = V.box_coder(_t(prior), _t(pvar), enc, "decode_center_size", True)
    np.testing.assert_allclose(dec.numpy(), np.broadcast_to(target[:, None], dec.shape), rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------- roi_align / roi_pool / psroi_pool
RX, RBOXES, RNUM = REF["ra_x"], REF["ra_boxes"], REF["ra_num"]


@pytest.mark.parametrize("aligned", [True, False])
@pytest.mark.parametrize("ratio", [-1, 2])
@pytest.mark.parametrize("scale", [1.0, 0.5])
def test_roi_align_gives_what_paddle_gave(aligned, ratio, scale):
    key = f"ra_{int(aligned)}_{ratio}_{int(scale * 10)}"
    x = _t(RX, grad=True)
    y = V.roi_align(x, _t(RBOXES), _t(RNUM), (2, 3), spatial_scale=scale, sampling_ratio=ratio, aligned=aligned)
    np.testing.assert_allclose(y.numpy(), REF[key], **TOL)
    gx = _weighted_grads(y, key, {"x": x})["x"]
    if not aligned:
        np.testing.assert_allclose(gx, REF[key + "_gx"], **TOL)
    else:  # Paddle's backward treats the sub-pixel roi (image 0) as 1 x 1: compare image 1 only, and see below
        np.testing.assert_allclose(gx[1], REF[key + "_gx"][1], **TOL)


@pytest.mark.parametrize("ratio", [-1, 2])
def test_roi_align_aligned_gradient_is_paddles_without_sub_pixel_rois(ratio):
    key = f"ra_big_{ratio}"
    x = _t(RX, grad=True)
    y = V.roi_align(x, _t(RBOXES[[0, 2, 3, 4]]), _t(np.array([2, 2], "int32")), (2, 3), sampling_ratio=ratio)
    np.testing.assert_allclose(y.numpy(), REF[key], **TOL)
    np.testing.assert_allclose(_weighted_grads(y, key, {"x": x})["x"], REF[key + "_gx"], **TOL)


@pytest.mark.parametrize("aligned", [True, False])
def test_roi_align_gradient_is_the_derivative_of_its_forward(aligned):
    """Also for a roi smaller than a pixel with aligned=True, where Paddle 3.3.1's backward is not."""
    rng = np.random.default_rng(1)
    x = rng.normal(size=(2, 2, 5, 6))
    boxes, num = RBOXES * 0.8, _t(RNUM)
    w = rng.normal(size=(5, 2, 2, 2))
    f = lambda: float((V.roi_align(_t(x), _t(boxes), num, 2, aligned=aligned).numpy() * w).sum())  # noqa: E731
    tx = _t(x, grad=True)
    (V.roi_align(tx, _t(boxes), num, 2, aligned=aligned) * _t(w)).sum().backward()
    np.testing.assert_allclose(tx.grad.numpy(), fd_grad(f, x), rtol=1e-6, atol=1e-8)


def test_roi_align_layer_default_float32_and_empty_boxes():
    got = V.RoIAlign(3, spatial_scale=0.5)(_t(RX), _t(RBOXES), _t(RNUM))
    np.testing.assert_allclose(got.numpy(), REF["ra_layer"], **TOL)
    np.testing.assert_allclose(V.roi_align(_t(RX), _t(RBOXES), _t(RNUM), 2).numpy(), REF["ra_default"], **TOL)
    got32 = V.roi_align(_t(RX.astype("float32")), _t(RBOXES.astype("float32")), _t(RNUM), 2)
    assert got32.dtype == paddle.float32
    np.testing.assert_allclose(got32.numpy(), REF["ra_default"], rtol=1e-5, atol=1e-5)
    empty = V.roi_align(_t(RX), _t(np.zeros((0, 4))), _t(np.array([0, 0], "int32")), 2)
    assert empty.shape == [0, 3, 2, 2]


@pytest.mark.parametrize("scale", [1.0, 0.5])
@pytest.mark.parametrize("size", [(2, 3), (3, 3)])
def test_roi_pool_gives_what_paddle_gave(scale, size):
    key = f"rp_{int(scale * 10)}_{size[0]}{size[1]}"
    x = _t(REF["rp_x"], grad=True)
    y = V.roi_pool(x, _t(RBOXES), _t(RNUM), size, spatial_scale=scale)
    np.testing.assert_allclose(y.numpy(), REF[key], **TOL)
    np.testing.assert_allclose(_weighted_grads(y, key, {"x": x})["x"], REF[key + "_gx"], **TOL)


def test_roi_pool_and_psroi_pool_layers_and_psroi_pool_gradient():
    got = V.RoIPool(2, spatial_scale=0.5)(_t(REF["rp_x"]), _t(RBOXES), _t(RNUM))
    np.testing.assert_allclose(got.numpy(), REF["rp_layer"], **TOL)
    x = _t(REF["ps_x"], grad=True)
    y = V.PSRoIPool(2, spatial_scale=0.8)(x, _t(RBOXES), _t(RNUM))
    np.testing.assert_allclose(y.numpy(), REF["ps"], **TOL)
    np.testing.assert_allclose(_weighted_grads(y, "ps", {"x": x})["x"], REF["ps_gx"], **TOL)


# ---------------------------------------------------------------- yolo_box / prior_box
ANCHORS = [10, 13, 16, 30]


@pytest.mark.parametrize("case,args,kwargs", [
    ("1", ("yb_x", 0.4), {"clip_bbox": True}),
    ("0", ("yb_x", 0.4), {"clip_bbox": False}),
    ("scale", ("yb_x", 0.3), {"scale_x_y": 1.2}),
    ("iou", ("yb_xiou", 0.3), {"iou_aware": True, "iou_aware_factor": 0.4}),
])
def test_yolo_box_gives_what_paddle_gave(case, args, kwargs):
    boxes, scores = V.yolo_box(_t(REF[args[0]]), _t(REF["yb_size"]), ANCHORS, 3, args[1], 8, **kwargs)
    np.testing.assert_allclose(boxes.numpy(), REF[f"yb_{case}_boxes"], **TOL)
    np.testing.assert_allclose(scores.numpy(), REF[f"yb_{case}_scores"], **TOL)


PRIOR_CASES = {
    "a": dict(min_sizes=[4.0], aspect_ratios=[1.0]),
    "b": dict(min_sizes=[4.0, 8.0], max_sizes=[9.0, 15.0], aspect_ratios=[2.0, 3.0], flip=True, clip=True),
    "c": dict(min_sizes=[5.0], max_sizes=[10.0], aspect_ratios=[1.0, 2.0], flip=True, steps=[6.0, 7.0],
              offset=0.3, min_max_aspect_ratios_order=True, variance=[0.1, 0.2, 0.3, 0.4]),
    "d": dict(min_sizes=[6.0], aspect_ratios=[0.5, 2.0, 2.0], flip=False, clip=False),
}


@pytest.mark.parametrize("case", sorted(PRIOR_CASES))
def test_prior_box_gives_what_paddle_gave(case):
    boxes, var = V.prior_box(_t(np.zeros((1, 4, 3, 4), "float32")), _t(np.zeros((1, 3, 24, 30), "float32")),
                             **PRIOR_CASES[case])
    assert boxes.dtype == paddle.float32 and var.dtype == paddle.float32
    np.testing.assert_allclose(boxes.numpy(), REF[f"pb_{case}_boxes"], **F32_TOL)
    np.testing.assert_allclose(var.numpy(), REF[f"pb_{case}_var"], **F32_TOL)


# ---------------------------------------------------------------- deform_conv2d
DEFORM_CASES = {
    "dc_v1": dict(stride=1, padding=1, dilation=1, deformable_groups=1, groups=1),
    "dc_v2": dict(stride=2, padding=1, dilation=1, deformable_groups=2, groups=2),
    "dc_dil": dict(stride=1, padding=0, dilation=2, deformable_groups=1, groups=1),
    "dc_int": dict(padding=1),  # integer offsets: points on pixels and on the edges, where slopes change
}


@pytest.mark.parametrize("key", sorted(DEFORM_CASES))
def test_deform_conv2d_gives_what_paddle_gave_with_gradients(key):
    ts = {k: _t(REF[f"{key}_{k}"], grad=True) for k in ("x", "off", "wt", "b", "m") if f"{key}_{k}" in REF}
    y = V.deform_conv2d(ts["x"], ts["off"], ts["wt"], ts.get("b"), mask=ts.get("m"), **DEFORM_CASES[key])
    np.testing.assert_allclose(y.numpy(), REF[key], **TOL)
    for name, g in _weighted_grads(y, key, ts).items():
        np.testing.assert_allclose(g, REF[f"{key}_g{name}"], **TOL, err_msg=f"gradient of {name}")


def test_deform_conv2d_gradients_match_finite_differences():
    rng = np.random.default_rng(2)
    arrays = {"x": rng.normal(size=(1, 2, 4, 4)), "off": rng.normal(scale=1.3, size=(1, 2 * 2 * 4, 3, 3)),
              "wt": rng.normal(size=(2, 1, 2, 2)), "m": rng.uniform(size=(1, 2 * 4, 3, 3))}
    kw = dict(padding=1, stride=2, deformable_groups=2, groups=2)
    w = rng.normal(size=(1, 2, 3, 3))

    def f():
        return float((V.deform_conv2d(_t(arrays["x"]), _t(arrays["off"]), _t(arrays["wt"]), mask=_t(arrays["m"]),
                                      **kw).numpy() * w).sum())

    ts = {k: _t(a, grad=True) for k, a in arrays.items()}
    (V.deform_conv2d(ts["x"], ts["off"], ts["wt"], mask=ts["m"], **kw) * _t(w)).sum().backward()
    for k, t in ts.items():
        np.testing.assert_allclose(t.grad.numpy(), fd_grad(f, arrays[k]), rtol=1e-6, atol=1e-7, err_msg=k)


def test_deform_conv2d_layer_holds_paddles_parameters():
    paddle.seed(3)
    layer = V.DeformConv2D(2, 3, 3, padding=1)
    assert layer.weight.shape == list(REF["dc_layer_w"].shape)
    np.testing.assert_array_equal(layer.bias.numpy(), REF["dc_layer_b"])
    x, off = _t(REF["dc_v1_x"].astype("float32")), _t(REF["dc_v1_off"].astype("float32"))
    assert layer.weight.dtype == paddle.float32
    np.testing.assert_array_equal(layer(x, off).numpy(),
                                  V.deform_conv2d(x, off, layer.weight, layer.bias, padding=1).numpy())


# ---------------------------------------------------------------- proposals
@pytest.mark.parametrize("offset", [False, True])
def test_distribute_fpn_proposals_gives_what_paddle_gave(offset):
    rois, restore, nums = V.distribute_fpn_proposals(_t(REF["fpn_rois"]), 2, 5, 4, 224, pixel_offset=offset,
                                                     rois_num=_t(REF["fpn_num"]))
    assert len(rois) == len(nums) == 4
    for level, (r, n) in enumerate(zip(rois, nums)):
        want = REF[f"fpn_{int(offset)}_rois{level}"]
        assert r.shape == list(want.shape)  # an empty level is [0, 4]
        np.testing.assert_array_equal(r.numpy(), want)
        assert n.dtype == paddle.int32
        np.testing.assert_array_equal(n.numpy(), REF[f"fpn_{int(offset)}_num{level}"])
    assert restore.dtype == paddle.int32
    np.testing.assert_array_equal(restore.numpy(), REF[f"fpn_{int(offset)}_restore"])
    # restore_ind puts each roi back in its place
    merged = np.concatenate([r.numpy() for r in rois])
    np.testing.assert_array_equal(merged[restore.numpy()[:, 0]], REF["fpn_rois"])


GP_CASES = {
    "a": dict(pre_nms_top_n=6000, post_nms_top_n=1000, nms_thresh=0.5, min_size=0.1),
    "b": dict(pre_nms_top_n=20, post_nms_top_n=8, nms_thresh=0.3, min_size=3.0, pixel_offset=True),
    "c": dict(pre_nms_top_n=25, post_nms_top_n=30, nms_thresh=0.7, min_size=1.0, eta=0.8),
}


@pytest.mark.parametrize("case", sorted(GP_CASES))
def test_generate_proposals_gives_what_paddle_gave(case):
    """Counts exactly; boxes in float32 as Paddle computes them (within a few float32 ulps)."""
    inputs = [_t(REF[f"gp_{k}"]) for k in ("scores", "deltas", "size", "anchors", "var")]
    rois, probs, num = V.generate_proposals(*inputs, return_rois_num=True, **GP_CASES[case])
    assert num.dtype == paddle.int32 and rois.dtype == probs.dtype == paddle.float32
    np.testing.assert_array_equal(num.numpy(), REF[f"gp_{case}_num"])
    # equal-scored proposals may come in another order than Paddle's (see test_nms_takes_tied_scores_in_index_order)
    got_rois, got_probs = _by_score_then_index(probs.numpy()[:, 0], rois.numpy(), probs.numpy())
    want_rois, want_probs = _by_score_then_index(REF[f"gp_{case}_probs"][:, 0], REF[f"gp_{case}_rois"],
                                                 REF[f"gp_{case}_probs"])
    np.testing.assert_allclose(got_rois, want_rois, rtol=1e-6, atol=1e-5)
    np.testing.assert_array_equal(got_probs, want_probs)
    assert V.generate_proposals(*inputs, **GP_CASES[case])[2] is None


def test_proposal_ops_break_the_graph_and_match_eager():
    def rpn(scores, deltas, size, anchors, var, num):
        rois, probs, _ = V.generate_proposals(scores, deltas, size, anchors, var, pre_nms_top_n=20)
        levels, restore, _ = V.distribute_fpn_proposals(rois, 2, 3, 2, 8, rois_num=num)
        return probs * 2, restore, levels[0] + 1

    inputs = [_t(REF[f"gp_{k}"]) for k in ("scores", "deltas", "size", "anchors", "var")]
    num = V.generate_proposals(*inputs, pre_nms_top_n=20, return_rois_num=True)[2]
    jit = sot.to_static(fresh(rpn))
    assert_same_result(jit(*inputs, num), rpn(*inputs, num))
    assert [code for code, _, _ in events(jit)] == ["SOT-B005", "SOT-B005"]


MN_CASES = {
    "a": dict(score_threshold=0.1, post_threshold=0.05, nms_top_k=6, keep_top_k=8),
    "b": dict(score_threshold=0.2, post_threshold=0.3, nms_top_k=-1, keep_top_k=-1, use_gaussian=True,
              gaussian_sigma=2.5),
    "c": dict(score_threshold=0.0, post_threshold=0.0, nms_top_k=-1, keep_top_k=12, background_label=-1),
    "d": dict(score_threshold=0.95, post_threshold=0.9, nms_top_k=4, keep_top_k=5),
    "px": dict(score_threshold=0.1, post_threshold=0.05, nms_top_k=-1, keep_top_k=-1, normalized=False),
}


@pytest.mark.parametrize("case", sorted(MN_CASES))
def test_matrix_nms_gives_what_paddle_gave(case):
    """Index and counts exactly, up to the order of equal-scored rows; decayed scores within float32 ulps."""
    boxes = REF["mn_boxes_px" if case == "px" else "mn_boxes"]
    out, num, index = V.matrix_nms(_t(boxes), _t(REF["mn_scores"]), return_index=True, **MN_CASES[case])
    assert num.dtype == index.dtype == paddle.int32 and out.dtype == paddle.float32
    np.testing.assert_array_equal(num.numpy(), REF[f"mn_{case}_num"])
    got_index, got_out = _by_score_then_index(out.numpy()[:, 1], index.numpy(), out.numpy())
    want_index, want_out = _by_score_then_index(REF[f"mn_{case}_out"][:, 1], REF[f"mn_{case}_index"],
                                                REF[f"mn_{case}_out"])
    np.testing.assert_array_equal(got_index, want_index)
    np.testing.assert_allclose(got_out, want_out, rtol=1e-6, atol=1e-7)
    plain = V.matrix_nms(_t(boxes), _t(REF["mn_scores"]), **MN_CASES[case])
    assert plain[2] is None and plain[1] is not None


def test_matrix_nms_breaks_the_graph_and_matches_eager():
    def head(boxes, scores):
        out, num, _ = V.matrix_nms(boxes * 1.0, scores, 0.1, 0.05, 6, 8)
        return out[:, 1].sum() + 1, num

    args = (_t(REF["mn_boxes"]), _t(REF["mn_scores"]))
    jit = sot.to_static(fresh(head))
    assert_same_result(jit(*args), head(*args))
    assert [code for code, _, _ in events(jit)] == ["SOT-B005"]


# ---------------------------------------------------------------- argument errors
_RNG = np.random.default_rng(9)
BAD_CALLS = {
    "nms_boxes_3cols": lambda: V.nms(_t(NMS_BOXES[:, :3]), 0.3),
    "nms_no_categories": lambda: V.nms(_t(NMS_BOXES), 0.3, _t(NMS_SCORES), _t(NMS_CAT)),
    "nms_top_k_too_big": lambda: V.nms(_t(NMS_BOXES), 0.3, _t(NMS_SCORES), _t(NMS_CAT), [0, 1, 2], 13),
    "roi_align_boxes_3cols": lambda: V.roi_align(_t(RX), _t(RBOXES[:, :3]), _t(RNUM), 2),
    "roi_align_num_mismatch": lambda: V.roi_align(_t(RX), _t(RBOXES), _t(np.array([2, 2], "int32")), 2),
    "roi_align_num_batch": lambda: V.roi_align(_t(RX), _t(RBOXES), _t(np.array([5], "int32")), 2),
    "roi_align_output_size_zero": lambda: V.roi_align(_t(RX), _t(RBOXES), _t(RNUM), 0),
    "roi_align_x_3d": lambda: V.roi_align(_t(RX[0]), _t(RBOXES), _t(RNUM), 2),
    "roi_pool_boxes_3cols": lambda: V.roi_pool(_t(RX), _t(RBOXES[:, :3]), _t(RNUM), 2),
    "roi_pool_num_mismatch": lambda: V.roi_pool(_t(RX), _t(RBOXES), _t(np.array([2, 2], "int32")), 2),
    "box_coder_bad_code_type": lambda: V.box_coder(_t(REF["bc_prior"]), _t(REF["bc_pvar"]), _t(REF["bc_target"]),
                                                   "center"),
    "box_coder_target_3cols": lambda: V.box_coder(_t(REF["bc_prior"]), _t(REF["bc_pvar"]),
                                                  _t(REF["bc_target"][:, :3])),
    "deform_offset_channels": lambda: V.deform_conv2d(_t(_RNG.normal(size=(1, 2, 5, 5))),
                                                      _t(_RNG.normal(size=(1, 17, 5, 5))),
                                                      _t(_RNG.normal(size=(2, 2, 3, 3))), padding=1),
    "deform_mask_channels": lambda: V.deform_conv2d(_t(_RNG.normal(size=(1, 2, 5, 5))),
                                                    _t(_RNG.normal(size=(1, 18, 5, 5))),
                                                    _t(_RNG.normal(size=(2, 2, 3, 3))), padding=1,
                                                    mask=_t(_RNG.normal(size=(1, 8, 5, 5)))),
    "yolo_box_channels": lambda: V.yolo_box(_t(REF["yb_x"][:, :-1]), _t(REF["yb_size"]), ANCHORS, 3, 0.4, 8),
    "psroi_pool_one_channel": lambda: V.psroi_pool(_t(REF["ps_x"][:, :4]), _t(RBOXES), _t(RNUM), 2),
    "matrix_nms_scores_boxes": lambda: V.matrix_nms(_t(REF["mn_boxes"]), _t(REF["mn_scores"][:, :, :9]), 0.1, 0.05,
                                                    -1, -1),
}
# Paddle 3.3.1 reads past its arrays (no error, or a crash) where boxes_num does not add up: runtime raises
UNCHECKED_BY_PADDLE = {"roi_align_num_mismatch", "roi_pool_num_mismatch"}


@pytest.mark.parametrize("case", sorted(BAD_CALLS))
def test_bad_arguments_raise_paddles_error_naming_op_and_argument(case):
    want = "ValueError" if case in UNCHECKED_BY_PADDLE else ERRORS[case]
    with pytest.raises(Exception) as info:
        BAD_CALLS[case]()
    assert type(info.value).__name__ == want
    op = case.split("_")[0] if not case.startswith(("roi_", "box_", "yolo_", "psroi_", "matrix_")) \
        else "_".join(case.split("_")[:2])
    assert (op if op != "deform" else "deform_conv2d") in str(info.value)


def test_output_size_may_be_a_list_as_paddle_accepts():
    assert ERRORS["roi_align_output_size_list"] is None and ERRORS["roi_pool_output_size_list"] is None
    np.testing.assert_allclose(V.roi_align(_t(RX), _t(RBOXES), _t(RNUM), [2, 2]).numpy(), REF["ra_default"], **TOL)
    with pytest.raises(TypeError, match="roi_pool: argument 'output_size'"):
        V.roi_pool(_t(RX), _t(RBOXES), _t(RNUM), 2.5)


# ---------------------------------------------------------------- under to_static
def _detect(feat, boxes, boxes_num, scores):
    keep = V.nms(boxes, 0.3, scores)
    aligned = V.roi_align(feat * 2, boxes, boxes_num, 2, sampling_ratio=2)
    pooled = V.roi_pool(feat, boxes, boxes_num, 2)
    return aligned.mean(axis=[2, 3]) + pooled.sum(), keep + 1


def test_to_static_detection_head_matches_eager_with_a_break_at_nms():
    feat = _t(RX, grad=True)
    args = [feat, _t(RBOXES), _t(RNUM), _t(np.linspace(0.9, 0.1, 5))]
    want, want_grads, want_mode = run_with_grads(_detect, args)
    jit = sot.to_static(fresh(_detect))
    got, got_grads, got_mode = run_with_grads(jit, args)
    assert_like_eager_with_grads(got, want, got_grads, want_grads, got_mode, want_mode)
    assert [code for code, _, _ in events(jit)] == ["SOT-B005"]  # nms's output size depends on the scores


def _decode(x, img_size, feat, prior, var):
    boxes, scores = V.yolo_box(x, img_size, ANCHORS, 3, 0.4, 8)
    pb, pv = V.prior_box(feat, feat, [4.0], aspect_ratios=[2.0], flip=True)
    coded = V.box_coder(prior, var, prior + boxes[0, :3].mean(), "encode_center_size")
    return boxes * 2, scores.sum(), pb + pv, coded


def test_to_static_yolo_prior_and_box_coder_are_one_graph_like_eager():
    args = (_t(REF["yb_x"]), _t(REF["yb_size"]), _t(np.zeros((1, 2, 3, 4))), _t(REF["bc_prior"]),
            _t(REF["bc_pvar"]))
    want = _decode(*args)
    report = sot.explain(fresh(_decode), *args)
    assert (report.graph_count, report.break_count, report.fallbacks) == (1, 0, []), str(report)
    assert_same_result(sot.to_static(fresh(_decode))(*args), want)


def _deform(x, off, w, m):
    return V.deform_conv2d(x, off, w, padding=1, mask=m).tanh()


def test_to_static_deform_conv2d_matches_eager_with_gradients():
    ins = [_t(REF[f"dc_v1_{k}"], grad=True) for k in ("x", "off", "wt")] + [_t(np.full((2, 9, 5, 6), 0.5), grad=True)]
    want, want_grads, want_mode = run_with_grads(_deform, ins)
    report = sot.explain(fresh(_deform), *ins)
    assert (report.graph_count, report.break_count, report.fallbacks) == (1, 0, []), str(report)
    for t in ins:
        t.clear_gradient()
    got, got_grads, got_mode = run_with_grads(sot.to_static(fresh(_deform)), ins)
    assert_like_eager_with_grads(got, want, got_grads, want_grads, got_mode, want_mode)
