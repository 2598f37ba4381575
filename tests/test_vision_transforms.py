"""paddle.vision.transforms: results against Paddle's recorded outputs and NumPy references.

tests/fixtures/paddle/vision/transforms_reference.npz holds real Paddle's outputs (recorded by
record_transforms.py beside it). Paddle transforms NumPy images with OpenCV, which it did not
have, so images were recorded through its PIL backend; NumPy images here follow Pillow's
numerics: nearest resizing, padding, flips, crops, rotation and brightness/contrast/saturation
match exactly, bilinear resizing and hue within 1. Tensors follow Paddle's tensor backend.
"""
import pathlib
import random

import numpy as np
import pytest

import runtime as paddle
from runtime.vision import transforms as T
from runtime.vision.transforms import functional as F

REF = dict(np.load(pathlib.Path(__file__).parent / "fixtures" / "paddle" / "vision" / "transforms_reference.npz"))
RGB, GRAY = REF["rgb"], REF["gray"]
IMAGES = {"rgb": RGB, "gray": GRAY}
SIZES = [(5, 6), (13, 17), (4, 20), (9, 3), 6]

try:
    from PIL import Image
except ImportError:
    Image = None


def _seed(s: int) -> None:
    random.seed(s)
    np.random.seed(s)


def _close(ours, key: str, tol: float = 0.0) -> None:
    ref = REF[key]
    ours = np.asarray(ours)
    assert ours.shape == ref.shape, key
    np.testing.assert_allclose(ours.astype(np.float64), ref.astype(np.float64), rtol=0, atol=tol, err_msg=key)


# ---------------------------------------------------------------- against Paddle (NumPy images)
@pytest.mark.parametrize("name", ["rgb", "gray"])
@pytest.mark.parametrize("k", range(len(SIZES)))
def test_resize_nearest_matches_paddle_exactly(name, k):
    out = F.resize(IMAGES[name], SIZES[k], "nearest")
    assert out.dtype == np.uint8
    _close(out, f"resize/{name}/{k}/nearest")


@pytest.mark.parametrize("name", ["rgb", "gray"])
@pytest.mark.parametrize("k", range(len(SIZES)))
def test_resize_bilinear_matches_paddle_within_one(name, k):
    _close(F.resize(IMAGES[name], SIZES[k], "bilinear"), f"resize/{name}/{k}/bilinear", tol=1)


def test_resize_int_size_sets_the_shorter_side():
    assert F.resize(RGB, 6).shape == (6, 7, 3)      # 9x11 -> shorter side 6, 11 * 6 / 9 = 7.33 -> 7
    assert F.resize(GRAY, 14).shape == (20, 14)     # 10x7 -> width 14, height int(14 * 10 / 7) = 20
    same = F.resize(GRAY, 7)
    assert same is GRAY                             # already the requested shorter side


@pytest.mark.parametrize("name", ["rgb", "gray"])
@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "symmetric"])
def test_pad_matches_paddle(name, mode):
    fill = (9, 8, 7) if name == "rgb" else 9
    _close(F.pad(IMAGES[name], (1, 2, 3, 2), fill=fill, padding_mode=mode), f"pad/{name}/{mode}")


def test_pad_number_fill_fills_every_channel():
    out = F.pad(RGB, 1, fill=9)
    assert out.shape == (11, 13, 3)
    assert (out[0] == 9).all() and (out[:, 0] == 9).all()
    np.testing.assert_array_equal(out[1:-1, 1:-1], RGB)


@pytest.mark.parametrize("name", ["rgb", "gray"])
@pytest.mark.parametrize("factor", [0.0, 0.4, 1.6])
def test_brightness_contrast_saturation_match_paddle(name, factor):
    img = IMAGES[name]
    _close(F.adjust_brightness(img, factor), f"brightness/{name}/{factor}")
    _close(F.adjust_contrast(img, factor), f"contrast/{name}/{factor}")
    _close(F.adjust_saturation(img, factor), f"saturation/{name}/{factor}")


