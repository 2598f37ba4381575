"""A GRU encoder-decoder with additive (Bahdanau) attention, as Paddle's seq2seq examples write one: a
bidirectional nn.GRU encoder whose two final states start the decoder through a tanh projection, a
decoder that loops over the target steps with nn.GRUCell, feeding the given target token (teacher
forcing) and the attention context over the encoder outputs, with padded source positions masked out."""
from compat_api import F, nn, paddle


class Encoder(nn.Layer):
    def __init__(self, vocab_size, embed_dim, hidden_size):
        super().__init__()
        self.embedder = nn.Embedding(vocab_size, embed_dim)
        self.gru = nn.GRU(embed_dim, hidden_size, direction="bidirect")
        self.bridge = nn.Linear(hidden_size * 2, hidden_size)

    def forward(self, src):
        encoder_output, final_state = self.gru(self.embedder(src))
        init_state = paddle.tanh(self.bridge(paddle.concat([final_state[0], final_state[1]], axis=-1)))
        return encoder_output, init_state


class AdditiveAttention(nn.Layer):
    def __init__(self, enc_size, dec_size, attn_size):
        super().__init__()
        self.enc_proj = nn.Linear(enc_size, attn_size, bias_attr=False)
        self.dec_proj = nn.Linear(dec_size, attn_size)
        self.v = nn.Linear(attn_size, 1, bias_attr=False)

    def forward(self, hidden, encoder_output, encoder_padding_mask):
        energy = self.v(paddle.tanh(self.enc_proj(encoder_output) + self.dec_proj(hidden).unsqueeze(1)))
        energy = energy.squeeze(-1) + encoder_padding_mask
        weights = F.softmax(energy, axis=-1)
        return paddle.matmul(weights.unsqueeze(1), encoder_output).squeeze(1)


class Decoder(nn.Layer):
    def __init__(self, vocab_size, embed_dim, hidden_size):
        super().__init__()
        self.embedder = nn.Embedding(vocab_size, embed_dim)
        self.attention = AdditiveAttention(hidden_size * 2, hidden_size, hidden_size)
        self.cell = nn.GRUCell(embed_dim + hidden_size * 2, hidden_size)
        self.output_layer = nn.Linear(hidden_size + hidden_size * 2, vocab_size)

    def forward(self, trg, state, encoder_output, encoder_padding_mask):
        logits = []
        for t in range(trg.shape[1]):
            step_input = self.embedder(trg[:, t])
            context = self.attention(state, encoder_output, encoder_padding_mask)
            output, state = self.cell(paddle.concat([step_input, context], axis=-1), state)
            logits.append(self.output_layer(paddle.concat([output, context], axis=-1)))
        return paddle.stack(logits, axis=1)


class Seq2SeqAttnModel(nn.Layer):
    def __init__(self, src_vocab_size=20, trg_vocab_size=20, embed_dim=8, hidden_size=8, pad_id=0):
        super().__init__()
        self.pad_id = pad_id
        self.encoder = Encoder(src_vocab_size, embed_dim, hidden_size)
        self.decoder = Decoder(trg_vocab_size, embed_dim, hidden_size)

    def forward(self, src, trg):
        encoder_output, state = self.encoder(src)
        encoder_padding_mask = (src == self.pad_id).astype("float32") * -1e9
        return self.decoder(trg, state, encoder_output, encoder_padding_mask)


def make():
    return Seq2SeqAttnModel()


INPUTS = [([2, 6], "int64", 20), ([2, 4], "int64", 20)]
JIT = {"graphs": 1, "breaks": 0, "fallbacks": 0}
