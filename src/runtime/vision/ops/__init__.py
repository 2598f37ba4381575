"""`paddle.vision.ops`: the vision models' reusable blocks and the detection ops (nms, RoI poolings,
box coding, YOLO decoding, SSD priors, deformable convolution)."""
from .blocks import *  # noqa: F401,F403
from .deform import *  # noqa: F401,F403
from .detection import *  # noqa: F401,F403
from . import blocks, deform, detection

__all__ = [*blocks.__all__, *deform.__all__, *detection.__all__]
