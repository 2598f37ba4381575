"""The side-by-side workloads, written once for every system that has a Paddle-2.x-like or a
torch-like tensor API: `runtime` (eager and under `sot.to_static`), PaddlePaddle (eager and
`paddle.jit.to_static(full_graph=False)`) and PyTorch (eager and `torch.compile`).

Each workload compiles its source afresh for every variant (`fresh`: a file name and first line
of its own), so no two JITs, nor two variants of one JIT, share a code object and with it a
cache entry. Models of every system start from the same weights (`runtime`'s, seeded), so each
variant's first result is checked against `runtime` eager's before anything is timed. A NumPy
floor (the same math written directly in NumPy) is given where one is meaningful.
"""
from __future__ import annotations

import contextlib
import io
import itertools
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from mlp_step import NumpyMLPStep

__all__ = ["System", "Workload", "WORKLOADS", "fresh", "to_numpy"]

SEED = 0
_serial = itertools.count(1)


def fresh(source: str, name: str, namespace: dict[str, Any]) -> Any:
    """`name` from `source` compiled now, under a file name and first line no other call gets:
    code objects that compare unequal to every other variant's (JIT caches key on code)."""
    n = next(_serial)
    code = compile("\n" * n + source, f"<workload {name} #{n}>", "exec")
    ns = dict(namespace)
    exec(code, ns)
    return ns[name]


@dataclass(frozen=True)
class System:
    """One column of the table: a tensor library, and the JIT applied to the workload (None: eager)."""

    name: str
    lib: Any
    jit: Callable[[Any], Any] | None = None

    @property
    def torch_like(self) -> bool:
        return self.lib.__name__ == "torch"

    @property
    def nn(self) -> Any:
        return self.lib.nn

    @property
    def functional(self) -> Any:
        return self.lib.nn.functional

    @property
    def from_numpy(self) -> Callable[[np.ndarray], Any]:
        """The library's own array-to-tensor function (what user code calls; a JIT knows it)."""
        return self.lib.from_numpy if self.torch_like else self.lib.to_tensor

    def tensor(self, a: np.ndarray) -> Any:
        return self.from_numpy(np.ascontiguousarray(a))

    def compiled(self, fn: Any) -> Any:
        return fn if self.jit is None else self.jit(fn)

    def no_grad(self) -> Any:
        return self.lib.no_grad()

    def optimizer(self, kind: str, params: Any, lr: float) -> tuple[Any, Callable[[], None]]:
        """(optimizer, its clear-gradients call)."""
        if self.torch_like:
            opt = getattr(self.lib.optim, kind)(params, lr=lr)
            return opt, opt.zero_grad
        opt = getattr(self.lib.optimizer, kind)(learning_rate=lr, parameters=params)
        return opt, opt.clear_grad

    def model_namespace(self) -> dict[str, Any]:
        nn = self.nn
        if self.torch_like:
            return {"Base": nn.Module, "Linear": nn.Linear, "Conv": nn.Conv2d, "BatchNorm": nn.BatchNorm2d,
                    "MaxPool": nn.MaxPool2d, "F": self.functional, "flatten": self.lib.flatten}
        return {"Base": nn.Layer, "Linear": nn.Linear, "Conv": nn.Conv2D, "BatchNorm": nn.BatchNorm2D,
                "MaxPool": nn.MaxPool2D, "F": self.functional, "flatten": self.lib.flatten}

    def load(self, layer: Any, weight: np.ndarray, bias: np.ndarray) -> None:
        """Set a Linear or conv layer's weight ([in, out] for a Linear, as Paddle stores it) and bias."""
        if self.torch_like:
            with self.lib.no_grad():
                layer.weight.copy_(self.lib.from_numpy(np.ascontiguousarray(weight.T if weight.ndim == 2 else weight)))
                layer.bias.copy_(self.lib.from_numpy(bias))
        else:
            layer.weight.set_value(weight)
            layer.bias.set_value(bias)


def to_numpy(value: Any) -> np.ndarray:
    if hasattr(value, "detach"):
        value = value.detach()
    return np.asarray(value.numpy() if hasattr(value, "numpy") else value)


@dataclass(frozen=True)
class Workload:
    """`make(system)` gives the call to time (its result checked against runtime eager's first);
    `floor()` the NumPy call doing the same math, or None."""

    key: str
    title: str
    make: Callable[[System], Callable[[], Any]]
    floor: Callable[[], Callable[[], Any]] | None = None
    rtol: float = 1e-5
    quiet: bool = False   # the workload prints: its calls run with stdout to a null writer


