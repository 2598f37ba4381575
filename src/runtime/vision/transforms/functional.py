"""`paddle.vision.transforms.functional`: image operations on three kinds of image.

- NumPy arrays, HWC or HW (Paddle's 'cv2' backend convention). Paddle computes these with
  OpenCV; here they are computed with Pillow's numerics (see `_kernels`), because OpenCV is not
  a dependency: nearest resizing is exact, bilinear within 1 of Pillow on uint8 images.
- Tensors, CHW, computed as Paddle's tensor backend does (resize is `interpolate`, rotation
  samples like `grid_sample(align_corners=False)`).
- PIL images, only when Pillow is installed: these call Pillow itself, as Paddle does.
"""
from __future__ import annotations

import math
import numbers
from typing import Any, Callable, Sequence

import numpy as np

from ...ops.interpolate import interpolate as _interpolate
from ...ops.padding import pad as _pad_tensor
from ...tensor import Tensor, to_tensor as _to_tensor
from . import _kernels

try:  # Pillow is optional: PIL images are accepted only when it is installed
    from PIL import Image as _PIL
    from PIL import ImageEnhance as _PILEnhance
except ImportError:
    _PIL = None
    _PILEnhance = None

__all__ = ["to_tensor", "resize", "pad", "crop", "center_crop", "hflip", "vflip", "adjust_brightness",
           "adjust_contrast", "adjust_saturation", "adjust_hue", "rotate", "to_grayscale", "normalize",
           "erase"]

_PAD_MODES = ("constant", "edge", "reflect", "symmetric")


# ---------------------------------------------------------------- image kinds
def _is_pil_image(img: Any) -> bool:
    return _PIL is not None and isinstance(img, _PIL.Image)


def _is_tensor_image(img: Any) -> bool:
    return isinstance(img, Tensor)


def _is_numpy_image(img: Any) -> bool:
    return isinstance(img, np.ndarray) and img.ndim in (2, 3)


def _kind(img: Any, arg: str = "img") -> str:
    """'pil', 'tensor' or 'numpy'; anything else raises Paddle's TypeError."""
    if _is_pil_image(img):
        return "pil"
    if _is_tensor_image(img):
        return "tensor"
    if _is_numpy_image(img):
        return "numpy"
    raise TypeError(f"{arg} should be PIL Image or Tensor Image or ndarray with dim=[2 or 3]. Got {type(img)}")


def _check_chw(img: Tensor, api: str) -> None:
    if img.ndim not in (3, 4):
        raise RuntimeError(f"{api}: not support [type={type(img)}, ndim={img.ndim}, data_format=CHW] paddle image; "
                           "a tensor image is CHW (or NCHW)")


def _hwc(arr: np.ndarray) -> np.ndarray:
    return arr[:, :, None] if arr.ndim == 2 else arr


def _on_tensor_host(img: Tensor, fn: Callable[[np.ndarray], np.ndarray]) -> Tensor:
    """Apply an HWC NumPy kernel to a CHW (or NCHW) tensor's values; the result keeps the dtype.
    Like Paddle's image transforms, these are data preparation: no gradient flows through them."""
    arr = np.asarray(img.numpy())
    if arr.ndim == 4:
        out = np.stack([fn(a.transpose(1, 2, 0)).transpose(2, 0, 1) for a in arr])
    else:
        out = fn(arr.transpose(1, 2, 0)).transpose(2, 0, 1)
    return _to_tensor(np.ascontiguousarray(out))


def _pil_from(arr: np.ndarray, like: Any) -> Any:
    """A PIL image of `arr`, in the mode of `like` when both have the same number of bands."""
    arr = arr[:, :, 0] if arr.ndim == 3 and arr.shape[2] == 1 else arr
    same_bands = _channels(arr) == len(like.getbands())
    return _PIL.fromarray(np.ascontiguousarray(arr), like.mode if same_bands else None)


def _pil_resampling(interpolation: Any) -> Any:
    """Pillow's resampling filter named `interpolation`."""
    if interpolation not in _kernels.INTERPOLATIONS:
        raise ValueError(f"argument 'interpolation' must be one of {list(_kernels.INTERPOLATIONS)} for PIL images, "
                         f"got {interpolation!r}")
    return getattr(_PIL.Resampling, interpolation.upper())


