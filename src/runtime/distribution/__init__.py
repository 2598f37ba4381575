"""`paddle.distribution`: probability distributions (sampling, log-probabilities, entropies, KL divergences)
with Paddle 3's classes, argument conventions and formulas, composed of ordinary differentiable ops."""
from .bernoulli import Bernoulli, ContinuousBernoulli
from .cauchy import Cauchy
from .categorical import Categorical, Multinomial
from .discrete import Binomial, Geometric, Poisson
from .distribution import Distribution, ExponentialFamily
from .exponential import Exponential, Laplace
from .gamma import Beta, Chi2, Dirichlet, Gamma, StudentT
from .independent import Independent
from .kl import kl_divergence, register_kl
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .transform import (AbsTransform, AffineTransform, ChainTransform, ExpTransform, IndependentTransform,
                        PowerTransform, ReshapeTransform, SigmoidTransform, SoftmaxTransform, StackTransform,
                        StickBreakingTransform, TanhTransform, Transform)
from .transformed_distribution import Gumbel, LogNormal, TransformedDistribution
from .uniform import Uniform

__all__ = ["Distribution", "ExponentialFamily", "Normal", "Uniform", "Categorical", "Multinomial", "Bernoulli",
           "Exponential", "Laplace", "Gamma", "Beta", "Dirichlet", "Independent", "TransformedDistribution",
           "LogNormal", "Gumbel", "Transform", "AbsTransform", "AffineTransform", "ChainTransform", "ExpTransform",
           "PowerTransform", "SigmoidTransform", "TanhTransform", "IndependentTransform", "ReshapeTransform",
           "SoftmaxTransform", "StackTransform", "StickBreakingTransform", "kl_divergence", "register_kl"]
