"""The corpus: one module per model, each with `make()`, `INPUTS` ((shape, dtype, high[, low]) per input)
and `JIT` (graphs, breaks and fallbacks of one compiled call of its forward)."""
MODELS = [
    # vision
    "resnet_basic", "resnext_bottleneck", "mobilenet_v2", "mobilenet_v3_se", "densenet", "shufflenet_v2",
    "ghostnet", "vgg", "vit_tiny", "mlp_mixer",
    # segmentation, super-resolution
    "unet_seg", "espcn_sr",
    # NLP, OCR and sequences
    "lstm_lm", "transformer_seq2seq", "bert_encoder", "gru_attention_seq2seq", "bilstm_tagger", "textcnn",
    "simple_rnn_classifier", "crnn_ocr",
]
