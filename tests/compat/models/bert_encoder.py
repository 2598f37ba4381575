"""A BERT encoder, as PaddleNLP writes one: word, position and token-type embeddings (positions from a
cumulative sum of ones), LayerNorm; an attention mask built from the input ids (`input_ids != pad`)
as an additive bias; multi-head self-attention written by hand (`reshape` with 0 to keep dimensions,
`paddle.matmul(q, k, transpose_y=True)`, scaled, the bias added, softmax); post-norm residual layers
with a GELU feed-forward; a tanh pooler over the first token."""
from compat_api import F, nn, paddle


class BertEmbeddings(nn.Layer):
    def __init__(self, vocab_size, hidden_size, max_position_embeddings, type_vocab_size):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab_size, hidden_size)
        self.position_embeddings = nn.Embedding(max_position_embeddings, hidden_size)
        self.token_type_embeddings = nn.Embedding(type_vocab_size, hidden_size)
        self.layer_norm = nn.LayerNorm(hidden_size)
        self.dropout = nn.Dropout(0.0)

    def forward(self, input_ids, token_type_ids=None, position_ids=None):
        if position_ids is None:
            ones = paddle.ones_like(input_ids, dtype="int64")
            seq_length = paddle.cumsum(ones, axis=-1)
            position_ids = seq_length - ones
            position_ids.stop_gradient = True
        if token_type_ids is None:
            token_type_ids = paddle.zeros_like(input_ids, dtype="int64")
        embeddings = (self.word_embeddings(input_ids) + self.position_embeddings(position_ids)
                      + self.token_type_embeddings(token_type_ids))
        return self.dropout(self.layer_norm(embeddings))


class SelfAttention(nn.Layer):
    def __init__(self, embed_dim, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.q_proj = nn.Linear(embed_dim, embed_dim)
        self.k_proj = nn.Linear(embed_dim, embed_dim)
        self.v_proj = nn.Linear(embed_dim, embed_dim)
        self.out_proj = nn.Linear(embed_dim, embed_dim)

    def _heads(self, x):
        x = paddle.reshape(x, shape=[0, 0, self.num_heads, self.head_dim])
        return paddle.transpose(x, perm=[0, 2, 1, 3])

    def forward(self, x, attn_mask):
        q, k, v = self._heads(self.q_proj(x)), self._heads(self.k_proj(x)), self._heads(self.v_proj(x))
        product = paddle.matmul(x=q, y=k, transpose_y=True)
        product = product * self.head_dim ** -0.5
        product = product + attn_mask
        weights = F.softmax(product)
        out = paddle.matmul(weights, v)
        out = paddle.transpose(out, perm=[0, 2, 1, 3])
        out = paddle.reshape(out, shape=[0, 0, out.shape[2] * out.shape[3]])
        return self.out_proj(out)


class EncoderLayer(nn.Layer):
    def __init__(self, d_model, nhead, dim_feedforward):
        super().__init__()
        self.self_attn = SelfAttention(d_model, nhead)
        self.linear1 = nn.Linear(d_model, dim_feedforward)
        self.linear2 = nn.Linear(dim_feedforward, d_model)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)

    def forward(self, src, src_mask):
        src = self.norm1(src + self.self_attn(src, src_mask))
        return self.norm2(src + self.linear2(F.gelu(self.linear1(src))))


class BertPooler(nn.Layer):
    def __init__(self, hidden_size):
        super().__init__()
        self.dense = nn.Linear(hidden_size, hidden_size)
        self.activation = nn.Tanh()

    def forward(self, hidden_states):
        return self.activation(self.dense(hidden_states[:, 0]))


class BertModel(nn.Layer):
    def __init__(self, vocab_size=12, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                 intermediate_size=32, max_position_embeddings=16, type_vocab_size=2, pad_token_id=0):
        super().__init__()
        self.pad_token_id = pad_token_id
        self.embeddings = BertEmbeddings(vocab_size, hidden_size, max_position_embeddings, type_vocab_size)
        self.encoder = nn.LayerList([EncoderLayer(hidden_size, num_attention_heads, intermediate_size)
                                     for _ in range(num_hidden_layers)])
        self.pooler = BertPooler(hidden_size)

    def forward(self, input_ids, token_type_ids=None):
        attention_mask = (input_ids != self.pad_token_id).astype(self.pooler.dense.weight.dtype)
        attention_mask = paddle.unsqueeze((1.0 - attention_mask) * -1e4, axis=[1, 2])
        sequence_output = self.embeddings(input_ids, token_type_ids=token_type_ids)
        for layer in self.encoder:
            sequence_output = layer(sequence_output, attention_mask)
        return sequence_output, self.pooler(sequence_output)


def make():
    return BertModel()


INPUTS = [([2, 7], "int64", 12), ([2, 7], "int64", 2)]
# `position_ids.stop_gradient = True` on a tensor the frame computed is captured (an int64 tensor: no change)
JIT = {"graphs": 1, "breaks": 0, "fallbacks": 0}
