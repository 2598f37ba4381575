"""Small models written the way PaddleNLP / PaddleClas / PaddleSeg / PaddleDetection write them
(Paddle 2.x API, with `import runtime as paddle`), for tests/test_model_zoo.py."""
import math

import numpy as np

import runtime as paddle
import runtime.nn as nn
import runtime.nn.functional as F


# ---------------------------------------------------------------- GPT-2 (PaddleNLP's gpt/modeling.py)
class GPTAttention(nn.Layer):
    def __init__(self, hidden_size, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = hidden_size // num_heads
        self.c_attn = nn.Linear(hidden_size, 3 * hidden_size)
        self.c_proj = nn.Linear(hidden_size, hidden_size)

    def _split_heads(self, x):
        B, T, _ = x.shape
        return x.reshape([B, T, self.num_heads, self.head_dim]).transpose([0, 2, 1, 3])

    def forward(self, x, layer_past=None, use_cache=False):
        q, k, v = self.c_attn(x).split(3, axis=-1)
        q, k, v = self._split_heads(q), self._split_heads(k), self._split_heads(v)
        if layer_past is not None:
            past_key, past_value = layer_past
            k = paddle.concat([past_key, k], axis=-2)
            v = paddle.concat([past_value, v], axis=-2)
        present = (k, v) if use_cache else None
        q_len, k_len = q.shape[2], k.shape[2]
        scores = paddle.matmul(q, k, transpose_y=True) / math.sqrt(self.head_dim)
        causal = paddle.tril(paddle.ones([k_len, k_len], dtype="bool"))[k_len - q_len:, :]
        scores = paddle.where(causal, scores, paddle.full_like(scores, -1e4))
        weights = F.softmax(scores, axis=-1)
        out = paddle.matmul(weights, v).transpose([0, 2, 1, 3])
        out = out.reshape([out.shape[0], out.shape[1], -1])
        return self.c_proj(out), present


class GPTBlock(nn.Layer):
    def __init__(self, hidden_size, num_heads):
        super().__init__()
        self.ln_1 = nn.LayerNorm(hidden_size, epsilon=1e-5)
        self.attn = GPTAttention(hidden_size, num_heads)
        self.ln_2 = nn.LayerNorm(hidden_size, epsilon=1e-5)
        self.mlp = nn.Sequential(nn.Linear(hidden_size, 4 * hidden_size), nn.GELU(approximate=True),
                                 nn.Linear(4 * hidden_size, hidden_size))

    def forward(self, x, layer_past=None, use_cache=False):
        a, present = self.attn(self.ln_1(x), layer_past=layer_past, use_cache=use_cache)
        x = x + a
        x = x + self.mlp(self.ln_2(x))
        return x, present


class GPTLMHeadModel(nn.Layer):
    def __init__(self, vocab_size=17, hidden_size=16, num_heads=2, num_layers=2, max_positions=16):
        super().__init__()
        self.wte = nn.Embedding(vocab_size, hidden_size)
        self.wpe = nn.Embedding(max_positions, hidden_size)
        self.h = nn.LayerList([GPTBlock(hidden_size, num_heads) for _ in range(num_layers)])
        self.ln_f = nn.LayerNorm(hidden_size, epsilon=1e-5)

    def forward(self, input_ids, past_key_values=None, use_cache=False):
        past_length = 0 if past_key_values is None else past_key_values[0][0].shape[-2]
        if past_key_values is None:
            past_key_values = [None] * len(self.h)
        position_ids = paddle.arange(past_length, past_length + input_ids.shape[-1], dtype="int64")
        h = self.wte(input_ids) + self.wpe(position_ids.unsqueeze(0))
        presents = [] if use_cache else None
        for block, layer_past in zip(self.h, past_key_values):
            h, present = block(h, layer_past=layer_past, use_cache=use_cache)
            if use_cache:
                presents.append(present)
        h = self.ln_f(h)
        logits = paddle.matmul(h, self.wte.weight, transpose_y=True)  # tied embeddings
        return (logits, presents) if use_cache else logits


def greedy_generate(model, input_ids, max_new_tokens=4):
    """PaddleNLP-style greedy decoding with a KV cache: the prompt once, then one token a step."""
    logits, past = model(input_ids, use_cache=True)
    generated = []
    for _ in range(max_new_tokens):
        next_token = paddle.argmax(logits[:, -1, :], axis=-1, keepdim=True)
        generated.append(next_token)
        logits, past = model(next_token, past_key_values=past, use_cache=True)
    return paddle.concat(generated, axis=-1)


# ---------------------------------------------------------------- BERT (PaddleNLP's bert/modeling.py)
class BertEmbeddings(nn.Layer):
    def __init__(self, vocab_size, hidden_size, max_position_embeddings, type_vocab_size, dropout):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab_size, hidden_size)
        self.position_embeddings = nn.Embedding(max_position_embeddings, hidden_size)
        self.token_type_embeddings = nn.Embedding(type_vocab_size, hidden_size)
        self.layer_norm = nn.LayerNorm(hidden_size)
        self.dropout = nn.Dropout(dropout)

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


