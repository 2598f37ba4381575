"""A model the JIT cannot take in one graph, to look at with the `sot` command.

`Net.forward` decides on a tensor's value (a graph break), is called with three batch sizes (the
batch dim is made dynamic after the first recompile) and, in `Net.head`, reads the batch size as a
Python int (that dim is kept static there). The README's "See what the JIT did" section shows what
the `sot` command says about it:

    sot run examples/see_what_jit_did.py        # writes sot-report.json
    sot report                                  # what was captured, what broke and why
    sot cache why                               # which guard failed on each recompile
    sot report --format html -o sot-html        # the same as a coverage-style site
"""
from __future__ import annotations

import numpy as np

import runtime as paddle
import runtime.nn as nn
import runtime.nn.functional as F
import sot


class Net(nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x):
        h = F.relu(self.fc1(x))
        # a Python decision on a tensor's value: the graph breaks here
        if h.mean() > 0.5:
            h = h * 0.5
        return self.head(h, x)

    def head(self, h, x):
        # the batch size read as a Python int: that dim stays static
        if x.shape[0] > 4:
            h = h * 2
        return self.fc2(h)


def main() -> list[np.ndarray]:
    """Three batch sizes through the compiled model; the outputs (equal to eager's)."""
    paddle.seed(0)
    net = Net()
    compiled = sot.to_static(Net())
    compiled.set_state_dict(net.state_dict())
    rng = np.random.default_rng(0)
    outputs = []
    for batch in (2, 3, 6, 6):
        x = paddle.to_tensor(rng.random((batch, 8), dtype=np.float32))
        got, want = compiled(x).numpy(), net(x).numpy()
        np.testing.assert_array_equal(got, want)
        outputs.append(got)
    return outputs


if __name__ == "__main__":
    main()
