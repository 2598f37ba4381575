"""Layers (`paddle.nn.Layer` and its subclasses)."""
from . import activation, common, container, conv, layers, loss, norm, pooling, sampling, transformer, vision
from . import rnn, rnn_cells
from . import distance
from .activation import *  # noqa: F401,F403
from .common import *  # noqa: F401,F403
from .container import *  # noqa: F401,F403
from .conv import *  # noqa: F401,F403
from .layers import Layer
from .loss import *  # noqa: F401,F403
from .norm import *  # noqa: F401,F403
from .pooling import *  # noqa: F401,F403
from .sampling import *  # noqa: F401,F403
from .rnn import *  # noqa: F401,F403
from .rnn_cells import *  # noqa: F401,F403
from .transformer import *  # noqa: F401,F403
from .vision import *  # noqa: F401,F403
from .distance import *  # noqa: F401,F403

__all__ = (["Layer"] + activation.__all__ + common.__all__ + container.__all__ + conv.__all__ + loss.__all__
           + norm.__all__ + pooling.__all__ + sampling.__all__ + transformer.__all__ + vision.__all__
           + rnn_cells.__all__
           + rnn.__all__
           + distance.__all__)
