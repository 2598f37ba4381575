"""`clip_grad_norm_` / `clip_grad_value_`: clip the gradients already accumulated on parameters (Paddle's
`paddle.nn.utils` forms; the optimizer's `grad_clip` classes live in nn/clip.py)."""
from __future__ import annotations

import math
from collections.abc import Iterable

from ...ops.grad_mode import no_grad
from ...ops.linalg import norm
from ...ops.shape import stack
from ...tensor import Tensor, to_tensor

__all__ = ["clip_grad_norm_", "clip_grad_value_"]


def _as_list(parameters: Iterable[Tensor] | Tensor) -> list[Tensor]:
    return [parameters] if isinstance(parameters, Tensor) else list(parameters)


@no_grad()
def clip_grad_norm_(parameters: Iterable[Tensor] | Tensor, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False) -> Tensor:
    """Scale every gradient by min(1, max_norm / (total_norm + 1e-6)); returns the total norm (the norm of
    the per-gradient norms; inf: the largest |g|)."""
    parameters = _as_list(parameters)
    if norm_type not in (math.inf, 0, 1, 2):
        raise ValueError(f"norm_type only support {[math.inf, 0, 1, 2]}")
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return to_tensor(0.0)
    norm_type = float(norm_type)
    if norm_type == math.inf:
        total = stack([g.abs().max() for g in grads]).max()
    else:
        total = norm(stack([norm(g.reshape([-1]), norm_type) for g in grads]), norm_type)
    if error_if_nonfinite and not math.isfinite(float(total)):
        raise RuntimeError(f"The total norm of {norm_type} order of the gradients from `parameters` is non-finite, "
                           "so it cannot be clipped. In any case, disable this error and scale the gradient by "
                           "non-finite norm, set `error_if_nonfinite=False`")
    coef = (float(max_norm) / (total + 1e-6)).clip(max=1.0)
    for p in parameters:
        if p.grad is not None:
            p.grad = p.grad * coef.astype(p.grad.dtype)
    return total


@no_grad()
def clip_grad_value_(parameters: Iterable[Tensor] | Tensor, clip_value: float) -> None:
    """Clip every gradient elementwise to [-clip_value, clip_value]."""
    clip_value = float(clip_value)
    for p in _as_list(parameters):
        if p.grad is not None:
            p.grad = p.grad.clip(min=-clip_value, max=clip_value)