# ---------------------------------------------------------------- conversion
def to_tensor(pic: Any, data_format: str = "CHW") -> Tensor:
    """An HWC image as a tensor in `data_format` ('CHW' or 'HWC'); uint8 becomes float32 in [0, 1],
    other dtypes keep their values (as Paddle). A tensor comes back unchanged (transposed for 'HWC')."""
    kind = _kind(pic, "pic")
    if kind == "tensor":
        return pic if str(data_format).lower() == "chw" else pic.transpose((1, 2, 0))
    if data_format not in ("CHW", "HWC"):
        raise ValueError(f"to_tensor: argument 'data_format' should be CHW or HWC. Got {data_format!r}")
    arr = _hwc(np.asarray(pic))
    if kind == "pil" and pic.mode == "1":
        arr = arr.astype(np.uint8) * 255
    if data_format == "CHW":
        arr = arr.transpose(2, 0, 1)
    if arr.dtype == np.uint8:
        return _to_tensor(arr.astype(np.float32) / np.float32(255.0))
    return _to_tensor(np.ascontiguousarray(arr))


# ---------------------------------------------------------------- geometry
def _target_size(h: int, w: int, size: Any, api: str) -> tuple[int, int] | None:
    """(oh, ow) for `size`; an int sets the shorter side and keeps the aspect ratio. None: no change."""
    if isinstance(size, bool) or not (isinstance(size, int) or (isinstance(size, Sequence) and len(size) == 2)):
        raise TypeError(f"{api}: Got inappropriate size arg: {size!r}; argument 'size' must be an int or a "
                        "(height, width) pair")
    if not isinstance(size, int):
        return int(size[0]), int(size[1])
    if (w <= h and w == size) or (h <= w and h == size):
        return None
    if w < h:
        return int(size * h / w), size
    return size, int(size * w / h)


def resize(img: Any, size: int | Sequence[int], interpolation: str = "bilinear") -> Any:
    """Resize to `size` = (height, width), or make the shorter side `size` keeping the aspect
    ratio. Interpolation: 'nearest', 'bilinear', 'bicubic' (also 'box', 'hamming', 'lanczos' for
    arrays and PIL images; tensors take `interpolate`'s modes)."""
    kind = _kind(img)
    if kind == "pil":
        target = _target_size(img.size[1], img.size[0], size, "resize")
        if target is None:
            return img
        return img.resize((target[1], target[0]), _pil_resampling(interpolation))
    if kind == "tensor":
        _check_chw(img, "resize")
        h, w = img.shape[-2:]
        if isinstance(size, int) and (w <= 0 or h <= 0):
            raise NotImplementedError(f"resize: not support while w<=0 or h<=0, but received w={w}, h={h}")
        target = _target_size(h, w, size, "resize")
        if target is None:
            return img
        batched = img if img.ndim == 4 else img.unsqueeze(0)
        out = _interpolate(batched, size=list(target), mode=str(interpolation).lower(), data_format="NCHW")
        return out if img.ndim == 4 else out.squeeze(0)
    if interpolation not in _kernels.INTERPOLATIONS:
        raise ValueError(f"resize: argument 'interpolation' must be one of {list(_kernels.INTERPOLATIONS)} for "
                         f"numpy images, got {interpolation!r}")
    target = _target_size(img.shape[0], img.shape[1], size, "resize")
    if target is None:
        return img
    return _kernels.resize(img, target[0], target[1], interpolation)


def _pad_amounts(padding: Any) -> tuple[int, int, int, int]:
    """(left, top, right, bottom) from an int, a (left/right, top/bottom) pair or four values."""
    if isinstance(padding, (int, np.integer)) and not isinstance(padding, bool):
        p = int(padding)
        return p, p, p, p
    if len(padding) == 2:
        return int(padding[0]), int(padding[1]), int(padding[0]), int(padding[1])
    return tuple(int(p) for p in padding)  # type: ignore[return-value]


