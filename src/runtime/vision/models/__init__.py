"""`paddle.vision.models`: image classification networks with Paddle's constructors and state_dict
layout, so `model.set_state_dict(paddle.load(checkpoint))` accepts Paddle's published weights."""
from . import (alexnet, densenet, googlenet, inceptionv3, lenet, mobilenetv1, mobilenetv2, mobilenetv3, resnet,
               shufflenetv2, squeezenet, vgg)
# before the star imports: afterwards `alexnet` and `googlenet` name the constructors, not the modules
__all__ = [name for module in (alexnet, densenet, googlenet, inceptionv3, lenet, mobilenetv1, mobilenetv2, mobilenetv3,
                               resnet, shufflenetv2, squeezenet, vgg) for name in module.__all__]

from .alexnet import *  # noqa: F401,F403
from .densenet import *  # noqa: F401,F403
from .googlenet import *  # noqa: F401,F403
from .inceptionv3 import *  # noqa: F401,F403
from .lenet import *  # noqa: F401,F403
from .mobilenetv1 import *  # noqa: F401,F403
from .mobilenetv2 import *  # noqa: F401,F403
from .mobilenetv3 import *  # noqa: F401,F403
from .resnet import *  # noqa: F401,F403
from .shufflenetv2 import *  # noqa: F401,F403
from .squeezenet import *  # noqa: F401,F403
from .vgg import *  # noqa: F401,F403
