"""`paddle.optimizer`: SGD, Momentum, Adam, AdamW, RMSProp and `lr` schedulers."""
