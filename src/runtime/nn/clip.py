"""Gradient clipping: ClipGradByGlobalNorm, ClipGradByNorm, ClipGradByValue."""
__all__: list[str] = []
