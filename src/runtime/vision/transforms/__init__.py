"""`paddle.vision.transforms`: image transforms (classes) and `functional` (as F)."""
from . import functional  # noqa: F401
from .functional import (adjust_brightness, adjust_contrast, adjust_hue, adjust_saturation, center_crop,  # noqa: F401
                         crop, erase, hflip, normalize, pad, resize, rotate, to_grayscale, to_tensor, vflip)
from .functional import __all__ as _functional_all
from .transforms import *  # noqa: F401,F403
from .transforms import __all__ as _transforms_all

__all__ = [*_transforms_all, *_functional_all]
