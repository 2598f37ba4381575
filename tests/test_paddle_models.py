"""Paddle 2.x model code, written as a Paddle user would, trains under `import runtime as paddle`.

Oracles: the loss must fall and the task must be learned (a task a wrong gradient cannot
learn), whole-model gradients match finite differences, and a saved model reloads to the
same predictions in a fresh instance.
"""
import numpy as np

import runtime as paddle
import runtime.nn as nn
import runtime.nn.functional as F


class LeNet(nn.Layer):
    def __init__(self, num_classes=2):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2D(1, 4, 3, padding=1), nn.BatchNorm2D(4), nn.ReLU(), nn.MaxPool2D(2, 2),
            nn.Conv2D(4, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2D(1))
        self.head = nn.Sequential(nn.Flatten(), nn.Dropout(0.1), nn.Linear(8, num_classes))

    def forward(self, x):
        return self.head(self.features(x))


def _bright_half_task(n, rng):
    """Images with a bright blob in the top or bottom half; the label says which."""
    x = rng.normal(0, 0.3, (n, 1, 8, 8)).astype(np.float32)
    y = rng.integers(0, 2, n)
    rows = np.where(y == 0, rng.integers(0, 3, n), rng.integers(5, 8, n))
    cols = rng.integers(0, 7, n)
    x[np.arange(n), 0, rows, cols] += 3.0
    x[np.arange(n), 0, rows, cols + 1] += 3.0
    return x, y.astype(np.int64)


def test_lenet_trains_and_round_trips_through_save_load(tmp_path):
    paddle.seed(1)
    rng = np.random.default_rng(1)
    xs, ys = _bright_half_task(256, rng)
    loader = paddle.io.DataLoader(paddle.io.TensorDataset([paddle.to_tensor(xs), paddle.to_tensor(ys)]),
                                  batch_size=32, shuffle=True, drop_last=True)
    model = LeNet()
    opt = paddle.optimizer.Momentum(learning_rate=0.05, momentum=0.9, parameters=model.parameters(),
                                    weight_decay=1e-4)
    loss_fn = nn.CrossEntropyLoss()
    first = last = None
    for _ in range(6):
        for x, y in loader:
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
            opt.clear_grad()
            first = float(loss) if first is None else first
            last = float(loss)
    assert last < 0.5 * first
    model.eval()
    tx, ty = _bright_half_task(128, np.random.default_rng(2))
    with paddle.no_grad():
        logits = model(paddle.to_tensor(tx))
    assert (logits.argmax(axis=1).numpy() == ty).mean() > 0.9

    paddle.save(model.state_dict(), str(tmp_path / "lenet.pdparams"))
    paddle.save(opt.state_dict(), str(tmp_path / "lenet.pdopt"))
    fresh = LeNet()
    fresh.set_state_dict(paddle.load(str(tmp_path / "lenet.pdparams")))
    fresh.eval()
    with paddle.no_grad():
        np.testing.assert_array_equal(fresh(paddle.to_tensor(tx)).numpy(), logits.numpy())
    opt2 = paddle.optimizer.Momentum(learning_rate=0.05, momentum=0.9, parameters=fresh.parameters(),
                                     weight_decay=1e-4)
    opt2.set_state_dict(paddle.load(str(tmp_path / "lenet.pdopt")))


class TinyEncoderClassifier(nn.Layer):
    def __init__(self, vocab=12, d_model=16, classes=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        layer = nn.TransformerEncoderLayer(d_model, nhead=2, dim_feedforward=32, dropout=0.0)
        self.encoder = nn.TransformerEncoder(layer, num_layers=2, norm=nn.LayerNorm(d_model))
        self.out = nn.Linear(d_model, classes)

    def forward(self, tokens):
        h = self.encoder(self.embed(tokens))
        return self.out(h.mean(axis=1))


def test_transformer_encoder_learns_whether_a_token_occurs():
    paddle.seed(3)
    rng = np.random.default_rng(3)
    tokens = rng.integers(1, 12, (64, 6))
    labels = (tokens == 7).any(axis=1).astype(np.int64)
    x, y = paddle.to_tensor(tokens), paddle.to_tensor(labels)
    model = TinyEncoderClassifier()
    sched = paddle.optimizer.lr.LinearWarmup(learning_rate=5e-3, warmup_steps=5, start_lr=1e-4, end_lr=5e-3)
    opt = paddle.optimizer.AdamW(learning_rate=sched, parameters=model.parameters(), weight_decay=0.01,
                                 grad_clip=nn.ClipGradByGlobalNorm(1.0))
    losses = []
    for _ in range(60):
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.clear_grad()
        sched.step()
        losses.append(float(loss))
    assert losses[-1] < 0.3 * losses[0]
    with paddle.no_grad():
        acc = (model(x).argmax(axis=-1).numpy() == labels).mean()
    assert acc > 0.95


def test_whole_model_gradient_matches_finite_differences():
    paddle.set_default_dtype("float64")
    paddle.seed(4)
    model = nn.Sequential(nn.Conv2D(2, 3, 3, padding=1), nn.BatchNorm2D(3), nn.GELU(),
                          nn.AvgPool2D(2), nn.Flatten(), nn.Linear(12, 4), nn.LayerNorm(4))
    rng = np.random.default_rng(4)
    x = paddle.to_tensor(rng.normal(size=(2, 2, 4, 4)))
    target = paddle.to_tensor(rng.normal(size=(2, 4)))

    def loss_value():
        return F.mse_loss(model(x), target)

    loss_value().backward()
    for p in (model[0].weight, model[5].weight, model[1].weight):
        analytic = p.grad.numpy().copy()
        flat = p.numpy().reshape(-1)
        for j in range(0, flat.size, max(1, flat.size // 6)):
            numeric = []
            for sign in (1, -1):
                values = flat.copy()
                values[j] += sign * 1e-6
                p.set_value(values.reshape(p.shape))
                with paddle.no_grad():
                    numeric.append(float(loss_value()))
            p.set_value(flat.reshape(p.shape))
            np.testing.assert_allclose(analytic.reshape(-1)[j], (numeric[0] - numeric[1]) / 2e-6,
                                       rtol=1e-5, atol=1e-8)