def _check_pad_args(padding: Any, fill: Any, padding_mode: Any) -> None:
    if not isinstance(padding, (numbers.Number, list, tuple)):
        raise TypeError(f"pad: Got inappropriate padding arg: argument 'padding' must be an int, list or tuple, "
                        f"got {type(padding).__name__}")
    if not isinstance(fill, (numbers.Number, str, list, tuple)):
        raise TypeError(f"pad: Got inappropriate fill arg: argument 'fill' must be a number or a sequence, "
                        f"got {type(fill).__name__}")
    if not isinstance(padding_mode, str):
        raise TypeError(f"pad: Got inappropriate padding_mode arg: argument 'padding_mode' must be a str, "
                        f"got {type(padding_mode).__name__}")
    if isinstance(padding, (list, tuple)) and len(padding) not in (2, 4):
        raise ValueError("pad: Padding must be an int or a 2, or 4 element tuple, not a "
                         f"{len(padding)} element tuple (argument 'padding')")
    if padding_mode not in _PAD_MODES:
        raise ValueError(f"pad: argument 'padding_mode' should be either constant, edge, reflect or symmetric, "
                         f"got {padding_mode!r}")


def _fill_value(fill: Any, channels: int) -> np.ndarray:
    """A per-channel fill: a number fills every channel, a sequence gives one value per channel."""
    values = np.atleast_1d(np.asarray(fill, dtype=np.float64))
    return np.broadcast_to(values, (channels,)) if values.size in (1, channels) else values[:channels]


def pad(img: Any, padding: int | Sequence[int], fill: Any = 0, padding_mode: str = "constant") -> Any:
    """Pad every border: `padding` is an int, (left/right, top/bottom) or (left, top, right,
    bottom); modes 'constant' (with `fill`), 'edge', 'reflect' (mirror without the edge pixel)
    and 'symmetric' (mirror with it; not for tensors, as Paddle)."""
    kind = _kind(img)
    _check_pad_args(padding, fill, padding_mode)
    left, top, right, bottom = _pad_amounts(padding)
    if kind == "tensor":
        _check_chw(img, "pad")
        if padding_mode == "symmetric":
            raise ValueError("pad: padding_mode 'symmetric' is not supported for tensor images (as Paddle)")
        mode = "replicate" if padding_mode == "edge" else padding_mode
        batched = img if img.ndim == 4 else img.unsqueeze(0)
        out = _pad_tensor(batched, [left, right, top, bottom], mode=mode, value=float(fill), data_format="NCHW")
        return out if img.ndim == 4 else out.squeeze(0)
    arr = np.asarray(img)
    widths = [(top, bottom), (left, right)] + [(0, 0)] * (arr.ndim - 2)
    if padding_mode == "constant":
        out = np.empty((arr.shape[0] + top + bottom, arr.shape[1] + left + right) + arr.shape[2:], arr.dtype)
        out[...] = _fill_value(fill, arr.shape[2] if arr.ndim == 3 else 1).astype(arr.dtype).reshape(
            (-1,) if arr.ndim == 3 else ())
        out[top:top + arr.shape[0], left:left + arr.shape[1]] = arr
    else:
        out = np.pad(arr, widths, mode=padding_mode)
    return _pil_from(out, img) if kind == "pil" else out


def crop(img: Any, top: int, left: int, height: int, width: int) -> Any:
    """The box of `height` x `width` whose top-left corner is (`top`, `left`)."""
    kind = _kind(img)
    if kind == "pil":
        return img.crop((left, top, left + width, top + height))
    if kind == "tensor":
        _check_chw(img, "crop")
        return img[..., top:top + height, left:left + width]
    return img[top:top + height, left:left + width]


def center_crop(img: Any, output_size: int | Sequence[int]) -> Any:
    """The centred box of `output_size` = (height, width) or an int for a square."""
    if isinstance(output_size, numbers.Number):
        output_size = (int(output_size), int(output_size))
    h, w = _image_hw(img)
    th, tw = output_size
    return crop(img, int(round((h - th) / 2.0)), int(round((w - tw) / 2.0)), th, tw)


def _image_hw(img: Any) -> tuple[int, int]:
    kind = _kind(img)
    if kind == "pil":
        return img.size[1], img.size[0]
    if kind == "tensor":
        return img.shape[-2], img.shape[-1]
    return img.shape[0], img.shape[1]


def hflip(img: Any) -> Any:
    """Mirror left-right."""
    kind = _kind(img)
    if kind == "pil":
        return img.transpose(_PIL.Transpose.FLIP_LEFT_RIGHT)
    if kind == "tensor":
        _check_chw(img, "hflip")
        return img.flip(axis=[-1])
    return img[:, ::-1].copy()


