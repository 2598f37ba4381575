"""`paddle.vision.transforms`: composable image transforms.

Every transform is a `BaseTransform`: called on one image it returns one image; called on a
tuple, it transforms the items named by `keys` (default: only the first, 'image') and passes
the rest through, so `(image, label)` pairs flow through a `Compose`.

Random transforms draw from Python's `random` and NumPy's global `np.random`, in the same
calls and order as Paddle, so `random.seed(s); np.random.seed(s)` makes them repeat (and
gives Paddle's parameters). `paddle.seed` does not seed them, as in Paddle; the one exception
is `RandomErasing(value='random')` on tensors, whose noise comes from `paddle.normal`.
"""
from __future__ import annotations

import math
import numbers
import random
from typing import Any, Callable, Sequence

import numpy as np

from ...ops.random import normal as _normal
from ...tensor import Tensor, to_tensor as _to_tensor
from . import functional as F

__all__ = ["BaseTransform", "Compose", "ToTensor", "Resize", "RandomResizedCrop", "CenterCrop",
           "RandomHorizontalFlip", "RandomVerticalFlip", "Transpose", "Normalize", "BrightnessTransform",
           "ContrastTransform", "SaturationTransform", "HueTransform", "ColorJitter", "RandomCrop", "Pad",
           "RandomRotation", "Grayscale", "RandomErasing"]


def _image_size(img: Any) -> tuple[int, int]:
    """(width, height) of an image of any kind."""
    h, w = F._image_hw(img)
    return w, h


def _check_prob(prob: Any, cls: str) -> float:
    if isinstance(prob, bool) or not isinstance(prob, numbers.Number) or not 0 <= prob <= 1:
        raise ValueError(f"{cls}: argument 'prob' must be a probability between 0 and 1, got {prob!r}")
    return float(prob)


def _check_range(value: Any, arg: str, cls: str, low: float = 0.0) -> tuple[float, float]:
    """A (min, max) pair with low <= min <= max."""
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        raise TypeError(f"{cls}: argument '{arg}' should be a (min, max) tuple or list, got {value!r}")
    if not low <= value[0] <= value[1]:
        raise ValueError(f"{cls}: argument '{arg}' should be of kind (min, max) with min >= {low}, got {value!r}")
    return float(value[0]), float(value[1])


def _jitter_range(value: Any, name: str, center: float = 1.0, bound: tuple[float, float] = (0, float("inf")),
                  clip_first_on_zero: bool = True) -> list[float] | None:
    """The factor range of a colour jitter: a number v gives [center - v, center + v]; None
    means the transform leaves images unchanged."""
    if isinstance(value, numbers.Number) and not isinstance(value, bool):
        if value < 0:
            raise ValueError(f"If {name} is a single number, it must be non negative (argument 'value', got {value}).")
        span = [center - value, center + value]
        if clip_first_on_zero:
            span[0] = max(span[0], 0)
    elif isinstance(value, (tuple, list)) and len(value) == 2:
        if not bound[0] <= value[0] <= value[1] <= bound[1]:
            raise ValueError(f"{name} values should be between {bound} (argument 'value', got {value})")
        span = [float(value[0]), float(value[1])]
    else:
        raise TypeError(f"{name} should be a single number or a list/tuple with length 2 (argument 'value', "
                        f"got {value!r}).")
    return None if span[0] == span[1] == center else span


class Compose:
    """Apply transforms in order; the output of one is the input of the next."""

    def __init__(self, transforms: Sequence[Callable[[Any], Any]]) -> None:
        if not isinstance(transforms, (list, tuple)):
            raise TypeError(f"Compose: argument 'transforms' must be a list or tuple of transforms, "
                            f"got {type(transforms).__name__}")
        self.transforms = transforms

    def __call__(self, data: Any) -> Any:
        for t in self.transforms:
            data = t(data)
        return data

    def __repr__(self) -> str:
        inner = "".join(f"\n    {t}" for t in self.transforms)
        return f"{type(self).__name__}({inner}\n)"


