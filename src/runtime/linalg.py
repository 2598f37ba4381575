"""`paddle.linalg` namespace."""