def vflip(img: Any) -> Any:
    """Mirror top-bottom."""
    kind = _kind(img)
    if kind == "pil":
        return img.transpose(_PIL.Transpose.FLIP_TOP_BOTTOM)
    if kind == "tensor":
        _check_chw(img, "vflip")
        return img.flip(axis=[-2])
    return img[::-1].copy()


# ---------------------------------------------------------------- colour
def _channels(arr: np.ndarray) -> int:
    return 1 if arr.ndim == 2 else arr.shape[2]


def _gray_like(arr: np.ndarray) -> np.ndarray:
    """The greyscale version of an HW/HWC array, with the array's own shape."""
    if _channels(arr) == 1:
        return arr.copy()
    gray = _kernels.rgb_to_gray(arr)
    return np.repeat(gray[:, :, None], arr.shape[2], axis=2)


def _check_factor(value: Any, arg: str, api: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Number):
        raise TypeError(f"{api}: argument '{arg}' must be a number, got {type(value).__name__}")
    if value < 0:
        raise ValueError(f"{api}: argument '{arg}' should be non-negative, got {value}")
    return float(value)


def _tensor_blend(img: Tensor, degenerate: Callable[[np.ndarray], np.ndarray], factor: float) -> Tensor:
    """Paddle's tensor blend: lerp towards `img`, clipped to [0, 1] (floats) or [0, 255], same dtype."""
    def blend(arr: np.ndarray) -> np.ndarray:
        top = 1.0 if np.issubdtype(arr.dtype, np.floating) else 255.0
        target = degenerate(arr)
        mixed = target + factor * (arr.astype(np.float64) - target)
        return np.clip(mixed, 0, top).astype(arr.dtype)
    return _on_tensor_host(img, blend)


def _tensor_gray(arr: np.ndarray) -> np.ndarray:
    """Paddle's tensor greyscale weights on an HWC array, keeping one channel."""
    weights = np.array([0.2989, 0.5870, 0.1140], dtype=np.float64)
    return (arr.astype(np.float64) * weights).sum(axis=2, keepdims=True)


def _tensor_channels(img: Tensor, api: str) -> int:
    _check_chw(img, api)
    c = img.shape[-3]
    if c not in (1, 3):
        raise ValueError(f"{api}: channels of input should be either 1 or 3, got {c}")
    return c


def adjust_brightness(img: Any, brightness_factor: float) -> Any:
    """Scale brightness: 0 gives black, 1 the original image."""
    kind = _kind(img)
    factor = _check_factor(brightness_factor, "brightness_factor", "adjust_brightness")
    if kind == "pil":
        return _PILEnhance.Brightness(img).enhance(factor)
    if kind == "tensor":
        _tensor_channels(img, "adjust_brightness")
        return _tensor_blend(img, lambda a: np.zeros(a.shape), factor)
    return _kernels.blend(np.zeros_like(img), img, factor)


def adjust_contrast(img: Any, contrast_factor: float) -> Any:
    """Scale contrast: 0 gives the image's mean grey everywhere, 1 the original image."""
    kind = _kind(img)
    factor = _check_factor(contrast_factor, "contrast_factor", "adjust_contrast")
    if kind == "pil":
        return _PILEnhance.Contrast(img).enhance(factor)
    if kind == "tensor":
        c = _tensor_channels(img, "adjust_contrast")
        return _tensor_blend(img, lambda a: np.full(a.shape, (a if c == 1 else _tensor_gray(a)).mean()), factor)
    gray = img if _channels(img) == 1 else _kernels.rgb_to_gray(img)
    mean = float(gray.mean())
    level = int(mean + 0.5) if img.dtype == np.uint8 else mean  # Pillow rounds the mean grey level
    return _kernels.blend(np.full_like(img, level), img, factor)


def adjust_saturation(img: Any, saturation_factor: float) -> Any:
    """Scale saturation: 0 gives the greyscale image, 1 the original image."""
    kind = _kind(img)
    factor = _check_factor(saturation_factor, "saturation_factor", "adjust_saturation")
    if kind == "pil":
        return _PILEnhance.Color(img).enhance(factor)
    if kind == "tensor":
        if _tensor_channels(img, "adjust_saturation") == 1:
            return img
        return _tensor_blend(img, lambda a: np.broadcast_to(_tensor_gray(a), a.shape), factor)
    return _kernels.blend(_gray_like(img), img, factor)


