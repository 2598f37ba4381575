"""Layers (`paddle.nn.Layer` and its subclasses)."""
__all__: list[str] = []
