"""`kl_divergence(p, q)` dispatched on the pair of classes, and `register_kl` to add pairs.

Dispatch follows Paddle's: among the registered (P, Q) with p an instance of P and q of Q, the most
specific pair wins; an unregistered pair raises NotImplementedError.
"""
from __future__ import annotations

import functools
import warnings
from typing import Callable, TypeVar

from ..ops.special import digamma, lgamma
from ..tensor import Tensor
from .bernoulli import Bernoulli, ContinuousBernoulli
from .categorical import Categorical
from .cauchy import Cauchy
from .discrete import Binomial, Geometric, Poisson
from .distribution import Distribution
from .exponential import Exponential, Laplace
from .gamma import Beta, Dirichlet, Gamma
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .transformed_distribution import LogNormal
from .uniform import Uniform

__all__ = ["register_kl", "kl_divergence"]

_T = TypeVar("_T")
_REGISTER_TABLE: dict[tuple[type, type], Callable[[Distribution, Distribution], Tensor]] = {}


def kl_divergence(p: Distribution, q: Distribution) -> Tensor:
    """KL(p || q) by the function registered for their classes."""
    return _dispatch(type(p), type(q))(p, q)


def register_kl(cls_p: type[Distribution], cls_q: type[Distribution]) -> Callable[[_T], _T]:
    """Decorator registering `f(p, q)` as the KL divergence of instances of cls_p and cls_q."""
    if not (isinstance(cls_p, type) and isinstance(cls_q, type) and issubclass(cls_p, Distribution)
            and issubclass(cls_q, Distribution)):
        raise TypeError("cls_p and cls_q must be subclass of Distribution")

    def decorator(f: _T) -> _T:
        _REGISTER_TABLE[cls_p, cls_q] = f
        return f
    return decorator


def _dispatch(cls_p: type, cls_q: type) -> Callable:
    matches = [(sp, sq) for sp, sq in _REGISTER_TABLE if issubclass(cls_p, sp) and issubclass(cls_q, sq)]
    if not matches:
        raise NotImplementedError(f"no KL divergence is registered for ({cls_p.__name__}, {cls_q.__name__})")
    left_p, left_q = min(_Compare(*m) for m in matches).classes
    right_q, right_p = min(_Compare(*reversed(m)) for m in matches).classes
    if _REGISTER_TABLE[left_p, left_q] is not _REGISTER_TABLE[right_p, right_q]:
        warnings.warn(f"Ambiguous kl_divergence({cls_p.__name__}, {cls_q.__name__}). Please "
                      f"register_kl({left_p.__name__}, {right_q.__name__})", RuntimeWarning, stacklevel=3)
    return _REGISTER_TABLE[left_p, left_q]


@functools.total_ordering
class _Compare:
    """Orders class pairs so that the most derived (most specific) pair is the smallest."""

    def __init__(self, *classes: type) -> None:
        self.classes = classes

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Compare) and self.classes == other.classes

    def __le__(self, other: _Compare) -> bool:
        for x, y in zip(self.classes, other.classes):
            if not issubclass(x, y):
                return False
            if x is not y:
                break
        return True


def _by_method(p: Distribution, q: Distribution) -> Tensor:
    return p.kl_divergence(q)


for _cls in (Bernoulli, Categorical, Normal, Uniform, Laplace, Exponential, Gamma, LogNormal, Cauchy, Poisson,
             Binomial, Geometric, MultivariateNormal, ContinuousBernoulli):
    register_kl(_cls, _cls)(_by_method)


@register_kl(Beta, Beta)
def _kl_beta_beta(p: Beta, q: Beta) -> Tensor:
    pa, pb, qa, qb = p.alpha, p.beta, q.alpha, q.beta
    return (lgamma(qa) + lgamma(qb) + lgamma(pa + pb) - (lgamma(pa) + lgamma(pb) + lgamma(qa + qb))
            + (pa - qa) * digamma(pa) + (pb - qb) * digamma(pb) + (qa + qb - (pa + pb)) * digamma(pa + pb))


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p: Dirichlet, q: Dirichlet) -> Tensor:
    pc, qc = p.concentration, q.concentration
    p0 = pc.sum(-1)
    return (lgamma(p0) - lgamma(qc.sum(-1)) - (lgamma(pc) - lgamma(qc)).sum(-1)
            + ((pc - qc) * (digamma(pc) - digamma(p0).unsqueeze(-1))).sum(-1))