def _hue_shift_hsv(arr: np.ndarray, hue_factor: float) -> np.ndarray:
    """Paddle's tensor hue rotation in float HSV on an HWC RGB array in [0, 1]."""
    r, g, b = arr[..., 0], arr[..., 1], arr[..., 2]
    maxc, minc = arr.max(axis=-1), arr.min(axis=-1)
    delta = maxc - minc
    flat = delta == 0
    s = delta / np.where(flat, 1.0, maxc)
    d = np.where(flat, 1.0, delta)
    rc, gc, bc = (maxc - r) / d, (maxc - g) / d, (maxc - b) / d
    h = np.where(maxc == r, bc - gc, np.where(maxc == g, 2.0 + rc - bc, 4.0 + gc - rc)) / 6.0 + 1.0
    h = h - np.trunc(h) + hue_factor
    h = h - np.floor(h)
    i = np.floor(h * 6.0)
    f = h * 6.0 - i
    i = i.astype(np.int64) % 6
    p = np.clip(maxc * (1.0 - s), 0, 1)
    q = np.clip(maxc * (1.0 - s * f), 0, 1)
    t = np.clip(maxc * (1.0 - s * (1.0 - f)), 0, 1)
    v = maxc
    table = [(v, t, p), (q, v, p), (p, v, t), (p, q, v), (t, p, v), (v, p, q)]
    out = np.zeros(arr.shape[:-1] + (3,))
    for k, rgb in enumerate(table):
        out = np.where((i == k)[..., None], np.stack(rgb, axis=-1), out)
    return out


def adjust_hue(img: Any, hue_factor: float) -> Any:
    """Rotate hues by `hue_factor` of a full turn, in [-0.5, 0.5]; greyscale images are unchanged."""
    kind = _kind(img)
    if isinstance(hue_factor, bool) or not isinstance(hue_factor, numbers.Number):
        raise TypeError(f"adjust_hue: argument 'hue_factor' must be a number, got {type(hue_factor).__name__}")
    if not -0.5 <= hue_factor <= 0.5:
        raise ValueError(f"adjust_hue: hue_factor:{hue_factor} is not in [-0.5, 0.5].")
    if kind == "pil":
        if img.mode in ("L", "1", "I", "F"):
            return img
        shifted = _hue_shift_u8(np.asarray(img.convert("RGB")), hue_factor)
        return _PIL.fromarray(shifted, "RGB").convert(img.mode)
    if kind == "tensor":
        if _tensor_channels(img, "adjust_hue") == 1:
            return img

        def shift(arr: np.ndarray) -> np.ndarray:
            scale = 255.0 if arr.dtype == np.uint8 else 1.0
            out = _hue_shift_hsv(arr.astype(np.float64) / scale, float(hue_factor)) * scale
            return out.astype(arr.dtype)
        return _on_tensor_host(img, shift)
    if _channels(img) == 1:
        return img
    return _hue_shift_u8(img.astype(np.uint8), hue_factor).astype(img.dtype)


def _hue_shift_u8(rgb: np.ndarray, hue_factor: float) -> np.ndarray:
    """Pillow-path hue shift: the 8-bit hue channel moves by int(hue_factor * 255), wrapping."""
    hsv = _kernels.rgb_to_hsv_u8(rgb)
    hsv[..., 0] = ((hsv[..., 0].astype(np.int64) + int(hue_factor * 255)) % 256).astype(np.uint8)
    return _kernels.hsv_to_rgb_u8(hsv)


def to_grayscale(img: Any, num_output_channels: int = 1) -> Any:
    """The greyscale image with 1 or 3 (equal) channels."""
    kind = _kind(img)
    if num_output_channels not in (1, 3):
        raise ValueError(f"to_grayscale: num_output_channels should be either 1 or 3, got {num_output_channels!r}")
    if kind == "pil":
        gray = img.convert("L")
        return gray if num_output_channels == 1 else _PIL.merge("RGB", (gray, gray, gray))
    if kind == "tensor":
        _check_chw(img, "to_grayscale")

        def gray_hwc(arr: np.ndarray) -> np.ndarray:
            return np.repeat(_tensor_gray(arr), num_output_channels, axis=2).astype(arr.dtype)
        return _on_tensor_host(img, gray_hwc)
    gray = _gray_like(_hwc(img))[:, :, :1]
    return np.repeat(gray, num_output_channels, axis=2)