class BaseTransform:
    """Base of the transforms: `keys` names what each item of a tuple input is ('image',
    'coords', 'boxes', 'mask'); item k goes to `_apply_<keys[k]>`, items past `keys` pass
    through. Subclasses define `_apply_image` and may draw shared random parameters in
    `_get_params(inputs)` (stored in `self.params` for every item of one call)."""

    def __init__(self, keys: Sequence[str] | None = None) -> None:
        if keys is None:
            keys = ("image",)
        elif not isinstance(keys, Sequence) or isinstance(keys, str):
            raise ValueError(f"keys should be a sequence, but got keys={keys!r}")
        for k in keys:
            if self._get_apply(k) is None:
                raise NotImplementedError(f"{k} is unsupported data structure (argument 'keys')")
        self.keys = keys
        self.params = None

    def _get_params(self, inputs: tuple) -> Any:
        return None

    def __call__(self, inputs: Any) -> Any:
        if not isinstance(inputs, tuple):
            inputs = (inputs,)
        self.params = self._get_params(inputs)
        n = min(len(inputs), len(self.keys))
        outputs = [self._get_apply(self.keys[i])(inputs[i]) for i in range(n)]
        outputs.extend(inputs[n:])
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def _get_apply(self, key: str) -> Callable[[Any], Any] | None:
        return getattr(self, f"_apply_{key}", None)

    def _apply_image(self, image: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} does not transform images")

    def _apply_boxes(self, boxes: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} does not transform boxes")

    def _apply_mask(self, mask: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} does not transform masks")

    def _apply_coords(self, coords: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} does not transform coords")

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class ToTensor(BaseTransform):
    """HWC image -> Tensor in `data_format` ('CHW' or 'HWC'); uint8 is scaled to [0, 1]."""

    def __init__(self, data_format: str = "CHW", keys: Sequence[str] | None = None) -> None:
        super().__init__(keys)
        if data_format not in ("CHW", "HWC"):
            raise ValueError(f"ToTensor: argument 'data_format' should be CHW or HWC, got {data_format!r}")
        self.data_format = data_format

    def _apply_image(self, img: Any) -> Tensor:
        return F.to_tensor(img, self.data_format)


def _check_size(size: Any, cls: str) -> None:
    if isinstance(size, bool) or not (isinstance(size, int) or (isinstance(size, (list, tuple)) and len(size) == 2)):
        raise TypeError(f"{cls}: argument 'size' must be an int or a (height, width) pair, got {size!r}")


class Resize(BaseTransform):
    """Resize to `size` = (height, width), or the shorter side to an int `size`."""

    def __init__(self, size: int | Sequence[int], interpolation: str = "bilinear",
                 keys: Sequence[str] | None = None) -> None:
        super().__init__(keys)
        _check_size(size, "Resize")
        self.size = size
        self.interpolation = interpolation

    def _apply_image(self, img: Any) -> Any:
        return F.resize(img, self.size, self.interpolation)


class RandomResizedCrop(BaseTransform):
    """Crop a random box (area fraction in `scale`, aspect ratio in `ratio`, log-uniform) and
    resize it to `size`; after 10 failed draws, the centred box of the clamped ratio."""

    def __init__(self, size: int | Sequence[int], scale: Sequence[float] = (0.08, 1.0),
                 ratio: Sequence[float] = (3.0 / 4, 4.0 / 3), interpolation: str = "bilinear",
                 keys: Sequence[str] | None = None) -> None:
        super().__init__(keys)
        _check_size(size, "RandomResizedCrop")
        self.size = (size, size) if isinstance(size, int) else tuple(size)
        self.scale = _check_range(scale, "scale", "RandomResizedCrop")
        self.ratio = _check_range(ratio, "ratio", "RandomResizedCrop", low=1e-12)
        self.interpolation = interpolation

    def _get_param(self, image: Any, attempts: int = 10) -> tuple[int, int, int, int]:
        width, height = _image_size(image)
        area = height * width
        log_ratio = (math.log(self.ratio[0]), math.log(self.ratio[1]))
        for _ in range(attempts):
            target_area = np.random.uniform(*self.scale) * area
            aspect_ratio = math.exp(np.random.uniform(*log_ratio))
            w = int(round(math.sqrt(target_area * aspect_ratio)))
            h = int(round(math.sqrt(target_area / aspect_ratio)))
            if 0 < w <= width and 0 < h <= height:
                return random.randint(0, height - h), random.randint(0, width - w), h, w
        in_ratio = width / height
        if in_ratio < min(self.ratio):
            w, h = width, int(round(width / min(self.ratio)))
        elif in_ratio > max(self.ratio):
            h, w = height, int(round(height * max(self.ratio)))
        else:
            w, h = width, height
        return (height - h) // 2, (width - w) // 2, h, w

    def _apply_image(self, img: Any) -> Any:
        i, j, h, w = self._get_param(img)
        return F.resize(F.crop(img, i, j, h, w), self.size, self.interpolation)