@pytest.mark.parametrize("hue", [-0.5, -0.2, 0.1, 0.45])
def test_hue_matches_paddle_within_one(hue):
    _close(F.adjust_hue(RGB, hue), f"hue/rgb/{hue}", tol=1)


def test_grayscale_matches_paddle():
    _close(F.to_grayscale(RGB)[..., 0], "gray1/rgb")
    three = F.to_grayscale(RGB, 3)
    assert three.shape == (9, 11, 3)
    assert (three == three[..., :1]).all()


@pytest.mark.parametrize("angle", [30, -45, 90, 137.5])
@pytest.mark.parametrize("expand", [False, True])
def test_rotate_nearest_matches_paddle(angle, expand):
    _close(F.rotate(RGB, angle, expand=expand, fill=7), f"rotate/rgb/{angle}/{int(expand)}")


def test_rotate_about_a_center_matches_paddle():
    _close(F.rotate(RGB, 20, center=(2, 3)), "rotate_center/rgb")


@pytest.mark.parametrize("expand", [False, True])
def test_rotate_45_degrees_picks_paddles_pixels_at_exact_ties(expand):
    # Pillow walks the output in 16.16 fixed point; floating point rounds some ties the other way
    _close(F.rotate(REF["wide"], 45, expand=expand, fill=7), f"rotate45/{int(expand)}")


def test_rotate_about_a_center_with_expand_matches_paddle():
    _close(F.rotate(RGB, -33, expand=True, center=(2.5, 7.25), fill=7), "rotate_center_expand/rgb")


def test_rotate_keeps_a_2d_image_2d():
    out = F.rotate(GRAY, 90, expand=True)
    np.testing.assert_array_equal(out, np.rot90(GRAY))


# ---------------------------------------------------------------- random transforms vs Paddle
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_resized_crop_draws_paddles_boxes(seed):
    _seed(seed)
    rrc = T.RandomResizedCrop(5)
    _close([rrc._get_param(RGB) for _ in range(4)], f"rrc_params/{seed}")


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_crop_flips_rotation_erasing_match_paddle(seed):
    _seed(seed)
    _close(T.RandomCrop((4, 6), padding=1, fill=(3, 4, 5))(RGB), f"rcrop/{seed}")
    _seed(seed)
    _close(np.stack([T.RandomHorizontalFlip()(T.RandomVerticalFlip()(RGB)) for _ in range(4)]), f"flips/{seed}")
    _seed(seed)
    _close(T.RandomRotation(40, fill=5)(RGB), f"rrot/{seed}")
    _seed(seed)
    _close(T.RandomErasing(prob=1.0, value=(1, 2, 3))(RGB.copy()), f"erase/{seed}")


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_color_jitter_matches_paddle_within_one(seed):
    _seed(seed)
    _close(T.ColorJitter(0.4, 0.4, 0.4, 0.2)(RGB), f"jitter/{seed}", tol=1)


def test_random_transforms_repeat_under_the_same_seed_and_vary_without():
    pipeline = T.Compose([T.RandomResizedCrop(6), T.RandomHorizontalFlip(), T.ColorJitter(0.3, 0.3, 0.3, 0.1),
                          T.RandomRotation(20), T.RandomErasing(prob=1.0)])
    _seed(3)
    first = [pipeline(RGB) for _ in range(3)]
    _seed(3)
    again = [pipeline(RGB) for _ in range(3)]
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)
    assert any(not np.array_equal(first[0], x) for x in first[1:])


def test_random_resized_crop_boxes_stay_in_bounds():
    _seed(0)
    rrc = T.RandomResizedCrop(4, scale=(0.2, 0.6), ratio=(0.5, 2.0))
    h, w = RGB.shape[:2]
    for _ in range(200):
        i, j, ch, cw = rrc._get_param(RGB)
        assert 0 <= i and i + ch <= h and 0 <= j and j + cw <= w and ch > 0 and cw > 0
    assert rrc(RGB).shape == (4, 4, 3)


