"""MLP-Mixer, as PaddleClas writes it: a strided conv stem flattened to patches, blocks that mix
tokens by transposing to (batch, channels, tokens), an MLP over the tokens and transposing back,
then mix channels with a second MLP, both as pre-norm residuals; a final LayerNorm, the mean over
tokens and a head."""
from compat_api import nn, paddle


class Mlp(nn.Layer):
    def __init__(self, in_features, hidden_features):
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden_features)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden_features, in_features)
        self.drop = nn.Dropout(0.0)

    def forward(self, x):
        return self.drop(self.fc2(self.drop(self.act(self.fc1(x)))))


class MixerBlock(nn.Layer):
    def __init__(self, dim, seq_len, tokens_dim, channels_dim, epsilon=1e-6):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, epsilon=epsilon)
        self.mlp_tokens = Mlp(seq_len, tokens_dim)
        self.norm2 = nn.LayerNorm(dim, epsilon=epsilon)
        self.mlp_channels = Mlp(dim, channels_dim)

    def forward(self, x):
        x = x + self.mlp_tokens(self.norm1(x).transpose([0, 2, 1])).transpose([0, 2, 1])
        return x + self.mlp_channels(self.norm2(x))


class MlpMixer(nn.Layer):
    def __init__(self, img_size=16, patch_size=4, embed_dim=8, num_blocks=2, class_num=10):
        super().__init__()
        seq_len = (img_size // patch_size) ** 2
        self.stem = nn.Conv2D(3, embed_dim, kernel_size=patch_size, stride=patch_size)
        self.blocks = nn.Sequential(*[MixerBlock(embed_dim, seq_len, 8, 16) for _ in range(num_blocks)])
        self.norm = nn.LayerNorm(embed_dim, epsilon=1e-6)
        self.head = nn.Linear(embed_dim, class_num)

    def forward(self, x):
        x = self.stem(x).flatten(2).transpose([0, 2, 1])
        x = self.norm(self.blocks(x))
        return self.head(x.mean(axis=1))


def make():
    return MlpMixer()


INPUTS = [([2, 3, 16, 16], "float32", 0)]
JIT = {"graphs": 1, "breaks": 0, "fallbacks": 0}