class CenterCrop(BaseTransform):
    """Crop the centred box of `size` = (height, width) or an int for a square."""

    def __init__(self, size: int | Sequence[int], keys: Sequence[str] | None = None) -> None:
        super().__init__(keys)
        _check_size(size, "CenterCrop")
        self.size = (int(size), int(size)) if isinstance(size, numbers.Number) else tuple(size)

    def _apply_image(self, img: Any) -> Any:
        return F.center_crop(img, self.size)


class RandomHorizontalFlip(BaseTransform):
    """Mirror left-right with probability `prob`."""

    def __init__(self, prob: float = 0.5, keys: Sequence[str] | None = None) -> None:
        super().__init__(keys)
        self.prob = _check_prob(prob, "RandomHorizontalFlip")

    def _apply_image(self, img: Any) -> Any:
        return F.hflip(img) if random.random() < self.prob else img


class RandomVerticalFlip(BaseTransform):
    """Mirror top-bottom with probability `prob`."""

    def __init__(self, prob: float = 0.5, keys: Sequence[str] | None = None) -> None:
        super().__init__(keys)
        self.prob = _check_prob(prob, "RandomVerticalFlip")

    def _apply_image(self, img: Any) -> Any:
        return F.vflip(img) if random.random() < self.prob else img


class Normalize(BaseTransform):
    """(img - mean) / std per channel; a number `mean`/`std` is used for three channels."""

    def __init__(self, mean: float | Sequence[float] = 0.0, std: float | Sequence[float] = 1.0,
                 data_format: str = "CHW", to_rgb: bool = False, keys: Sequence[str] | None = None) -> None:
        super().__init__(keys)
        self.mean = [mean] * 3 if isinstance(mean, numbers.Number) else mean
        self.std = [std] * 3 if isinstance(std, numbers.Number) else std
        if str(data_format).upper() not in ("CHW", "HWC"):
            raise ValueError(f"Normalize: argument 'data_format' should be CHW or HWC, got {data_format!r}")
        self.data_format = data_format
        self.to_rgb = to_rgb

    def _apply_image(self, img: Any) -> Any:
        return F.normalize(img, self.mean, self.std, self.data_format, self.to_rgb)


class Transpose(BaseTransform):
    """Permute the axes by `order` (default HWC -> CHW); an HW array gets a channel axis first."""

    def __init__(self, order: Sequence[int] = (2, 0, 1), keys: Sequence[str] | None = None) -> None:
        super().__init__(keys)
        self.order = order

    def _apply_image(self, img: Any) -> Any:
        if isinstance(img, Tensor):
            return img.transpose(list(self.order))
        img = np.asarray(img)
        return F._hwc(img).transpose(self.order)


class BrightnessTransform(BaseTransform):
    """Brightness factor uniform in [max(0, 1 - value), 1 + value] (or the given range)."""

    def __init__(self, value: float | Sequence[float], keys: Sequence[str] | None = None) -> None:
        super().__init__(keys)
        self.value = _jitter_range(value, "brightness")

    def _apply_image(self, img: Any) -> Any:
        if self.value is None:
            return img
        return F.adjust_brightness(img, random.uniform(*self.value))


class ContrastTransform(BaseTransform):
    """Contrast factor uniform in [max(0, 1 - value), 1 + value] (or the given range)."""

    def __init__(self, value: float | Sequence[float], keys: Sequence[str] | None = None) -> None:
        super().__init__(keys)
        self.value = _jitter_range(value, "contrast")

    def _apply_image(self, img: Any) -> Any:
        if self.value is None:
            return img
        return F.adjust_contrast(img, random.uniform(*self.value))


class SaturationTransform(BaseTransform):
    """Saturation factor uniform in [max(0, 1 - value), 1 + value] (or the given range)."""

    def __init__(self, value: float | Sequence[float], keys: Sequence[str] | None = None) -> None:
        super().__init__(keys)
        self.value = _jitter_range(value, "saturation")

    def _apply_image(self, img: Any) -> Any:
        if self.value is None:
            return img
        return F.adjust_saturation(img, random.uniform(*self.value))


