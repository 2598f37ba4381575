"""`paddle.nn.functional`: the functional forms of layers, each one op (or a few) from `runtime.ops`."""
from ...ops.activation import *  # noqa: F401,F403
from ...ops.common import *  # noqa: F401,F403
from ...ops.conv import *  # noqa: F401,F403
from ...ops.interpolate import *  # noqa: F401,F403
from ...ops.loss import *  # noqa: F401,F403
from ...ops.math import sigmoid, tanh  # noqa: F401
from ...ops.norm import *  # noqa: F401,F403
from ...ops.padding import *  # noqa: F401,F403
from ...ops.pool import *  # noqa: F401,F403
from ...ops.sampling import *  # noqa: F401,F403
from ...ops.shuffle import *  # noqa: F401,F403
from .attention import scaled_dot_product_attention  # noqa: F401
from .extension import sequence_mask  # noqa: F401
