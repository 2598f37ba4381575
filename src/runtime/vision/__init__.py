"""`paddle.vision`: ready-made image models (`models`), their building blocks (`ops`), image
`transforms` and `datasets`."""
from . import datasets, models, ops, transforms  # noqa: F401