class HueTransform(BaseTransform):
    """Hue shift uniform in [-value, value], within [-0.5, 0.5]."""

    def __init__(self, value: float | Sequence[float], keys: Sequence[str] | None = None) -> None:
        super().__init__(keys)
        self.value = _jitter_range(value, "hue", center=0, bound=(-0.5, 0.5), clip_first_on_zero=False)

    def _apply_image(self, img: Any) -> Any:
        if self.value is None:
            return img
        return F.adjust_hue(img, random.uniform(*self.value))


class ColorJitter(BaseTransform):
    """Brightness, contrast, saturation and hue jitters, applied in a random order per image."""

    def __init__(self, brightness: float | Sequence[float] = 0, contrast: float | Sequence[float] = 0,
                 saturation: float | Sequence[float] = 0, hue: float | Sequence[float] = 0,
                 keys: Sequence[str] | None = None) -> None:
        super().__init__(keys)
        # a None jitter is left out, so the random order is drawn over the others (as Paddle)
        pairs = ((BrightnessTransform, brightness), (ContrastTransform, contrast),
                 (SaturationTransform, saturation), (HueTransform, hue))
        self._jitters = [cls(value, keys) for cls, value in pairs if value is not None]
        self.brightness, self.contrast, self.saturation, self.hue = brightness, contrast, saturation, hue

    def _apply_image(self, img: Any) -> Any:
        order = list(self._jitters)
        random.shuffle(order)
        for t in order:
            img = t._apply_image(img)
        return img


class RandomCrop(BaseTransform):
    """Crop a random box of `size`, after optional `padding`; `pad_if_needed` pads an image
    smaller than `size` first (with `fill` / `padding_mode`, as `pad`)."""

    def __init__(self, size: int | Sequence[int], padding: int | Sequence[int] | None = None,
                 pad_if_needed: bool = False, fill: Any = 0, padding_mode: str = "constant",
                 keys: Sequence[str] | None = None) -> None:
        super().__init__(keys)
        _check_size(size, "RandomCrop")
        self.size = (int(size), int(size)) if isinstance(size, numbers.Number) else tuple(size)
        if padding is not None:
            F._check_pad_args(padding, fill, padding_mode)
        else:
            F._check_pad_args(0, fill, padding_mode)
        self.padding = padding
        self.pad_if_needed = pad_if_needed
        self.fill = fill
        self.padding_mode = padding_mode

    def _get_param(self, img: Any, output_size: tuple[int, int]) -> tuple[int, int, int, int]:
        w, h = _image_size(img)
        th, tw = output_size
        if w == tw and h == th:
            return 0, 0, h, w
        if h < th or w < tw:
            raise ValueError(f"RandomCrop: the image ({h}x{w}) is smaller than the crop size {th}x{tw}; "
                             "set pad_if_needed=True or padding")
        return random.randint(0, h - th), random.randint(0, w - tw), th, tw

    def _apply_image(self, img: Any) -> Any:
        if self.padding is not None:
            img = F.pad(img, self.padding, self.fill, self.padding_mode)
        w, h = _image_size(img)
        if self.pad_if_needed and w < self.size[1]:
            img = F.pad(img, (self.size[1] - w, 0), self.fill, self.padding_mode)
        if self.pad_if_needed and h < self.size[0]:
            img = F.pad(img, (0, self.size[0] - h), self.fill, self.padding_mode)
        return F.crop(img, *self._get_param(img, self.size))


class Pad(BaseTransform):
    """Pad every border (see `functional.pad` for `padding`, `fill` and `padding_mode`)."""

    def __init__(self, padding: int | Sequence[int], fill: Any = 0, padding_mode: str = "constant",
                 keys: Sequence[str] | None = None) -> None:
        F._check_pad_args(padding, fill, padding_mode)
        super().__init__(keys)
        self.padding = tuple(padding) if isinstance(padding, list) else padding
        self.fill = tuple(fill) if isinstance(fill, list) else fill
        self.padding_mode = padding_mode

    def _apply_image(self, img: Any) -> Any:
        return F.pad(img, self.padding, self.fill, self.padding_mode)


