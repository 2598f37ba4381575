"""A Vision Transformer, as PaddleClas writes one: a strided conv patch embedding, a class token
expanded to the batch read from `x.shape[0]`, learned positions, attention blocks whose qkv is
reshaped with the batch size, a LayerNorm and a head on the class token."""
from compat_api import F, nn, paddle


class Attention(nn.Layer):
    def __init__(self, dim, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.scale = (dim // num_heads) ** -0.5
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape((B, N, 3, self.num_heads, C // self.num_heads)).transpose((2, 0, 3, 1, 4))
        q, k, v = qkv[0], qkv[1], qkv[2]
        attn = q.matmul(k.transpose((0, 1, 3, 2))) * self.scale
        attn = F.softmax(attn, axis=-1)
        x = attn.matmul(v).transpose((0, 2, 1, 3)).reshape((B, N, C))
        return self.proj(x)


class Block(nn.Layer):
    def __init__(self, dim, num_heads):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = Attention(dim, num_heads)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, dim * 2), nn.GELU(), nn.Linear(dim * 2, dim))

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class VisionTransformer(nn.Layer):
    def __init__(self, img_size=16, patch_size=4, dim=16, depth=2, num_heads=2, num_classes=10):
        super().__init__()
        self.patch_embed = nn.Conv2D(3, dim, kernel_size=patch_size, stride=patch_size)
        num_patches = (img_size // patch_size) ** 2
        self.cls_token = self.create_parameter(shape=(1, 1, dim), default_initializer=nn.initializer.Constant(0.0))
        self.pos_embed = self.create_parameter(shape=(1, num_patches + 1, dim),
                                               default_initializer=nn.initializer.Constant(0.0))
        self.blocks = nn.LayerList([Block(dim, num_heads) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, num_classes)

    def forward(self, x):
        B = x.shape[0]
        x = self.patch_embed(x).flatten(2).transpose((0, 2, 1))
        cls_tokens = self.cls_token.expand((B, -1, -1))
        x = paddle.concat((cls_tokens, x), axis=1) + self.pos_embed
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.norm(x)[:, 0])


def make():
    return VisionTransformer()


INPUTS = [([2, 3, 16, 16], "float32", 0)]
JIT = {"graphs": 1, "breaks": 0, "fallbacks": 0}
