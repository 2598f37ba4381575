"""paddle.utils: the helpers Paddle model code imports (`download`, `try_import`, `deprecated`).

Nothing here downloads: `download` finds files already placed in the weights directory."""
from . import download
from .deprecated import deprecated
from .lazy_import import try_import

__all__ = ["deprecated", "download", "try_import"]
