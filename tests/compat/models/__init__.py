"""The corpus: one module per model, each with `make()`, `INPUTS` ((shape, dtype, high) per input) and
`JIT` (graphs, breaks and fallbacks of one compiled call of its forward)."""
MODELS = ["resnet_basic", "lstm_lm", "transformer_seq2seq", "vit_tiny"]