class BertPooler(nn.Layer):
    def __init__(self, hidden_size):
        super().__init__()
        self.dense = nn.Linear(hidden_size, hidden_size)
        self.activation = nn.Tanh()

    def forward(self, hidden_states):
        return self.activation(self.dense(hidden_states[:, 0]))


class BertModel(nn.Layer):
    def __init__(self, vocab_size=23, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                 intermediate_size=32, hidden_dropout_prob=0.1, max_position_embeddings=16, type_vocab_size=2,
                 pad_token_id=0):
        super().__init__()
        self.pad_token_id = pad_token_id
        self.embeddings = BertEmbeddings(vocab_size, hidden_size, max_position_embeddings, type_vocab_size,
                                         hidden_dropout_prob)
        encoder_layer = nn.TransformerEncoderLayer(hidden_size, num_attention_heads, intermediate_size,
                                                   dropout=hidden_dropout_prob, activation="gelu",
                                                   attn_dropout=hidden_dropout_prob, act_dropout=0)
        self.encoder = nn.TransformerEncoder(encoder_layer, num_hidden_layers)
        self.pooler = BertPooler(hidden_size)

    def forward(self, input_ids, token_type_ids=None, attention_mask=None, return_dict=False):
        if attention_mask is None:
            attention_mask = (input_ids != self.pad_token_id).astype("float32")
        # [B, T] -> [B, 1, 1, T]: added to the attention scores of every head and query
        attention_mask = (1.0 - attention_mask[:, None, None, :]) * -1e4
        embedding_output = self.embeddings(input_ids, token_type_ids=token_type_ids)
        sequence_output = self.encoder(embedding_output, attention_mask)
        pooled_output = self.pooler(sequence_output)
        if return_dict:
            return {"last_hidden_state": sequence_output, "pooler_output": pooled_output}
        return sequence_output, pooled_output


class BertForSequenceClassification(nn.Layer):
    def __init__(self, num_classes=3, dropout=0.1, **kwargs):
        super().__init__()
        self.bert = BertModel(**kwargs)
        self.dropout = nn.Dropout(dropout)
        self.classifier = nn.Linear(16, num_classes)

    def forward(self, input_ids, token_type_ids=None, attention_mask=None, labels=None):
        outputs = self.bert(input_ids, token_type_ids=token_type_ids, attention_mask=attention_mask,
                            return_dict=True)
        logits = self.classifier(self.dropout(outputs["pooler_output"]))
        if labels is not None:
            loss = F.cross_entropy(logits, labels)
            return loss, logits
        return logits


# ---------------------------------------------------------------- ViT (PaddleClas's vision_transformer.py)
trunc_normal_ = nn.initializer.TruncatedNormal(std=.02)
zeros_ = nn.initializer.Constant(value=0.)
ones_ = nn.initializer.Constant(value=1.)


def drop_path(x, drop_prob=0., training=False):
    """Stochastic depth: drops whole samples of the residual branch."""
    if drop_prob == 0. or not training:
        return x
    keep_prob = paddle.to_tensor(1 - drop_prob, dtype=x.dtype)
    shape = (paddle.shape(x)[0], ) + (1, ) * (x.ndim - 1)
    random_tensor = keep_prob + paddle.rand(shape, dtype=x.dtype)
    random_tensor = paddle.floor(random_tensor)  # binarize
    return x.divide(keep_prob) * random_tensor


class DropPath(nn.Layer):
    def __init__(self, drop_prob=None):
        super().__init__()
        self.drop_prob = drop_prob

    def forward(self, x):
        return drop_path(x, self.drop_prob, self.training)


class Mlp(nn.Layer):
    def __init__(self, in_features, hidden_features, drop=0.):
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden_features)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden_features, in_features)
        self.drop = nn.Dropout(drop)

    def forward(self, x):
        return self.drop(self.fc2(self.drop(self.act(self.fc1(x)))))