class RandomRotation(BaseTransform):
    """Rotate by an angle uniform in `degrees` ((-d, d) for a number d), counter-clockwise."""

    def __init__(self, degrees: float | Sequence[float], interpolation: str = "nearest", expand: bool = False,
                 center: Sequence[float] | None = None, fill: Any = 0, keys: Sequence[str] | None = None) -> None:
        if isinstance(degrees, numbers.Number):
            if degrees < 0:
                raise ValueError(f"If degrees is a single number, it must be positive (argument 'degrees', "
                                 f"got {degrees}).")
            self.degrees = (-degrees, degrees)
        else:
            if not isinstance(degrees, (list, tuple)) or len(degrees) != 2:
                raise ValueError(f"If degrees is a sequence, it must be of len 2 (argument 'degrees', "
                                 f"got {degrees!r}).")
            self.degrees = tuple(degrees)
        super().__init__(keys)
        self.interpolation = interpolation
        self.expand = expand
        self.center = center
        self.fill = fill

    def _apply_image(self, img: Any) -> Any:
        angle = random.uniform(self.degrees[0], self.degrees[1])
        return F.rotate(img, angle, self.interpolation, self.expand, self.center, self.fill)


class Grayscale(BaseTransform):
    """Convert to greyscale with 1 or 3 channels."""

    def __init__(self, num_output_channels: int = 1, keys: Sequence[str] | None = None) -> None:
        super().__init__(keys)
        if num_output_channels not in (1, 3):
            raise ValueError(f"Grayscale: argument 'num_output_channels' should be either 1 or 3, "
                             f"got {num_output_channels!r}")
        self.num_output_channels = num_output_channels

    def _apply_image(self, img: Any) -> Any:
        return F.to_grayscale(img, self.num_output_channels)


class RandomErasing(BaseTransform):
    """With probability `prob`, set a random box (area fraction in `scale`, aspect ratio in
    `ratio`) to `value`: a number, one value per channel, or 'random' for normal noise."""

    def __init__(self, prob: float = 0.5, scale: Sequence[float] = (0.02, 0.33), ratio: Sequence[float] = (0.3, 3.3),
                 value: float | Sequence[float] | str = 0, inplace: bool = False,
                 keys: Sequence[str] | None = None) -> None:
        super().__init__(keys)
        self.scale = _check_range(scale, "scale", "RandomErasing")
        if self.scale[1] > 1:
            raise ValueError(f"RandomErasing: argument 'scale' should be in range [0, 1], got {scale!r}")
        self.ratio = _check_range(ratio, "ratio", "RandomErasing")
        self.prob = _check_prob(prob, "RandomErasing")
        if isinstance(value, str) and value != "random":
            raise ValueError(f"RandomErasing: argument 'value' must be 'random' when it is a str, got {value!r}")
        if not isinstance(value, (numbers.Number, str, tuple, list)):
            raise TypeError(f"RandomErasing: argument 'value' should be a number, tuple, list or str, "
                            f"got {type(value).__name__}")
        if isinstance(value, (tuple, list)) and len(value) not in (1, 3):
            raise ValueError("RandomErasing: Value should be a single number or a sequence with length equals to "
                             f"image's channel (argument 'value', got {value!r}).")
        self.value = value
        self.inplace = inplace

    def _get_param(self, img: Any, value: list | None) -> tuple[int, int, int, int, Any]:
        is_tensor = isinstance(img, Tensor)
        if is_tensor:
            c, h, w = img.shape[-3:]
        else:
            h, w, c = F._hwc(np.asarray(img)).shape
        log_ratio = np.log(self.ratio)
        for _ in range(10):
            erase_area = np.random.uniform(*self.scale) * h * w
            aspect_ratio = np.exp(np.random.uniform(*log_ratio))
            eh = int(round(np.sqrt(erase_area * aspect_ratio)))
            ew = int(round(np.sqrt(erase_area / aspect_ratio)))
            if eh >= h or ew >= w:
                continue
            if is_tensor:
                v = (_normal(shape=[c, eh, ew]).astype(img.dtype) if value is None
                     else _to_tensor(np.asarray(value)[:, None, None]).astype(img.dtype))
            else:
                v = np.random.normal(size=[eh, ew, c]) * 255 if value is None else np.array(value)[None, None, :]
            return np.random.randint(0, h - eh + 1), np.random.randint(0, w - ew + 1), eh, ew, v
        return 0, 0, h, w, img

    def _apply_image(self, img: Any) -> Any:
        if random.random() >= self.prob:
            return img
        value = [self.value] if isinstance(self.value, numbers.Number) else (
            None if isinstance(self.value, str) else list(self.value))
        top, left, eh, ew, v = self._get_param(img, value)
        return F.erase(img, top, left, eh, ew, v, self.inplace)
