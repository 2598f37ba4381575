"""`paddle.io`: datasets, samplers and the DataLoader."""
from .dataloader import *  # noqa: F401,F403
from .dataloader import __all__ as _loader_all
from .dataset import *  # noqa: F401,F403
from .dataset import __all__ as _dataset_all
from .sampler import *  # noqa: F401,F403
from .sampler import __all__ as _sampler_all

__all__ = [*_dataset_all, *_sampler_all, *_loader_all]
