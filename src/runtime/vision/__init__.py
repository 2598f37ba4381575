"""`paddle.vision`: image transforms and datasets."""
from . import datasets, transforms  # noqa: F401
