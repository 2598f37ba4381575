"""Losses: cross_entropy, mse_loss, l1_loss, smooth_l1_loss, binary_cross_entropy(_with_logits), nll_loss, kl_div."""
from __future__ import annotations

__all__: list[str] = []
