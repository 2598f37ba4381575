"""Parameter initialisers with Paddle's names and defaults."""
