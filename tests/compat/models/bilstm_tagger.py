"""A BiLSTM sequence tagger, as PaddleNLP's lexical-analysis and NER examples write one: embeddings, a
bidirectional nn.LSTM (`direction="bidirect"`) told each sentence's length by `sequence_length`, a
linear emission layer, and the arg-max tags."""
from compat_api import nn, paddle


class BiLSTMTagger(nn.Layer):
    def __init__(self, vocab_size=20, emb_dim=8, hidden_size=8, num_labels=5, num_layers=1):
        super().__init__()
        self.word_embedding = nn.Embedding(vocab_size, emb_dim)
        self.lstm = nn.LSTM(emb_dim, hidden_size, num_layers=num_layers, direction="bidirect")
        self.fc = nn.Linear(hidden_size * 2, num_labels)

    def forward(self, input_ids, lengths):
        embedded = self.word_embedding(input_ids)
        output, (last_hidden, last_cell) = self.lstm(embedded, sequence_length=lengths)
        emission = self.fc(output)
        prediction = paddle.argmax(emission, axis=-1)
        return emission, prediction, last_hidden


def make():
    return BiLSTMTagger()


INPUTS = [([3, 6], "int64", 20), ([3], "int64", 7, 1)]
JIT = {"graphs": 1, "breaks": 0, "fallbacks": 0}
