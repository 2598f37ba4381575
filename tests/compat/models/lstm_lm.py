"""A word-level LSTM language model, as PaddleNLP's examples write one: embedding, a two-layer LSTM
with its final states, logits over the vocabulary from the flattened outputs."""
from compat_api import nn, paddle


class LSTMLanguageModel(nn.Layer):
    def __init__(self, vocab_size=50, hidden_size=16, num_layers=2):
        super().__init__()
        self.hidden_size = hidden_size
        self.embedding = nn.Embedding(vocab_size, hidden_size)
        self.lstm = nn.LSTM(hidden_size, hidden_size, num_layers=num_layers)
        self.dropout = nn.Dropout(p=0.0)
        self.fc = nn.Linear(hidden_size, vocab_size)

    def forward(self, tokens):
        emb = self.dropout(self.embedding(tokens))
        out, (h, c) = self.lstm(emb)
        out = paddle.reshape(out, [-1, self.hidden_size])
        logits = self.fc(self.dropout(out))
        return paddle.reshape(logits, [tokens.shape[0], tokens.shape[1], -1]), h


def make():
    return LSTMLanguageModel()


INPUTS = [([2, 5], "int64", 50)]
JIT = {"graphs": 1, "breaks": 0, "fallbacks": 0}
