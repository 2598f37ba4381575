"""A TextCNN classifier, as PaddleNLP's CNNEncoder writes it: embeddings unsqueezed to one channel,
Conv2D filters spanning the embedding for several n-gram widths, squeezed and max-pooled over time
with `F.adaptive_max_pool1d`, and a Conv1D branch over the transposed embeddings reduced with
`paddle.max`; everything concatenated into a tanh hidden layer and a classifier."""
from compat_api import F, nn, paddle


class CNNEncoder(nn.Layer):
    def __init__(self, emb_dim, num_filter, ngram_filter_sizes=(2, 3)):
        super().__init__()
        self._ngram_filter_sizes = ngram_filter_sizes
        self.convs = nn.LayerList([nn.Conv2D(1, num_filter, (size, emb_dim)) for size in ngram_filter_sizes])
        self._activation = nn.Tanh()

    def get_output_dim(self):
        return len(self._ngram_filter_sizes) * self.convs[0]._out_channels

    def forward(self, inputs):
        inputs = inputs.unsqueeze(1)
        convs_out = [self._activation(conv(inputs)).squeeze(3) for conv in self.convs]
        maxpool_out = [F.adaptive_max_pool1d(t, output_size=1).squeeze(2) for t in convs_out]
        return paddle.concat(maxpool_out, axis=1)


class TextCNN(nn.Layer):
    def __init__(self, vocab_size=30, emb_dim=8, num_filter=4, hidden_size=8, num_classes=3, padding_idx=0):
        super().__init__()
        self.embedder = nn.Embedding(vocab_size, emb_dim, padding_idx=padding_idx)
        self.encoder = CNNEncoder(emb_dim, num_filter)
        self.conv1d = nn.Conv1D(emb_dim, num_filter, kernel_size=4, padding=1)
        self.fc = nn.Linear(self.encoder.get_output_dim() + num_filter, hidden_size)
        self.output_layer = nn.Linear(hidden_size, num_classes)

    def forward(self, text):
        embedded_text = self.embedder(text)
        encoder_out = self.encoder(embedded_text)
        conv1d_out = paddle.max(F.relu(self.conv1d(embedded_text.transpose([0, 2, 1]))), axis=-1)
        fc_out = paddle.tanh(self.fc(paddle.concat([encoder_out, conv1d_out], axis=-1)))
        return self.output_layer(fc_out)


def make():
    return TextCNN()


INPUTS = [([3, 9], "int64", 30)]
JIT = {"graphs": 1, "breaks": 0, "fallbacks": 0}