# ---------------------------------------------------------------- function workloads
def _function(source: str, namespace: Callable[[System | None], dict], x: np.ndarray):
    """make/floor of a workload that is one function of one tensor."""
    def make(system: System) -> Callable[[], Any]:
        fn = system.compiled(fresh(source, "f", namespace(system)))
        t = system.tensor(x)
        return lambda: fn(t)

    def floor() -> Callable[[], Any]:
        fn = fresh(source, "f", namespace(None))
        return lambda: fn(x.copy())
    return make, floor


def _lib_namespace(system: System | None) -> dict:
    return {"paddle": np if system is None else system.lib}


_W1 = _function("def f(x):\n    return x + 1\n", lambda s: {}, np.ones([1], np.float32))
_W1B_GLOBALS = {f"g_{i}": 0.001 * (i + 1) for i in range(100)}
_W1b = _function("def f(x):\n" + "".join(f"    x = x + g_{i}\n" for i in range(100)) + "    return x\n",
                 lambda s: dict(_W1B_GLOBALS), np.ones([1], np.float32))
_W2 = _function("def f(x):\n" + "".join(("    x = x * 1.01\n", "    x = x + 0.1\n", "    x = paddle.tanh(x)\n")[i % 3]
                                        for i in range(100)) + "    return x\n",
                _lib_namespace, np.random.default_rng(SEED).standard_normal((64, 64)).astype(np.float32))

_W4_SOURCES = {
    "W4a": "def f(x):\n    y = x + 1\n    print('hi')\n    return y * 2\n",
    "W4b": "def f(x):\n    if x.sum() > 0:\n        return x + 1\n    else:\n        return x - 1\n",
    "W4c": "def f(x):\n    y = x * 2 + 1\n    a = y.numpy()\n    z = T(a)\n    return z * 3 - 1\n",
}


def _w4(key: str) -> Callable[[System], Callable[[], Any]]:
    def namespace(system: System) -> dict:
        return {"T": system.from_numpy}
    return _function(_W4_SOURCES[key], namespace, np.ones([16], np.float32))[0]


# ---------------------------------------------------------------- model workloads
_MLP_SOURCE = """
class Net(Base):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2, self.fc3 = Linear(784, 512), Linear(512, 512), Linear(512, 10)

    def forward(self, x):
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)
"""

_CNN_SOURCE = """
class Net(Base):
    def __init__(self):
        super().__init__()
        self.conv1, self.bn1 = Conv(3, 16, 3, padding=1), BatchNorm(16)
        self.conv2, self.bn2 = Conv(16, 32, 3, padding=1), BatchNorm(32)
        self.pool = MaxPool(2)
        self.fc = Linear(32 * 16 * 16, 10)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = F.relu(self.bn2(self.conv2(x)))
        x = self.pool(x)
        return self.fc(flatten(x, 1))
"""

_STEP_SOURCE = """
def f():
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    clear()
    return loss
"""


