"""`paddle.tensor.math`: the runtime functions Paddle's module of that name holds (aliases)."""
from ..ops.indexing import take
from ..ops.linalg import inner, inverse, mm, outer
from ..ops.math import (abs, acos, add, add_n, asin, atan, cast, ceil, clip, cos, cosh, divide, erf, exp,
    expm1, floor, floor_divide, floor_mod, fmax, fmin, increment, isfinite, isinf, isnan, lerp, log, log10,
    log1p, log2, maximum, minimum, mod, multiply, neg, pow, reciprocal, remainder, round, rsqrt, scale,
    sigmoid, sign, sin, sinh, sqrt, square, subtract, tan, tanh, trunc)
from ..ops.reduction import (all, amax, amin, any, count_nonzero, cumprod, cumsum, logsumexp, max, min,
    nanmean, nansum, prod, sum)
from ..ops.shape import broadcast_shape

__all__ = ["abs", "acos", "add", "add_n", "all", "amax", "amin", "any", "asin", "atan", "broadcast_shape",
           "cast", "ceil", "clip", "cos", "cosh", "count_nonzero", "cumprod", "cumsum", "divide", "erf",
           "exp", "expm1", "floor", "floor_divide", "floor_mod", "fmax", "fmin", "increment", "inner",
           "inverse", "isfinite", "isinf", "isnan", "lerp", "log", "log10", "log1p", "log2", "logsumexp",
           "max", "maximum", "min", "minimum", "mm", "mod", "multiply", "nanmean", "nansum", "neg", "outer",
           "pow", "prod", "reciprocal", "remainder", "round", "rsqrt", "scale", "sigmoid", "sign", "sin",
           "sinh", "sqrt", "square", "subtract", "sum", "take", "tan", "tanh", "trunc"]
