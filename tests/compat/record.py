"""Record the corpus's reference numbers with real PaddlePaddle (a scratch environment, never the suite).

    COMPAT_REAL_PADDLE=1 /path/to/paddle-venv/bin/python tests/compat/record.py [MODEL ...]

For each model: its weights set by `compat_api.fill_state`, its inputs from `compat_api.inputs_of`,
the eval-mode outputs, then in train mode the loss `reference_loss` and the gradient of every
parameter, written to fixtures/<model>.npz. The fixtures were recorded with PaddlePaddle 3.3.1 (CPU).
"""
from __future__ import annotations

import importlib
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from compat_api import paddle, to_tensors  # noqa: E402
from reference import outputs_of, prepared, reference_loss  # noqa: E402
from models import MODELS  # noqa: E402


def record(name: str) -> None:
    module = importlib.import_module(f"models.{name}")
    layer, arrays = prepared(module)
    layer.eval()
    with paddle.no_grad():
        outs = outputs_of(layer(*to_tensors(arrays)))
    layer.train()
    loss = reference_loss(layer(*to_tensors(arrays)))
    loss.backward()
    grads = {f"grad:{n}": p.grad.numpy() for n, p in layer.named_parameters() if p.grad is not None}
    np.savez_compressed(os.path.join(HERE, "fixtures", f"{name}.npz"), loss=loss.numpy(),
                        **{f"out{i}": o for i, o in enumerate(outs)}, **grads)
    print(f"{name}: {len(outs)} output(s), {len(grads)} gradients, paddle {paddle.__version__}")


if __name__ == "__main__":
    if os.environ.get("COMPAT_REAL_PADDLE") != "1":
        sys.exit("record.py records with real Paddle: run it with COMPAT_REAL_PADDLE=1 where paddle is installed")
    for model in sys.argv[1:] or MODELS:
        record(model)
