"""The random generator behind every random op: `paddle.seed`, get/set_rng_state."""
__all__: list[str] = []
