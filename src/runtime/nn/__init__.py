"""`paddle.nn`: layers, functional API, initialisers, gradient clipping."""
from . import functional, initializer  # noqa: F401
from .clip import *  # noqa: F401,F403
from .layer import *  # noqa: F401,F403
from . import utils  # noqa: F401,E402 - after the layers it wraps
