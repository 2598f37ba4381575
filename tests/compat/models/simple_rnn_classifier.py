"""A recurrent text classifier, as PaddleNLP's RNN encoders build one: nn.RNN over an
nn.SimpleRNNCell (tanh), its final state and the time-averaged outputs concatenated into a
fully-connected head."""
from compat_api import nn, paddle


class RNNClassifier(nn.Layer):
    def __init__(self, vocab_size=20, emb_dim=8, hidden_size=8, num_classes=4):
        super().__init__()
        self.embedder = nn.Embedding(vocab_size, emb_dim)
        self.rnn = nn.RNN(nn.SimpleRNNCell(emb_dim, hidden_size, activation="tanh"))
        self.fc = nn.Linear(hidden_size * 2, hidden_size)
        self.output_layer = nn.Linear(hidden_size, num_classes)

    def forward(self, text):
        encoded, last_hidden = self.rnn(self.embedder(text))
        pooled = paddle.mean(encoded, axis=1)
        fc_out = paddle.tanh(self.fc(paddle.concat([last_hidden, pooled], axis=-1)))
        return self.output_layer(fc_out)


def make():
    return RNNClassifier()


INPUTS = [([2, 7], "int64", 20)]
JIT = {"graphs": 1, "breaks": 0, "fallbacks": 0}
