"""A Transformer encoder-decoder for translation, as Paddle's machine-translation example builds it:
token and position embeddings, nn.Transformer with a causal target mask, an output projection."""
from compat_api import nn, paddle


class Seq2SeqTransformer(nn.Layer):
    def __init__(self, src_vocab=30, tgt_vocab=30, d_model=16, nhead=2, layers=1, max_len=16):
        super().__init__()
        self.d_model = d_model
        self.src_emb = nn.Embedding(src_vocab, d_model)
        self.tgt_emb = nn.Embedding(tgt_vocab, d_model)
        self.pos_emb = nn.Embedding(max_len, d_model)
        self.transformer = nn.Transformer(d_model, nhead, num_encoder_layers=layers, num_decoder_layers=layers,
                                          dim_feedforward=32, dropout=0.0)
        self.project = nn.Linear(d_model, tgt_vocab)

    def embed(self, emb, tokens):
        pos = paddle.arange(tokens.shape[1]).unsqueeze(0)
        return emb(tokens) * (self.d_model ** 0.5) + self.pos_emb(pos)

    def forward(self, src, tgt):
        tgt_mask = self.transformer.generate_square_subsequent_mask(tgt.shape[1])
        out = self.transformer(self.embed(self.src_emb, src), self.embed(self.tgt_emb, tgt), tgt_mask=tgt_mask)
        return self.project(out)


def make():
    return Seq2SeqTransformer()


INPUTS = [([2, 6], "int64", 30), ([2, 5], "int64", 30)]
JIT = {"graphs": 1, "breaks": 0, "fallbacks": 0}
