"""Train an MLP on scikit-learn's handwritten digits (8x8 images, shipped with scikit-learn).

Written exactly as Paddle 2.x code: swap `import runtime as paddle` for `import paddle`
and it runs there too. The model's forward is compiled with `sot.to_static` (`--eager` leaves
it eager). Prints a progress bar per epoch, the held-out accuracy and what the JIT captured
(`sot run --report out.json examples/train_mlp.py` then `sot report out.json` says more).
"""
from __future__ import annotations

import sys
import time

import numpy as np
from sklearn.datasets import load_digits

import runtime as paddle
import runtime.nn as nn
import runtime.nn.functional as F
import sot
from runtime.io import DataLoader, TensorDataset
from sot.tools.formats import headline


class MLP(nn.Layer):
    def __init__(self, in_features: int = 64, hidden: int = 128, classes: int = 10):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(in_features, hidden), nn.ReLU(), nn.Dropout(0.1),
                                 nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, classes))

    def forward(self, x):
        return self.net(x)


def progress(epoch: int, done: int, total: int, loss: float, started: float) -> None:
    """A one-line progress bar redrawn in place (only the final state when not on a terminal)."""
    if done != total and not sys.stdout.isatty():
        return
    width = 30
    filled = int(width * done / total)
    bar = "#" * filled + "-" * (width - filled)
    sys.stdout.write(f"\repoch {epoch:2d} [{bar}] {done:3d}/{total} loss {loss:.4f} "
                     f"{time.perf_counter() - started:5.2f}s")
    if done == total:
        sys.stdout.write("\n")
    sys.stdout.flush()


def evaluate(model: nn.Layer, x: paddle.Tensor, y: np.ndarray) -> float:
    model.eval()
    with paddle.no_grad():
        pred = model(x).argmax(axis=1).numpy()
    model.train()
    return float((pred == y).mean())


def main(epochs: int = 20, batch_size: int = 64, compiled: bool = True) -> float:
    paddle.seed(2024)
    digits = load_digits()
    images = (digits.data / 16.0).astype(np.float32)
    labels = digits.target.astype(np.int64)
    order = np.random.default_rng(0).permutation(len(images))
    split = int(0.8 * len(images))
    train_idx, test_idx = order[:split], order[split:]

    train_set = TensorDataset([paddle.to_tensor(images[train_idx]), paddle.to_tensor(labels[train_idx])])
    loader = DataLoader(train_set, batch_size=batch_size, shuffle=True)
    model = sot.to_static(MLP()) if compiled else MLP()
    scheduler = paddle.optimizer.lr.CosineAnnealingDecay(learning_rate=3e-3, T_max=epochs)
    opt = paddle.optimizer.Adam(learning_rate=scheduler, parameters=model.parameters(),
                                grad_clip=nn.ClipGradByGlobalNorm(5.0))
    for epoch in range(1, epochs + 1):
        started = time.perf_counter()
        for i, (x, y) in enumerate(loader, 1):
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            opt.clear_grad()
            progress(epoch, i, len(loader), float(loss), started)
        scheduler.step()
    accuracy = evaluate(model, paddle.to_tensor(images[test_idx]), labels[test_idx])
    print(f"held-out accuracy: {accuracy:.2%} on {len(test_idx)} images")
    if compiled:
        print(f"JIT: {headline(sot.report())}")
    return accuracy


if __name__ == "__main__":
    acc = main(compiled="--eager" not in sys.argv[1:])
    sys.exit(0 if acc >= 0.95 else 1)
