"""`paddle.linalg`: matrix functions (the ops live in runtime.ops.linalg)."""
from .ops.linalg import (cholesky, det, inv, matmul, matrix_power, multi_dot, norm, qr, solve,  # noqa: F401
                         svd)

__all__ = ["cholesky", "det", "inv", "matmul", "matrix_power", "multi_dot", "norm", "qr", "solve", "svd"]
