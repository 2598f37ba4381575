"""Train a small ResNet-style CNN on scikit-learn's handwritten digits, eager and compiled.

Each 8x8 digit is one channel; the network is a stem convolution, two residual blocks
(conv-BatchNorm-ReLU twice, added to the block's input) and a linear head over the pooled
features. The same model (same seed, same batches) trains once eagerly and once with its forward
compiled by `sot.to_static`; the script prints the time per epoch of each, the held-out accuracy
of each (equal: the JIT computes what eager code computes) and what the JIT captured.

    python examples/train_cnn.py [--epochs N]     (or: sot run examples/train_cnn.py)
"""
from __future__ import annotations

import argparse
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


class Residual(nn.Layer):
    def __init__(self, channels: int):
        super().__init__()
        self.conv1 = nn.Conv2D(channels, channels, 3, padding=1)
        self.bn1 = nn.BatchNorm2D(channels)
        self.conv2 = nn.Conv2D(channels, channels, 3, padding=1)
        self.bn2 = nn.BatchNorm2D(channels)

    def forward(self, x):
        h = F.relu(self.bn1(self.conv1(x)))
        return F.relu(x + self.bn2(self.conv2(h)))


class ResNet(nn.Layer):
    def __init__(self, channels: int = 8, classes: int = 10):
        super().__init__()
        self.stem = nn.Conv2D(1, channels, 3, padding=1)
        self.blocks = nn.Sequential(Residual(channels), Residual(channels))
        self.pool = nn.AdaptiveAvgPool2D(1)
        self.head = nn.Linear(channels, classes)

    def forward(self, x):
        h = self.blocks(F.relu(self.stem(x)))
        return self.head(self.pool(h).flatten(1))


def train(compiled: bool, epochs: int, limit: int | None) -> tuple[float, list[float], nn.Layer]:
    """Train from the same seed; the held-out accuracy, the seconds of each epoch and the model."""
    paddle.seed(7)
    digits = load_digits()
    images = (digits.images / 16.0).astype(np.float32)[:, None]
    labels = digits.target.astype(np.int64)
    order = np.random.default_rng(0).permutation(len(images))[:limit]
    split = int(0.8 * len(order))
    train_idx, test_idx = order[:split], order[split:]
    loader = DataLoader(TensorDataset([paddle.to_tensor(images[train_idx]), paddle.to_tensor(labels[train_idx])]),
                        batch_size=32, shuffle=True)
    model = sot.to_static(ResNet()) if compiled else ResNet()
    opt = paddle.optimizer.Adam(learning_rate=1e-2, parameters=model.parameters())
    times = []
    for _ in range(epochs):
        started = time.perf_counter()
        for x, y in loader:
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            opt.clear_grad()
        times.append(time.perf_counter() - started)
    model.eval()
    with paddle.no_grad():
        pred = model(paddle.to_tensor(images[test_idx])).argmax(axis=1).numpy()
    return float((pred == labels[test_idx]).mean()), times, model


def main(epochs: int = 8, limit: int | None = None) -> tuple[float, float]:
    """Eager then compiled training; prints times per epoch, accuracies and the JIT summary."""
    eager_acc, eager_times, _ = train(False, epochs, limit)
    jit_acc, jit_times, jit_model = train(True, epochs, limit)  # kept: the report reads its translator
    for epoch, (e, j) in enumerate(zip(eager_times, jit_times), 1):
        print(f"epoch {epoch}: eager {e:6.2f}s  compiled {j:6.2f}s  ({j / e:.2f}x)")
    print(f"held-out accuracy: eager {eager_acc:.2%}, compiled {jit_acc:.2%}")
    print(f"JIT: {headline(sot.report())}")
    del jit_model
    return eager_acc, jit_acc


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=8, help="training epochs (default 8)")
    args = parser.parse_args()
    eager_acc, jit_acc = main(args.epochs)
    sys.exit(0 if jit_acc == eager_acc and jit_acc >= 0.85 else 1)
