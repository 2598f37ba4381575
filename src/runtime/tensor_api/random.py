"""`paddle.tensor.random`: the runtime functions Paddle's module of that name holds (aliases)."""
from ..ops.random import (bernoulli, multinomial, normal, poisson, rand, randint, randint_like, randn,
    randperm, standard_normal, uniform)

__all__ = ["bernoulli", "multinomial", "normal", "poisson", "rand", "randint", "randint_like", "randn",
           "randperm", "standard_normal", "uniform"]