def test_random_flip_frequency_follows_prob():
    _seed(0)
    flip = T.RandomHorizontalFlip(prob=0.3)
    flipped = sum(not np.array_equal(flip(RGB), RGB) for _ in range(400))
    assert 80 <= flipped <= 160  # binomial(400, 0.3): mean 120, sd 9.2


def test_random_rotation_angles_stay_within_degrees(monkeypatch):
    angles = []
    monkeypatch.setattr(F, "rotate", lambda img, angle, *a: angles.append(angle) or img)
    _seed(0)
    rot = T.RandomRotation((-10, 25))
    for _ in range(100):
        rot(RGB)
    assert min(angles) >= -10 and max(angles) <= 25 and max(angles) - min(angles) > 20


def test_jitter_factors_stay_in_range(monkeypatch):
    factors = []
    monkeypatch.setattr(F, "adjust_brightness", lambda img, f: factors.append(f) or img)
    _seed(0)
    jitter = T.BrightnessTransform(0.5)
    for _ in range(100):
        jitter(RGB)
    assert min(factors) >= 0.5 and max(factors) <= 1.5
    assert T.BrightnessTransform(0)(RGB) is RGB  # a zero jitter is the identity


# ---------------------------------------------------------------- tensors (Paddle's tensor backend)
X = REF["tensor_x"]


@pytest.mark.parametrize("angle", [30, -45, 90, 137.5])
@pytest.mark.parametrize("expand", [False, True])
def test_tensor_rotate_matches_paddle(angle, expand):
    # at -45 degrees some pixels sit within float32 noise of a half-pixel tie: only a float32
    # grid, as Paddle's, picks the same neighbour
    _close(F.rotate(paddle.to_tensor(X), angle, expand=expand, fill=0.5).numpy(), f"trotate/{angle}/{int(expand)}")


def test_tensor_rotate_about_a_center_matches_paddle():
    _close(F.rotate(paddle.to_tensor(X), 20, center=(2, 3), fill=0.0).numpy(), "trotate_center")


@pytest.mark.parametrize("factor", [0.3, 1.5])
def test_tensor_color_adjustments_match_paddle(factor):
    x = paddle.to_tensor(X)
    _close(F.adjust_brightness(x, factor).numpy(), f"tbrightness/{factor}", 1e-6)
    _close(F.adjust_contrast(x, factor).numpy(), f"tcontrast/{factor}", 1e-6)
    _close(F.adjust_saturation(x, factor).numpy(), f"tsaturation/{factor}", 1e-6)


@pytest.mark.parametrize("hue", [-0.3, 0.2])
def test_tensor_hue_matches_paddle(hue):
    _close(F.adjust_hue(paddle.to_tensor(X), hue).numpy(), f"thue/{hue}", 1e-5)


def test_tensor_geometry_matches_paddle():
    x = paddle.to_tensor(X)
    _close(F.to_grayscale(x, 3).numpy(), "tgray3", 1e-6)
    _close(F.resize(x, (4, 11)).numpy(), "tresize_bilinear", 1e-6)
    _close(F.resize(x, 5, "nearest").numpy(), "tresize_nearest")
    _close(F.normalize(x, [0.1, 0.2, 0.3], [0.5, 0.6, 0.7]).numpy(), "tnormalize", 1e-6)
    _close(F.center_crop(x, (3, 5)).numpy(), "tcenter_crop")
    for mode in ("constant", "edge", "reflect"):
        _close(F.pad(x, (1, 2), fill=0.25, padding_mode=mode).numpy(), f"tpad/{mode}")


def test_tensor_flips_and_crop_match_numpy():
    x = paddle.to_tensor(X)
    np.testing.assert_array_equal(F.hflip(x).numpy(), X[:, :, ::-1])
    np.testing.assert_array_equal(F.vflip(x).numpy(), X[:, ::-1])
    np.testing.assert_array_equal(F.crop(x, 1, 2, 3, 4).numpy(), X[:, 1:4, 2:6])


