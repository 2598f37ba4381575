"""Random ops (flagged random): rand, randn, randint, uniform, normal, randperm, bernoulli, multinomial."""
from __future__ import annotations

__all__: list[str] = []