class ViTAttention(nn.Layer):
    def __init__(self, dim, num_heads=2, qkv_bias=True, attn_drop=0., proj_drop=0.):
        super().__init__()
        self.num_heads = num_heads
        self.scale = (dim // num_heads) ** -0.5
        self.qkv = nn.Linear(dim, dim * 3, bias_attr=qkv_bias)
        self.attn_drop = nn.Dropout(attn_drop)
        self.proj = nn.Linear(dim, dim)
        self.proj_drop = nn.Dropout(proj_drop)

    def forward(self, x):
        N, C = x.shape[1:]
        qkv = self.qkv(x).reshape((-1, N, 3, self.num_heads, C // self.num_heads)).transpose((2, 0, 3, 1, 4))
        q, k, v = qkv[0], qkv[1], qkv[2]
        attn = (q.matmul(k.transpose((0, 1, 3, 2)))) * self.scale
        attn = nn.functional.softmax(attn, axis=-1)
        attn = self.attn_drop(attn)
        x = (attn.matmul(v)).transpose((0, 2, 1, 3)).reshape((-1, N, C))
        return self.proj_drop(self.proj(x))


class ViTBlock(nn.Layer):
    def __init__(self, dim, num_heads, mlp_ratio=2., drop=0., attn_drop=0., drop_path=0.):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, epsilon=1e-6)
        self.attn = ViTAttention(dim, num_heads=num_heads, attn_drop=attn_drop, proj_drop=drop)
        self.drop_path = DropPath(drop_path) if drop_path > 0. else nn.Identity()
        self.norm2 = nn.LayerNorm(dim, epsilon=1e-6)
        self.mlp = Mlp(dim, int(dim * mlp_ratio), drop=drop)

    def forward(self, x):
        x = x + self.drop_path(self.attn(self.norm1(x)))
        return x + self.drop_path(self.mlp(self.norm2(x)))


class PatchEmbed(nn.Layer):
    def __init__(self, img_size=8, patch_size=4, in_chans=3, embed_dim=16):
        super().__init__()
        self.img_size = (img_size, img_size)
        self.num_patches = (img_size // patch_size) ** 2
        self.proj = nn.Conv2D(in_chans, embed_dim, kernel_size=patch_size, stride=patch_size)

    def forward(self, x):
        B, C, H, W = x.shape
        assert H == self.img_size[0] and W == self.img_size[1], \
            f"Input image size ({H}*{W}) doesn't match model ({self.img_size[0]}*{self.img_size[1]})."
        return self.proj(x).flatten(2).transpose((0, 2, 1))


class VisionTransformer(nn.Layer):
    def __init__(self, img_size=8, patch_size=4, in_chans=3, class_num=5, embed_dim=16, depth=2, num_heads=2,
                 drop_rate=0.1, drop_path_rate=0.2):
        super().__init__()
        self.patch_embed = PatchEmbed(img_size, patch_size, in_chans, embed_dim)
        num_patches = self.patch_embed.num_patches
        self.pos_embed = self.create_parameter(shape=(1, num_patches + 1, embed_dim), default_initializer=zeros_)
        self.add_parameter("pos_embed", self.pos_embed)
        self.cls_token = self.create_parameter(shape=(1, 1, embed_dim), default_initializer=zeros_)
        self.add_parameter("cls_token", self.cls_token)
        self.pos_drop = nn.Dropout(p=drop_rate)
        dpr = [float(r) for r in paddle.linspace(0, drop_path_rate, depth).numpy()]
        self.blocks = nn.LayerList([ViTBlock(embed_dim, num_heads, drop=drop_rate, drop_path=dpr[i])
                                    for i in range(depth)])
        self.norm = nn.LayerNorm(embed_dim, epsilon=1e-6)
        self.head = nn.Linear(embed_dim, class_num)
        trunc_normal_(self.pos_embed)
        trunc_normal_(self.cls_token)
        self.apply(self._init_weights)

    def _init_weights(self, m):
        if isinstance(m, nn.Linear):
            trunc_normal_(m.weight)
            if m.bias is not None:
                zeros_(m.bias)
        elif isinstance(m, nn.LayerNorm):
            zeros_(m.bias)
            ones_(m.weight)

    def forward_features(self, x):
        B = paddle.shape(x)[0]
        x = self.patch_embed(x)
        cls_tokens = self.cls_token.expand((B, -1, -1))
        x = paddle.concat((cls_tokens, x), axis=1)
        x = x + self.pos_embed
        x = self.pos_drop(x)
        for blk in self.blocks:
            x = blk(x)
        x = self.norm(x)
        return x[:, 0]

    def forward(self, x):
        return self.head(self.forward_features(x))


# ---------------------------------------------------------------- MobileNetV3 (PaddleClas's mobilenet_v3.py)
def _make_divisible(v, divisor=8, min_value=None):
    if min_value is None:
        min_value = divisor
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:
        new_v += divisor
    return new_v


def _create_act(act):
    if act == "hardswish":
        return nn.Hardswish()
    elif act == "relu":
        return nn.ReLU()
    elif act is None:
        return None
    raise RuntimeError(f"The activation function is not supported: {act}")


class ConvBNLayer(nn.Layer):
    def __init__(self, in_c, out_c, filter_size, stride, padding, num_groups=1, if_act=True, act=None):
        super().__init__()
        self.conv = nn.Conv2D(in_channels=in_c, out_channels=out_c, kernel_size=filter_size, stride=stride,
                              padding=padding, groups=num_groups, bias_attr=False)
        self.bn = nn.BatchNorm(num_channels=out_c, act=None,
                               param_attr=paddle.ParamAttr(regularizer=paddle.regularizer.L2Decay(0.0)),
                               bias_attr=paddle.ParamAttr(regularizer=paddle.regularizer.L2Decay(0.0)))
        self.if_act = if_act
        self.act = _create_act(act)

    def forward(self, x):
        x = self.conv(x)
        x = self.bn(x)
        if self.if_act:
            x = self.act(x)
        return x


class Hardsigmoid(nn.Layer):
    def __init__(self, slope=0.2, offset=0.5):
        super().__init__()
        self.slope = slope
        self.offset = offset

    def forward(self, x):
        return nn.functional.hardsigmoid(x, slope=self.slope, offset=self.offset)


class SEModule(nn.Layer):
    def __init__(self, channel, reduction=4):
        super().__init__()
        self.avg_pool = nn.AdaptiveAvgPool2D(1)
        self.conv1 = nn.Conv2D(in_channels=channel, out_channels=channel // reduction, kernel_size=1)
        self.relu = nn.ReLU()
        self.conv2 = nn.Conv2D(in_channels=channel // reduction, out_channels=channel, kernel_size=1)
        self.hardsigmoid = Hardsigmoid(slope=0.2, offset=0.5)

    def forward(self, x):
        identity = x
        x = self.avg_pool(x)
        x = self.conv1(x)
        x = self.relu(x)
        x = self.conv2(x)
        x = self.hardsigmoid(x)
        return paddle.multiply(x=identity, y=x)


class ResidualUnit(nn.Layer):
    def __init__(self, in_c, mid_c, out_c, filter_size, stride, use_se, act=None):
        super().__init__()
        self.if_shortcut = stride == 1 and in_c == out_c
        self.if_se = use_se
        self.expand_conv = ConvBNLayer(in_c, mid_c, 1, 1, 0, if_act=True, act=act)
        self.bottleneck_conv = ConvBNLayer(mid_c, mid_c, filter_size, stride, int((filter_size - 1) // 2),
                                           num_groups=mid_c, if_act=True, act=act)
        if self.if_se:
            self.mid_se = SEModule(mid_c)
        self.linear_conv = ConvBNLayer(mid_c, out_c, 1, 1, 0, if_act=False, act=None)

    def forward(self, x):
        identity = x
        x = self.expand_conv(x)
        x = self.bottleneck_conv(x)
        if self.if_se:
            x = self.mid_se(x)
        x = self.linear_conv(x)
        if self.if_shortcut:
            x = paddle.add(identity, x)
        return x


MOBILENETV3_TINY_CONFIG = [
    # k, exp, c, se, act, s
    [3, 16, 16, True, "relu", 2],
    [3, 24, 16, False, "relu", 1],
    [5, 32, 24, True, "hardswish", 2],
]


class MobileNetV3(nn.Layer):
    def __init__(self, config=MOBILENETV3_TINY_CONFIG, scale=1.0, class_num=4, inplanes=16, class_squeeze=48,
                 class_expand=64, dropout_prob=0.2):
        super().__init__()
        self.cfg = config
        self.scale = scale
        self.inplanes = inplanes
        self.conv = ConvBNLayer(in_c=3, out_c=_make_divisible(self.inplanes * self.scale), filter_size=3, stride=2,
                                padding=1, num_groups=1, if_act=True, act="hardswish")
        self.blocks = nn.Sequential(*[
            ResidualUnit(in_c=_make_divisible(self.inplanes * self.scale if i == 0 else
                                              self.cfg[i - 1][2] * self.scale),
                         mid_c=_make_divisible(self.scale * exp), out_c=_make_divisible(self.scale * c),
                         filter_size=k, stride=s, use_se=se, act=act)
            for i, (k, exp, c, se, act, s) in enumerate(self.cfg)])
        self.last_second_conv = ConvBNLayer(in_c=_make_divisible(self.cfg[-1][2] * self.scale),
                                            out_c=_make_divisible(self.scale * class_squeeze), filter_size=1,
                                            stride=1, padding=0, num_groups=1, if_act=True, act="hardswish")
        self.avg_pool = nn.AdaptiveAvgPool2D(1)
        self.last_conv = nn.Conv2D(in_channels=_make_divisible(self.scale * class_squeeze), out_channels=class_expand,
                                   kernel_size=1, stride=1, padding=0, bias_attr=False)
        self.hardswish = nn.Hardswish()
        self.dropout = nn.Dropout(p=dropout_prob, mode="downscale_in_infer") if dropout_prob else None
        self.flatten = nn.Flatten(start_axis=1, stop_axis=-1)
        self.fc = nn.Linear(class_expand, class_num)

    def forward(self, x):
        x = self.conv(x)
        x = self.blocks(x)
        x = self.last_second_conv(x)
        x = self.avg_pool(x)
        x = self.last_conv(x)
        x = self.hardswish(x)
        if self.dropout is not None:
            x = self.dropout(x)
        x = self.flatten(x)
        return self.fc(x)


# ---------------------------------------------------------------- UNet (PaddleSeg's models/unet.py)
def SyncBatchNorm(*args, **kwargs):
    """PaddleSeg's: plain BatchNorm2D on a CPU."""
    if paddle.get_device() == "cpu":
        return nn.BatchNorm2D(*args, **kwargs)
    return nn.SyncBatchNorm(*args, **kwargs)


class ConvBNReLU(nn.Layer):
    def __init__(self, in_channels, out_channels, kernel_size, padding="same", **kwargs):
        super().__init__()
        self._conv = nn.Conv2D(in_channels, out_channels, kernel_size, padding=padding, **kwargs)
        data_format = kwargs["data_format"] if "data_format" in kwargs else "NCHW"
        self._batch_norm = SyncBatchNorm(out_channels, data_format=data_format)
        self._relu = nn.ReLU()

    def forward(self, x):
        return self._relu(self._batch_norm(self._conv(x)))


class UNetEncoder(nn.Layer):
    def __init__(self, in_channels=3, down_channels=((4, 8), (8, 8))):
        super().__init__()
        self.double_conv = nn.Sequential(ConvBNReLU(in_channels, 4, 3), ConvBNReLU(4, 4, 3))
        self.down_sample_list = nn.LayerList([self.down_sampling(channel[0], channel[1])
                                              for channel in down_channels])

    def down_sampling(self, in_channels, out_channels):
        modules = [nn.MaxPool2D(kernel_size=2, stride=2), ConvBNReLU(in_channels, out_channels, 3),
                   ConvBNReLU(out_channels, out_channels, 3)]
        return nn.Sequential(*modules)

    def forward(self, x):
        short_cuts = []
        x = self.double_conv(x)
        for down_sample in self.down_sample_list:
            short_cuts.append(x)
            x = down_sample(x)
        return x, short_cuts


class UpSampling(nn.Layer):
    def __init__(self, in_channels, out_channels, align_corners, use_deconv=False):
        super().__init__()
        self.align_corners = align_corners
        self.use_deconv = use_deconv
        if self.use_deconv:
            self.deconv = nn.Conv2DTranspose(in_channels, out_channels // 2, kernel_size=2, stride=2, padding=0)
            in_channels = in_channels + out_channels // 2
        else:
            in_channels *= 2
        self.double_conv = nn.Sequential(ConvBNReLU(in_channels, out_channels, 3),
                                         ConvBNReLU(out_channels, out_channels, 3))

    def forward(self, x, short_cut):
        if self.use_deconv:
            x = self.deconv(x)
        else:
            x = F.interpolate(x, paddle.shape(short_cut)[2:], mode="bilinear", align_corners=self.align_corners)
        x = paddle.concat([x, short_cut], axis=1)
        return self.double_conv(x)


class UNetDecoder(nn.Layer):
    def __init__(self, align_corners, use_deconv=False, up_channels=((8, 4), (4, 4))):
        super().__init__()
        self.up_sample_list = nn.LayerList([UpSampling(channel[0], channel[1], align_corners, use_deconv)
                                            for channel in up_channels])

    def forward(self, x, short_cuts):
        for up_sample, short_cut in zip(self.up_sample_list, reversed(short_cuts)):
            x = up_sample(x, short_cut)
        return x


class UNet(nn.Layer):
    def __init__(self, num_classes=3, align_corners=False, use_deconv=False, in_channels=3):
        super().__init__()
        self.encode = UNetEncoder(in_channels)
        self.decode = UNetDecoder(align_corners, use_deconv=use_deconv)
        self.cls = self.conv = nn.Conv2D(in_channels=4, out_channels=num_classes, kernel_size=3, stride=1, padding=1)

    def forward(self, x):
        logit_list = []
        x, short_cuts = self.encode(x)
        x = self.decode(x, short_cuts)
        logit = self.cls(x)
        logit_list.append(logit)
        return logit_list


def seg_cross_entropy(logit, label, ignore_index=255):
    """PaddleSeg's CrossEntropyLoss: logits NCHW, labels NHW, pixels labelled ignore_index left out."""
    logit = paddle.transpose(logit, [0, 2, 3, 1])
    loss = F.cross_entropy(logit, label, ignore_index=ignore_index, reduction="none")
    mask = (label != ignore_index).astype("float32")
    return paddle.mean(loss * mask) / (paddle.mean(mask) + 1e-8)


# ---------------------------------------------------------------- seq2seq with attention (PaddleNLP's
# examples/machine_translation/seq2seq), the decoder unrolled by teacher forcing in a Python loop
class Seq2SeqEncoder(nn.Layer):
    def __init__(self, vocab_size, embed_dim, hidden_size, num_layers, rnn="lstm", init_scale=0.1):
        super().__init__()
        self.embedder = nn.Embedding(vocab_size, embed_dim, weight_attr=paddle.ParamAttr(
            initializer=nn.initializer.Uniform(low=-init_scale, high=init_scale)))
        rnn_cls = nn.LSTM if rnn == "lstm" else nn.GRU
        self.rnn = rnn_cls(input_size=embed_dim, hidden_size=hidden_size, num_layers=num_layers, direction="forward")

    def forward(self, sequence, sequence_length):
        inputs = self.embedder(sequence)
        encoder_output, encoder_state = self.rnn(inputs, sequence_length=sequence_length)
        return encoder_output, encoder_state


class AttentionLayer(nn.Layer):
    def __init__(self, hidden_size, bias=False):
        super().__init__()
        self.input_proj = nn.Linear(hidden_size, hidden_size, bias_attr=bias)
        self.output_proj = nn.Linear(hidden_size + hidden_size, hidden_size, bias_attr=bias)

    def forward(self, hidden, encoder_output, encoder_padding_mask):
        encoder_output = self.input_proj(encoder_output)
        attn_scores = paddle.matmul(paddle.unsqueeze(hidden, [1]), encoder_output, transpose_y=True)
        if encoder_padding_mask is not None:
            attn_scores = paddle.add(attn_scores, encoder_padding_mask)
        attn_scores = F.softmax(attn_scores)
        attn_out = paddle.squeeze(paddle.matmul(attn_scores, encoder_output), [1])
        attn_out = paddle.concat([attn_out, hidden], 1)
        return self.output_proj(attn_out)


class Seq2SeqAttnModel(nn.Layer):
    INF = 1e9

    def __init__(self, src_vocab_size=13, trg_vocab_size=11, embed_dim=8, hidden_size=8, num_layers=2, eos_id=1,
                 rnn="lstm"):
        super().__init__()
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.eos_id = eos_id
        self.rnn = rnn
        self.encoder = Seq2SeqEncoder(src_vocab_size, embed_dim, hidden_size, num_layers, rnn)
        self.trg_embedder = nn.Embedding(trg_vocab_size, embed_dim)
        cell_cls = nn.LSTMCell if rnn == "lstm" else nn.GRUCell
        self.cells = nn.LayerList([cell_cls(input_size=embed_dim + hidden_size if i == 0 else hidden_size,
                                            hidden_size=hidden_size) for i in range(num_layers)])
        self.attention_layer = AttentionLayer(hidden_size)
        self.output_layer = nn.Linear(hidden_size, trg_vocab_size)

    def decode_step(self, step_input, states, input_feed, encoder_output, encoder_padding_mask):
        step_input = paddle.concat([step_input, input_feed], 1)
        new_states = []
        for i, cell in enumerate(self.cells):
            out, new_state = cell(step_input, states[i])
            step_input = out
            new_states.append(new_state)
        out = self.attention_layer(step_input, encoder_output, encoder_padding_mask)
        return out, new_states

    def forward(self, src, src_length, trg):
        encoder_output, encoder_final_state = self.encoder(src, src_length)
        if self.rnn == "lstm":  # [num_layers, B, H] pairs -> one (h, c) per layer
            states = [(encoder_final_state[0][i], encoder_final_state[1][i]) for i in range(self.num_layers)]
        else:
            states = [encoder_final_state[i] for i in range(self.num_layers)]
        input_feed = self.cells[0].get_initial_states(batch_ref=encoder_output, shape=[self.hidden_size])
        # attention mask: no attention on the paddings after the eos token
        src_mask = (src != self.eos_id).astype(paddle.get_default_dtype())
        encoder_padding_mask = paddle.unsqueeze((src_mask - 1.0) * self.INF, [1])
        trg_emb = self.trg_embedder(trg)
        outputs = []
        for t in range(trg.shape[1]):  # teacher forcing: the gold token of step t is the input of step t
            input_feed, states = self.decode_step(trg_emb[:, t], states, input_feed, encoder_output,
                                                  encoder_padding_mask)
            outputs.append(input_feed)
        return self.output_layer(paddle.stack(outputs, 1))


# ---------------------------------------------------------------- VAE (the Paddle examples' vae)
class VAE(nn.Layer):
    def __init__(self, in_dim=12, hidden=16, latent=4):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(in_dim, hidden), nn.ReLU())
        self.fc_mu = nn.Linear(hidden, latent)
        self.fc_logvar = nn.Linear(hidden, latent)
        self.decoder = nn.Sequential(nn.Linear(latent, hidden), nn.ReLU(), nn.Linear(hidden, in_dim))

    def reparameterize(self, mu, logvar):
        std = paddle.exp(0.5 * logvar)
        eps = paddle.randn_like(std)
        return mu + eps * std

    def forward(self, x):
        h = self.encoder(x)
        mu, logvar = self.fc_mu(h), self.fc_logvar(h)
        z = self.reparameterize(mu, logvar) if self.training else mu
        return F.sigmoid(self.decoder(z)), mu, logvar


def vae_loss(x, recon, mu, logvar):
    bce = F.binary_cross_entropy(recon, x, reduction="sum")
    kld = -0.5 * paddle.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return (bce + kld) / x.shape[0]


# ---------------------------------------------------------------- BiGRU-CRF (PaddleNLP's layers/crf.py and the
# lexical analysis model); transitions[i, j] scores tag i followed by tag j
class LinearChainCrf(nn.Layer):
    def __init__(self, num_labels, crf_lr=0.1):
        super().__init__()
        self.num_tags = num_labels + 2  # [START] and [STOP]
        self.start_idx = int(self.num_tags - 1)
        self.stop_idx = int(self.num_tags - 2)
        self.transitions = self.create_parameter(attr=paddle.ParamAttr(learning_rate=crf_lr),
                                                 shape=[self.num_tags, self.num_tags], dtype="float32")
        self._initial_alpha = None

    def _initialize_alpha(self, batch_size):
        # alpha accumulates the score of the paths to each tag; every path starts at START
        if self._initial_alpha is None or batch_size > self._initial_alpha.shape[0]:
            initial_alpha = paddle.full((batch_size, self.num_tags - 1), dtype="float32", fill_value=-10000.0)
            alpha_start = paddle.full((batch_size, 1), dtype="float32", fill_value=0.0)
            self._initial_alpha = paddle.concat([initial_alpha, alpha_start], axis=1)
        return self._initial_alpha[:batch_size, :]

    def forward(self, inputs, lengths):
        """log Z: the log-sum-exp of the scores of every path, up to each sequence's length."""
        batch_size, seq_len, n_labels = inputs.shape
        trans_exp = self.transitions.unsqueeze(0).expand([batch_size, n_labels, n_labels])
        alpha = self._initialize_alpha(batch_size)
        all_alpha = []
        for i, logit in enumerate(inputs.transpose([1, 0, 2])):
            # F(n) = logsumexp over the previous tag of F(n-1) + T(y_{n-1}, y_n) + p(y_n)
            alpha = paddle.logsumexp(alpha.unsqueeze(2) + trans_exp + logit.unsqueeze(1), 1)
            all_alpha.append(alpha)
        all_alpha = paddle.stack(all_alpha).transpose([1, 0, 2])
        idxs = paddle.stack([paddle.arange(batch_size, dtype="int64"), lengths - 1], axis=1)
        alpha = paddle.gather_nd(all_alpha, idxs) + self.transitions[:, self.stop_idx].unsqueeze(0)
        return paddle.logsumexp(alpha, 1)

    def gold_score(self, inputs, labels, lengths):
        """The score of the labelled path: emissions, START -> first, each transition, last -> STOP."""
        batch_size, seq_len, n_labels = inputs.shape
        mask = paddle.arange(seq_len, dtype="int64").unsqueeze(0) < lengths.unsqueeze(1)
        unary = paddle.take_along_axis(inputs, labels.unsqueeze(-1), axis=2).squeeze(-1)
        unary = (unary * mask.astype("float32")).sum(1)
        stop = paddle.full([batch_size, seq_len], self.stop_idx, dtype="int64")
        path = paddle.where(mask, labels, stop)  # past its length a sequence sits in STOP
        prev = paddle.concat([paddle.full([batch_size, 1], self.start_idx, dtype="int64"), path], 1)
        nxt = paddle.concat([path, stop[:, :1]], 1)
        trans = paddle.gather(self.transitions.flatten(), (prev * n_labels + nxt).flatten()).reshape([batch_size, -1])
        valid = paddle.arange(seq_len + 1, dtype="int64").unsqueeze(0) <= lengths.unsqueeze(1)
        return unary + (trans * valid.astype("float32")).sum(1)


class ViterbiDecoder(nn.Layer):
    def __init__(self, transitions):
        super().__init__()
        self.transitions = transitions
        self.start_idx, self.stop_idx = -1, -2
        self.num_tags = transitions.shape[0]

    def forward(self, inputs, lengths):
        batch_size, seq_len, n_labels = inputs.shape
        trans_exp = self.transitions.unsqueeze(0).expand([batch_size, n_labels, n_labels])
        alpha = paddle.concat([paddle.full([batch_size, n_labels - 1], -10000.0, dtype="float32"),
                               paddle.zeros([batch_size, 1], dtype="float32")], axis=1)
        historys = []
        for i, logit in enumerate(inputs.transpose([1, 0, 2])):
            alpha_trn_sum = alpha.unsqueeze(2) + trans_exp
            alpha_max = alpha_trn_sum.max(1)
            historys.append(alpha_trn_sum.argmax(1))
            # a finished sequence keeps its alpha: mask by length
            alive = (i < lengths).astype("float32").unsqueeze(1)
            alpha = alive * (alpha_max + logit) + (1 - alive) * alpha
        alpha = alpha + self.transitions[:, self.stop_idx].unsqueeze(0)
        scores, last_ids = paddle.max(alpha, 1), paddle.argmax(alpha, 1)
        # trace back from each sequence's last step: hist[t][b, j] is the best tag before tag j at step t
        path = [last_ids]
        batch_offset = paddle.arange(batch_size, dtype="int64") * n_labels
        for t in range(seq_len - 1, 0, -1):
            prev = paddle.gather(historys[t].flatten(), batch_offset + path[-1])
            path.append(paddle.where(t < lengths, prev, path[-1]))
        return scores, paddle.stack(path[::-1], 1)


class BiGruCrf(nn.Layer):
    def __init__(self, vocab_size=15, emb_dim=8, hidden_size=8, num_labels=4):
        super().__init__()
        self.word_embedding = nn.Embedding(vocab_size, emb_dim)
        self.gru = nn.GRU(emb_dim, hidden_size, num_layers=1, direction="bidirect")
        self.fc = nn.Linear(hidden_size * 2, num_labels + 2)
        self.crf = LinearChainCrf(num_labels)
        self.viterbi_decoder = ViterbiDecoder(self.crf.transitions)

    def forward(self, inputs, lengths, labels=None):
        emission = self.fc(self.gru(self.word_embedding(inputs), sequence_length=lengths)[0])
        if labels is not None:
            return (self.crf(emission, lengths) - self.crf.gold_score(emission, labels, lengths)).mean()
        return self.viterbi_decoder(emission, lengths)


# ---------------------------------------------------------------- PP-YOLOE head (PaddleDetection's
# heads/ppyoloe_head.py, eval branch with anchors made from the feature sizes)
def bias_init_with_prob(prior_prob=0.01):
    return float(-np.log((1 - prior_prob) / prior_prob))


class ConvBNAct(nn.Layer):
    def __init__(self, ch_in, ch_out, filter_size=3, stride=1, act="swish"):
        super().__init__()
        self.conv = nn.Conv2D(ch_in, ch_out, filter_size, stride=stride, padding=(filter_size - 1) // 2,
                              bias_attr=False)
        self.bn = nn.BatchNorm2D(ch_out)
        self.act = nn.Swish() if act == "swish" else nn.Identity()

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class ESEAttn(nn.Layer):
    def __init__(self, feat_channels, act="swish"):
        super().__init__()
        self.fc = nn.Conv2D(feat_channels, feat_channels, 1)
        self.conv = ConvBNAct(feat_channels, feat_channels, 1, act=act)
        nn.initializer.Normal(std=0.001)(self.fc.weight)

    def forward(self, feat, avg_feat):
        weight = F.sigmoid(self.fc(avg_feat))
        return self.conv(feat * weight)


def batch_distance2bbox(points, distance):
    lt, rb = paddle.split(distance, 2, -1)
    x1y1 = -lt + points
    x2y2 = rb + points
    return paddle.concat([x1y1, x2y2], -1)


class PPYOLOEHead(nn.Layer):
    def __init__(self, in_channels=(8, 4), num_classes=3, fpn_strides=(16, 8), grid_cell_offset=0.5, reg_max=4):
        super().__init__()
        self.in_channels = in_channels
        self.num_classes = num_classes
        self.fpn_strides = fpn_strides
        self.grid_cell_offset = grid_cell_offset
        self.reg_max = reg_max
        self.stem_cls = nn.LayerList([ESEAttn(c) for c in in_channels])
        self.stem_reg = nn.LayerList([ESEAttn(c) for c in in_channels])
        self.pred_cls = nn.LayerList([nn.Conv2D(c, num_classes, 3, padding=1) for c in in_channels])
        self.pred_reg = nn.LayerList([nn.Conv2D(c, 4 * (reg_max + 1), 3, padding=1) for c in in_channels])
        self.proj_conv = nn.Conv2D(reg_max + 1, 1, 1, bias_attr=False)
        self._init_weights()

    def _init_weights(self):
        bias_cls = bias_init_with_prob(0.01)
        for cls_, reg_ in zip(self.pred_cls, self.pred_reg):
            nn.initializer.Constant(0.01)(cls_.weight)
            nn.initializer.Constant(bias_cls)(cls_.bias)
            nn.initializer.Constant(0.02)(reg_.weight)
            nn.initializer.Constant(1.0)(reg_.bias)
        self.proj = paddle.linspace(0, self.reg_max, self.reg_max + 1)
        self.proj_conv.weight.set_value(self.proj.reshape([1, self.reg_max + 1, 1, 1]))
        self.proj_conv.weight.stop_gradient = True

    def _generate_anchors(self, feats, dtype="float32"):
        anchor_points, stride_tensor = [], []
        for i, stride in enumerate(self.fpn_strides):
            _, _, h, w = feats[i].shape
            shift_x = paddle.arange(end=w) + self.grid_cell_offset
            shift_y = paddle.arange(end=h) + self.grid_cell_offset
            shift_y, shift_x = paddle.meshgrid(shift_y, shift_x)
            anchor_point = paddle.cast(paddle.stack([shift_x, shift_y], axis=-1), dtype=dtype)
            anchor_points.append(anchor_point.reshape([-1, 2]))
            stride_tensor.append(paddle.full([h * w, 1], stride, dtype=dtype))
        return paddle.concat(anchor_points), paddle.concat(stride_tensor)

    def forward(self, feats):
        anchor_points, stride_tensor = self._generate_anchors(feats)
        cls_score_list, reg_dist_list = [], []
        for i, feat in enumerate(feats):
            _, _, h, w = feat.shape
            l = h * w  # noqa: E741 - PaddleDetection's name
            avg_feat = F.adaptive_avg_pool2d(feat, (1, 1))
            cls_logit = self.pred_cls[i](self.stem_cls[i](feat, avg_feat) + feat)
            reg_dist = self.pred_reg[i](self.stem_reg[i](feat, avg_feat))
            reg_dist = reg_dist.reshape([-1, 4, self.reg_max + 1, l]).transpose([0, 2, 3, 1])
            reg_dist = self.proj_conv(F.softmax(reg_dist, axis=1)).squeeze(1)
            cls_score_list.append(F.sigmoid(cls_logit).reshape([-1, self.num_classes, l]))
            reg_dist_list.append(reg_dist)
        cls_scores = paddle.concat(cls_score_list, axis=-1)
        pred_bboxes = batch_distance2bbox(anchor_points, paddle.concat(reg_dist_list, axis=1))
        pred_bboxes *= stride_tensor
        return cls_scores, pred_bboxes