def test_tensor_pad_symmetric_raises_as_paddle():
    with pytest.raises(ValueError, match="symmetric"):
        F.pad(paddle.to_tensor(X), 1, padding_mode="symmetric")


def test_random_erasing_on_a_tensor_uses_paddle_seed_for_noise():
    x = paddle.to_tensor(X)
    erase = T.RandomErasing(prob=1.0, value="random")
    _seed(0)
    paddle.seed(5)
    a = erase(x).numpy()
    _seed(0)
    paddle.seed(5)
    b = erase(x).numpy()
    np.testing.assert_array_equal(a, b)
    changed = (a != X).any(axis=0)
    rows, cols = np.nonzero(changed)
    assert 0 < changed.sum() == (np.ptp(rows) + 1) * (np.ptp(cols) + 1) < changed.size  # one inner box
    np.testing.assert_array_equal(x.numpy(), X)  # not in place by default


# ---------------------------------------------------------------- conversions (NumPy references)
def test_to_tensor_scales_uint8_and_moves_channels_first():
    t = F.to_tensor(RGB)
    assert t.shape == [3, 9, 11] and t.dtype == paddle.float32
    np.testing.assert_allclose(t.numpy(), RGB.transpose(2, 0, 1).astype(np.float32) / 255.0, rtol=0, atol=1e-7)
    hwc = T.ToTensor(data_format="HWC")(GRAY)
    assert hwc.shape == [10, 7, 1]
    f = np.random.rand(4, 5, 3)
    kept = F.to_tensor(f)
    assert kept.dtype == paddle.float64
    np.testing.assert_array_equal(kept.numpy(), f.transpose(2, 0, 1))  # not scaled


def test_normalize_arrays_and_to_rgb():
    img = RGB.astype(np.float32)
    out = T.Normalize(mean=[1.0, 2.0, 3.0], std=[2.0, 4.0, 8.0], data_format="HWC")(img)
    np.testing.assert_allclose(out, (img - [1, 2, 3]) / np.array([2, 4, 8], np.float32), rtol=1e-6)
    bgr = T.Normalize(mean=0.0, std=1.0, data_format="HWC", to_rgb=True)(img)
    np.testing.assert_array_equal(bgr, img[..., ::-1])
    chw = img.transpose(2, 0, 1)
    np.testing.assert_allclose(F.normalize(chw, [1, 2, 3], [2, 4, 8]),
                               (chw - np.array([1, 2, 3]).reshape(-1, 1, 1)) / np.array([2, 4, 8]).reshape(-1, 1, 1),
                               rtol=1e-6)


def test_crops_flips_and_transpose_match_numpy_slicing():
    np.testing.assert_array_equal(T.CenterCrop(5)(RGB), RGB[2:7, 3:8])
    np.testing.assert_array_equal(T.CenterCrop((4, 6))(GRAY), GRAY[3:7, 0:6])
    np.testing.assert_array_equal(F.hflip(RGB), RGB[:, ::-1])
    np.testing.assert_array_equal(F.vflip(GRAY), GRAY[::-1])
    np.testing.assert_array_equal(T.Transpose()(RGB), RGB.transpose(2, 0, 1))
    assert T.Transpose()(GRAY).shape == (1, 10, 7)
    np.testing.assert_array_equal(F.erase(RGB, 1, 2, 3, 4, 0)[1:4, 2:6], 0)


def test_random_crop_pad_if_needed_grows_a_small_image():
    _seed(0)
    out = T.RandomCrop((12, 14), pad_if_needed=True, fill=(1, 2, 3))(RGB)
    assert out.shape == (12, 14, 3)
    with pytest.raises(ValueError, match="smaller than the crop size"):
        T.RandomCrop(12)(RGB)


