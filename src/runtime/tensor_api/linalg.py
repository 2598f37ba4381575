"""`paddle.tensor.linalg`: the runtime functions Paddle's module of that name holds (aliases)."""
from ..ops.creation import full
from ..ops.linalg import bmm, cholesky, cross, dist, dot, matmul, mv, norm, t
from ..ops.math import cast
from ..ops.shape import broadcast_shape, transpose, transpose_

__all__ = ["bmm", "broadcast_shape", "cast", "cholesky", "cross", "dist", "dot", "full", "matmul",
           "mv", "norm", "t", "transpose", "transpose_"]