def normalize(img: Any, mean: Any, std: Any, data_format: str = "CHW", to_rgb: bool = False) -> Any:
    """(img - mean) / std per channel; `data_format` says where the channels are ('CHW' or 'HWC').
    `to_rgb` reverses the last axis first (BGR -> RGB for HWC arrays); tensors ignore it, as Paddle."""
    if str(data_format).upper() not in ("CHW", "HWC"):
        raise ValueError(f"normalize: argument 'data_format' should be CHW or HWC, got {data_format!r}")
    shape = (-1, 1, 1) if str(data_format).upper() == "CHW" else (1, 1, -1)
    if _is_tensor_image(img):
        m = _to_tensor(np.asarray(mean, dtype=np.float32).reshape(shape)).astype(img.dtype)
        s = _to_tensor(np.asarray(std, dtype=np.float32).reshape(shape)).astype(img.dtype)
        return (img - m) / s
    if _is_pil_image(img):
        img = np.asarray(img).astype(np.float32)
    if not isinstance(img, np.ndarray):
        raise TypeError(f"normalize: argument 'img' should be a Tensor, a numpy array or a PIL Image, "
                        f"got {type(img)}")
    m = np.float32(np.asarray(mean).reshape(shape))
    s = np.float32(np.asarray(std).reshape(shape))
    if to_rgb:
        img = img[..., ::-1]
    return (img - m) / s


def erase(img: Any, i: int, j: int, h: int, w: int, v: Any, inplace: bool = False) -> Any:
    """Set the box of `h` x `w` at (`i`, `j`) to `v` (a value, or an array/tensor broadcast into
    the box); `inplace=True` writes into `img` itself (arrays and tensors)."""
    kind = _kind(img)
    if kind == "tensor":
        _check_chw(img, "erase")
        out = img if inplace else img.clone()
        out[..., i:i + h, j:j + w] = v
        return out
    if kind == "pil":
        arr = np.array(img)
        arr[i:i + h, j:j + w, ...] = v
        return _pil_from(arr, img)
    out = img if inplace else img.copy()
    out[i:i + h, j:j + w, ...] = v
    return out


# ---------------------------------------------------------------- rotation
def _rotation_matrix(angle: float, cx: float, cy: float) -> list[float]:
    """The inverse map of a counter-clockwise rotation by `angle` degrees about (cx, cy):
    output pixel -> input coordinate (Pillow's convention)."""
    rad = -math.radians(angle)
    a, b = round(math.cos(rad), 15), round(math.sin(rad), 15)
    m = [a, b, 0.0, -b, a, 0.0]
    m[2] = m[0] * -cx + m[1] * -cy + cx
    m[5] = m[3] * -cx + m[4] * -cy + cy
    return m


def _expanded_size(m: list[float], w: int, h: int) -> tuple[int, int]:
    """Width and height of the box holding the image's corners mapped by `m` (Pillow maps them
    with the inverse rotation; the box has the same size, but its rounding follows these values)."""
    xs, ys = [], []
    for x, y in ((0, 0), (w, 0), (w, h), (0, h)):
        xs.append(m[0] * x + m[1] * y + m[2])
        ys.append(m[3] * x + m[4] * y + m[5])
    return math.ceil(max(xs)) - math.floor(min(xs)), math.ceil(max(ys)) - math.floor(min(ys))


def _rotate_array(arr: np.ndarray, angle: float, expand: bool, center: Any, fill: np.ndarray) -> np.ndarray:
    """Rotate an HWC array as Pillow's `Image.rotate` does with nearest sampling."""
    h, w = arr.shape[:2]
    angle = angle % 360.0
    if center is None:
        if angle == 0:
            return arr.copy()
        if angle == 180:
            return arr[::-1, ::-1].copy()
        if angle in (90, 270) and (expand or w == h):
            return np.ascontiguousarray(np.rot90(arr, 1 if angle == 90 else 3))
    cx, cy = (w / 2.0, h / 2.0) if center is None else (float(center[0]), float(center[1]))
    m = _rotation_matrix(angle, cx, cy)
    if expand:
        nw, nh = _expanded_size(m, w, h)
        m[2] += m[0] * -(nw - w) / 2.0 + m[1] * -(nh - h) / 2.0
        m[5] += m[3] * -(nw - w) / 2.0 + m[4] * -(nh - h) / 2.0
        w, h = nw, nh
    return _kernels.affine_nearest(arr, m, h, w, fill)


