"""Graph breaks, and how rewriting removes each one.

`Net.forward` decides on a tensor's value (`if h.mean() > 0.5`), reads a tensor as a Python float
to print it, and reads the tensor as a NumPy array (`.numpy().max()`). Under `sot.to_static` each
of these is a graph break: the JIT compiles the tensor work around it, runs that one instruction
eagerly and resumes in a compiled function after it. `sot.explain` lists the breaks with their
reason codes; `Rewritten.forward` computes the same thing without them (`paddle.where` for the
branch, a tensor `max` for the scale, the tensor itself printed: a print of tensors is made right
after the graph, with eager's text, and does not break) and is captured as one graph.

    python examples/graph_breaks.py       (or: sot run examples/graph_breaks.py)
"""
from __future__ import annotations

import numpy as np

import runtime as paddle
import runtime.nn as nn
import runtime.nn.functional as F
import sot
from sot.translation.reasons import REASONS


class Net(nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x):
        h = F.relu(self.fc1(x))
        if h.mean() > 0.5:  # SOT-B001: a Python decision on a tensor's value
            h = h * 0.5
        print("hidden norm", float(h.norm()))  # SOT-B002 (float of a tensor); the print itself is deferred
        scale = h.numpy().max()  # SOT-B002 (.numpy()), SOT-B003 (NumPy on values)
        return self.fc2(h) / scale


class Rewritten(Net):
    def forward(self, x):
        h = F.relu(self.fc1(x))
        h = paddle.where(h.mean() > 0.5, h * 0.5, h)  # both branches as tensor work
        print("hidden norm", h.norm())  # a tensor printed: made after the graph, no break
        scale = h.max()  # stays a tensor
        return self.fc2(h) / scale


def main() -> tuple[sot.Explanation, sot.Explanation]:
    """Explain one call of each version on the same weights and input; both explanations."""
    paddle.seed(0)
    x = paddle.to_tensor(np.random.default_rng(0).random((4, 8), dtype=np.float32))
    net, rewritten = Net(), Rewritten()
    rewritten.set_state_dict(net.state_dict())
    before = sot.explain(sot.to_static(Net.forward), net, x)
    print(before)
    for code in dict.fromkeys(b.code for b in before.breaks):
        print(f"  {code}: {REASONS[code].hint}")
    after = sot.explain(sot.to_static(Rewritten.forward), rewritten, x)
    print(after)
    same = np.allclose(before.result.numpy(), after.result.numpy(), rtol=1e-6, atol=1e-6)
    print(f"same result: {same}; breaks {before.break_count} -> {after.break_count}")
    return before, after


if __name__ == "__main__":
    main()