# ---------------------------------------------------------------- keys and composition
def test_base_transform_keys_pass_labels_through_compose():
    pipeline = T.Compose([T.Resize((4, 5)), T.ToTensor()])
    img, label = pipeline((RGB, 7))
    assert img.shape == [3, 4, 5] and label == 7

    class Boxes(T.BaseTransform):
        def _apply_image(self, image):
            return F.hflip(image)

        def _apply_boxes(self, boxes):
            w = RGB.shape[1]
            return np.stack([w - boxes[:, 2], boxes[:, 1], w - boxes[:, 0], boxes[:, 3]], axis=1)

    img, boxes, extra = Boxes(keys=("image", "boxes"))((RGB, np.array([[1, 2, 4, 5]]), "x"))
    np.testing.assert_array_equal(img, RGB[:, ::-1])
    np.testing.assert_array_equal(boxes, [[7, 2, 10, 5]])
    assert extra == "x"


def test_bad_keys_and_arguments_raise_paddles_error_types():
    with pytest.raises(NotImplementedError, match="label"):
        T.Resize(4, keys=("image", "label"))
    with pytest.raises(ValueError, match="keys"):
        T.Resize(4, keys=3)
    with pytest.raises(TypeError, match="size"):
        T.Resize("big")
    with pytest.raises(TypeError, match="size"):
        F.resize(RGB, (1, 2, 3))
    with pytest.raises(TypeError, match="img should be"):
        F.hflip([[1, 2]])
    with pytest.raises(ValueError, match="Padding must be"):
        T.Pad((1, 2, 3))
    with pytest.raises(ValueError, match="padding_mode"):
        F.pad(RGB, 1, padding_mode="wrap")
    with pytest.raises(TypeError, match="padding"):
        F.pad(RGB, "1")
    with pytest.raises(ValueError, match="hue_factor"):
        F.adjust_hue(RGB, 0.7)
    with pytest.raises(ValueError, match="non negative"):
        T.BrightnessTransform(-1)
    with pytest.raises(ValueError, match="hue values"):
        T.HueTransform((-0.6, 0.2))
    with pytest.raises(ValueError, match="degrees"):
        T.RandomRotation(-5)
    with pytest.raises(ValueError, match="prob"):
        T.RandomHorizontalFlip(1.5)
    with pytest.raises(ValueError, match="data_format"):
        F.to_tensor(RGB, "NCHW")
    with pytest.raises(ValueError, match="num_output_channels"):
        T.Grayscale(2)
    with pytest.raises(ValueError, match="value"):
        T.RandomErasing(value="noise")
    with pytest.raises(ValueError, match="interpolation"):
        F.resize(RGB, 4, "area")
    with pytest.raises(NotImplementedError, match="bilinear"):
        F.rotate(RGB, 10, interpolation="bilinear")


def test_functional_namespace_lists_the_public_functions():
    for name in ("to_tensor", "resize", "pad", "crop", "center_crop", "hflip", "vflip", "adjust_brightness",
                 "adjust_contrast", "adjust_saturation", "adjust_hue", "rotate", "to_grayscale", "normalize",
                 "erase"):
        assert getattr(T, name) is getattr(F, name)
        assert getattr(F, name).__doc__


# ---------------------------------------------------------------- PIL images (only with Pillow)
@pytest.mark.skipif(Image is None, reason="Pillow is not installed; PIL images are accepted only when it is")
def test_pil_images_follow_the_numpy_results():
    pil = Image.fromarray(RGB)
    np.testing.assert_array_equal(np.asarray(F.resize(pil, (5, 6), "nearest")), F.resize(RGB, (5, 6), "nearest"))
    np.testing.assert_array_equal(np.asarray(F.pad(pil, 2, padding_mode="reflect")),
                                  F.pad(RGB, 2, padding_mode="reflect"))
    np.testing.assert_array_equal(np.asarray(F.adjust_saturation(pil, 0.4)), F.adjust_saturation(RGB, 0.4))
    np.testing.assert_allclose(F.to_tensor(pil).numpy(), F.to_tensor(RGB).numpy())
