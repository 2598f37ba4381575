"""Shared helpers of the model families: channel rounding and loading published weights."""
from __future__ import annotations

from ... import nn


def make_divisible(value: float, divisor: int = 8, min_value: int | None = None) -> int:
    """`value` rounded to the nearest multiple of `divisor` (at least `min_value`), never more than
    10% below `value`: the channel rule of the MobileNet papers, which the published weights follow."""
    if min_value is None:
        min_value = divisor
    rounded = max(min_value, int(value + divisor / 2) // divisor * divisor)
    return rounded + divisor if rounded < 0.9 * value else rounded


def load_pretrained(model: nn.Layer, arch: str, urls: dict[str, tuple[str, str]]) -> None:
    """Download (or find in the local cache) the published Paddle weights of `arch` and load them.

    The checkpoint holds the same state_dict keys as the model, so it loads as is.
    """
    if arch not in urls:
        raise ValueError(f"{arch} has no published pretrained weights; build it with pretrained=False "
                         f"(weights exist for: {', '.join(sorted(urls))})")
    from ...serialization import load  # runtime's top layer; the models sit above it
    from ...utils.download import get_weights_path_from_url  # runtime.utils sits above the models' layers

    url, md5 = urls[arch]
    model.set_state_dict(load(get_weights_path_from_url(url, md5)))