def _weights(layers: tuple[str, ...], source: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Seeded `runtime` initial weights of the model's weighted layers (BatchNorm keeps its defaults)."""
    import runtime  # noqa: PLC0415 - the reference system; loaded after the harness pinned threads
    runtime.seed(SEED)
    model = fresh(source, "Net", System("runtime", runtime).model_namespace())()
    return {n: (getattr(model, n).weight.numpy(), getattr(model, n).bias.numpy()) for n in layers}


def _model(system: System, source: str, layers: tuple[str, ...]) -> Any:
    model = fresh(source, "Net", system.model_namespace())()
    for name, (w, b) in _weights(layers, source).items():
        system.load(getattr(model, name), w, b)
    return model


_MLP_LAYERS = ("fc1", "fc2", "fc3")
_CNN_LAYERS = ("conv1", "conv2", "fc")


def _batch(shape: tuple[int, ...], classes: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(SEED)
    return rng.standard_normal(shape).astype(np.float32), rng.integers(0, classes, shape[0]).astype(np.int64)


def _train_step(system: System, source: str, layers: tuple[str, ...], shape: tuple[int, ...], optimizer: str,
                lr: float) -> Callable[[], Any]:
    """One training step: forward (compiled, for a JIT), cross-entropy, backward, optimizer step, clear."""
    model = _model(system, source, layers)
    model.train()
    x, y = _batch(shape, 10)
    opt, clear = system.optimizer(optimizer, model.parameters(), lr)
    return fresh(_STEP_SOURCE, "f", {"F": system.functional, "model": system.compiled(model), "x": system.tensor(x),
                                     "y": system.tensor(y), "opt": opt, "clear": clear})


def _w3(system: System) -> Callable[[], Any]:
    return _train_step(system, _MLP_SOURCE, _MLP_LAYERS, (128, 784), "Adam", 1e-3)


def _w3_floor() -> Callable[[], Any]:
    x, y = _batch((128, 784), 10)
    step = NumpyMLPStep([a for name in _MLP_LAYERS for a in _weights(_MLP_LAYERS, _MLP_SOURCE)[name]])
    return lambda: step.step(x, y)


def _w5(system: System) -> Callable[[], Any]:
    model = _model(system, _CNN_SOURCE, _CNN_LAYERS)
    model.eval()
    fn = system.compiled(model)
    x = system.tensor(_batch((32, 3, 32, 32), 10)[0])

    def call() -> Any:
        with system.no_grad():
            return fn(x)
    return call


def _conv3x3_relu(x: np.ndarray, kernel: np.ndarray, shift: np.ndarray) -> np.ndarray:
    """NHWC 3x3 same-padded conv by im2col and one matmul, plus a per-channel shift, then ReLU."""
    n, h, w, c = x.shape
    padded = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    cols = np.empty((n, h, w, 3, 3, c), np.float32)
    for i in range(3):
        for j in range(3):
            cols[:, :, :, i, j, :] = padded[:, i:i + h, j:j + w, :]
    y = cols.reshape(n * h * w, 9 * c) @ kernel
    y += shift
    np.maximum(y, 0, out=y)
    return y.reshape(n, h, w, -1)


def _w5_floor() -> Callable[[], Any]:
    """W5 in NumPy, NHWC. Eval BatchNorm with fresh statistics is x / sqrt(1 + eps), folded into the conv."""
    weights = _weights(_CNN_LAYERS, _CNN_SOURCE)
    bn = np.float32(1 / np.sqrt(1 + 1e-5))
    k1, k2 = (weights[n][0].transpose(2, 3, 1, 0).reshape(-1, weights[n][0].shape[0]) * bn for n in ("conv1", "conv2"))
    s1, s2 = weights["conv1"][1] * bn, weights["conv2"][1] * bn
    fc_w, fc_b = weights["fc"]
    fc_nhwc = np.ascontiguousarray(fc_w.reshape(32, 16, 16, 10).transpose(1, 2, 0, 3).reshape(-1, 10))
    x = _batch((32, 3, 32, 32), 10)[0]

    def forward() -> np.ndarray:
        h = _conv3x3_relu(np.ascontiguousarray(x.transpose(0, 2, 3, 1)), k1, s1)
        h = _conv3x3_relu(h, k2, s2)
        n, hh, ww, c = h.shape
        h = h.reshape(n, hh // 2, 2, ww // 2, 2, c).max(axis=(2, 4))
        return h.reshape(n, -1) @ fc_nhwc + fc_b
    return forward


def _w5t(system: System) -> Callable[[], Any]:
    return _train_step(system, _CNN_SOURCE, _CNN_LAYERS, (32, 3, 32, 32), "SGD", 0.01)


WORKLOADS: tuple[Workload, ...] = (
    Workload("W1", "cache hit: x + 1 on float32 [1]", *_W1),
    Workload("W1b", "guards: 100 statements x = x + g_i, g_i global floats, float32 [1]", *_W1b),
    Workload("W2", "100-op chain (*1.01, +0.1, tanh) on float32 [64, 64]", *_W2, rtol=1e-4),
    Workload("W3", "MLP 784-512-512-10 training step, batch 128, Adam (forward compiled)", _w3, _w3_floor,
             rtol=1e-4),
    Workload("W4a", "one break: print between two ops, float32 [16]", _w4("W4a"), quiet=True),
    Workload("W4b", "one break: if on a tensor's sum, float32 [16]", _w4("W4b")),
    Workload("W4c", "one break: .numpy() and back, float32 [16]", _w4("W4c")),
    Workload("W5", "CNN inference: 2 x (conv3x3+BN+ReLU), maxpool, linear; [32, 3, 32, 32]", _w5, _w5_floor,
             rtol=1e-3),
    Workload("W5t", "the CNN's training step, SGD (forward compiled)", _w5t, rtol=1e-3),
)


class _Null(io.TextIOBase):
    """A writer that keeps nothing (a printing workload timed for millions of calls)."""

    def write(self, s: str) -> int:
        return len(s)


def silenced(quiet: bool) -> contextlib.AbstractContextManager:
    """stdout to a null writer while a printing workload runs."""
    return contextlib.redirect_stdout(_Null()) if quiet else contextlib.nullcontext()