def _rotate_tensor_array(arr: np.ndarray, angle: float, expand: bool, center: Any, fill: np.ndarray) -> np.ndarray:
    """Rotate an HWC array as Paddle's tensor backend does: an affine grid in float32 (centred
    pixel coordinates), unnormalised as `grid_sample(align_corners=False)` does and rounded half
    to even. Float32 matters: at some angles pixels sit within float32 noise of a tie."""
    f32 = np.float32
    h, w = arr.shape[:2]
    rad = math.radians(-angle % 360)
    m = np.array([math.cos(rad), math.sin(rad), 0.0, -math.sin(rad), math.cos(rad), 0.0], f32).reshape(2, 3)
    if center is not None:
        rc = np.array([center[0] - w * 0.5, center[1] - h * 0.5], f32)
        m[:, 2] += m[:, 0] * -rc[0] + m[:, 1] * -rc[1] + rc
    ow, oh = w, h
    if expand:
        corners = np.array([[-0.5 * w, -0.5 * h, 1.0], [-0.5 * w, 0.5 * h, 1.0],
                            [0.5 * w, 0.5 * h, 1.0], [0.5 * w, -0.5 * h, 1.0]], f32)
        pos = corners @ m.T
        ow, oh = (int(v) for v in np.ceil(pos.max(axis=0)) - np.floor(pos.min(axis=0)))
    xs = np.linspace(-ow * 0.5 + 0.5, ow * 0.5 - 0.5, ow).astype(f32)[None, :]
    ys = np.linspace(-oh * 0.5 + 0.5, oh * 0.5 - 0.5, oh).astype(f32)[:, None]
    theta = (m.T / np.array([0.5 * w, 0.5 * h], f32)).astype(f32)  # maps to [-1, 1] grid units
    gx = xs * theta[0, 0] + ys * theta[1, 0] + theta[2, 0]
    gy = xs * theta[0, 1] + ys * theta[1, 1] + theta[2, 1]
    ix = np.rint((gx + f32(1)) * f32(w * 0.5) - f32(0.5))
    iy = np.rint((gy + f32(1)) * f32(h * 0.5) - f32(0.5))
    return _kernels.sample_nearest(arr, ix, iy, fill)


def rotate(img: Any, angle: float, interpolation: str = "nearest", expand: bool = False,
           center: Sequence[float] | None = None, fill: Any = 0) -> Any:
    """Rotate counter-clockwise by `angle` degrees about `center` (default: the image centre);
    `expand=True` grows the output to hold the whole image; uncovered pixels take `fill`.
    Arrays and tensors support 'nearest' interpolation only."""
    kind = _kind(img)
    if isinstance(angle, bool) or not isinstance(angle, numbers.Number):
        raise TypeError(f"rotate: argument 'angle' must be a number, got {type(angle).__name__}")
    if center is not None and (not isinstance(center, (list, tuple)) or len(center) != 2):
        raise TypeError(f"rotate: argument 'center' must be None or an (x, y) pair, got {center!r}")
    if kind == "pil":
        fill = tuple([fill] * 3) if isinstance(fill, int) else tuple(fill) if isinstance(fill, list) else fill
        return img.rotate(angle, _pil_resampling(interpolation), expand, tuple(center) if center else None,
                          fillcolor=fill)
    if interpolation != "nearest":
        raise NotImplementedError(f"rotate: interpolation {interpolation!r} is not supported for numpy and tensor "
                                  "images; use 'nearest'")
    if kind == "tensor":
        _check_chw(img, "rotate")
        return _on_tensor_host(img, lambda a: _rotate_tensor_array(
            a, float(angle), expand, center, _fill_value(fill, a.shape[2]).astype(a.dtype)))
    arr = _hwc(img)
    out = _rotate_array(arr, float(angle), expand, center, _fill_value(fill, arr.shape[2]).astype(arr.dtype))
    return out[:, :, 0] if img.ndim == 2 else out
