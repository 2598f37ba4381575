"""Training steps under `sot.to_static`: eager vs compiled vs the NumPy floor, from one run.

- MLP (benchmarks/mlp_step.py): Linear 784->512->512->10 with ReLUs, cross-entropy, batch 128,
  Adam lr 1e-3; its hand-written NumPy step is the floor.
- CNN: a small CNN's layers in training mode (conv3x3 3->16 + BN + ReLU, conv3x3 16->32 + BN + ReLU,
  maxpool 2, flatten, linear 8192->10) on [32, 3, 32, 32], cross-entropy, Adam lr 1e-3. No floor.
One step = forward + loss + backward + optimizer step + clear_grad. "compiled" is the same step
with the model's forward under `sot.to_static`: backward and the optimizer run
as eager code, the forward's gradient Program runs as one node of the tape. "step jit" puts the
whole step function under `to_static`: it breaks at `loss.backward()` (the forward and the loss
compiled as one graph, autograd run for real), and the optimizer's step and clear_grad run for
real at breaks of their own; its breaks and fallbacks are printed, which measures what a break costs over "compiled". "compiled seq"
is "compiled" with the executor's parallel runner off (FLAGS_executor_parallel="never" while its
Programs are built): the difference between the two is the executor's choice, not the JIT's.
Before timing, the compiled models are checked to give eager's loss and parameters after a step.
Aim: compiled <= eager, and <= 1.15x the floor for the MLP.
"""
from _harness import bench, describe, fmt_time
from mlp_step import eager_workload

import numpy as np

import runtime as paddle
import runtime.nn.functional as F
import sot
from runtime import nn

WARM_STEPS = 2  # steps each side runs, and is checked on, before timing


class CNN(nn.Layer):
    """The small CNN's layers."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2D(3, 16, 3, padding=1), nn.BatchNorm2D(16), nn.ReLU(),
            nn.Conv2D(16, 32, 3, padding=1), nn.BatchNorm2D(32), nn.ReLU(),
            nn.MaxPool2D(2))
        self.fc = nn.Linear(8192, 10)

    def forward(self, x):
        return self.fc(paddle.flatten(self.features(x), 1))


def cnn_workload():
    """A seeded CNN with Adam, a random [32, 3, 32, 32] batch with random labels, and its eager step."""
    paddle.seed(0)
    model = CNN()
    opt = paddle.optimizer.Adam(learning_rate=1e-3, parameters=model.parameters())
    rng = np.random.default_rng(0)
    x = paddle.to_tensor(rng.standard_normal((32, 3, 32, 32)).astype(np.float32))
    y = paddle.to_tensor(rng.integers(0, 10, 32).astype(np.int64))

    def step():
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.clear_grad()
        return loss

    return model, step


def _check(eager_model, eager_losses: list[float], compiled: list) -> None:
    """Each compiled (model, step, losses) gave eager's losses and parameters (and statistics)."""
    want = eager_model.state_dict()
    for jit_model, _, losses in compiled:
        np.testing.assert_allclose(losses, eager_losses, rtol=1e-5)
        got = jit_model.state_dict()
        for key in want:
            np.testing.assert_allclose(got[key].numpy(), want[key].numpy(), rtol=1e-4, atol=1e-6, err_msg=key)
        fallbacks = jit_model.forward.sot_translator.fallbacks
        assert fallbacks == [], fallbacks


def _compiled(workload, parallel: str):
    """A workload whose model's forward is under to_static, its Programs built with FLAGS_executor_parallel,
    after WARM_STEPS steps; with their losses."""
    old = paddle.get_flags(["FLAGS_executor_parallel"])
    paddle.set_flags({"FLAGS_executor_parallel": parallel})
    try:
        model, *_, step = workload()
        sot.to_static(model)
        # the translation, both Programs and their executor cores are built in the first step;
        # "auto" decides on parallel runs from the second run on
        losses = [float(step()) for _ in range(WARM_STEPS)]
    finally:
        paddle.set_flags(old)
    return model, step, losses


def _step_jit(step):
    """The whole step under to_static, and what its first call did: its breaks and fallbacks, by code."""
    jit = sot.to_static(step)
    report = sot.explain(jit)
    return jit, (f"{report.graph_count} graph(s); breaks {[b.code for b in report.breaks]}; "
                 f"fallbacks {[f.code for f in report.fallbacks]}")


def _report(name: str, t: dict[str, float], base: str) -> None:
    for variant, seconds in t.items():
        print(f"{name:5s} {variant:13s} {fmt_time(seconds)}  {seconds / t[base]:5.2f}x {base}")


def main() -> None:
    print(describe())
    model, xs, ys, floor, eager_step = eager_workload()
    compiled = [_compiled(eager_workload, "auto"), _compiled(eager_workload, "never")]
    (jit_model, jit_step, _), (_, seq_step, _) = compiled
    losses = [float(eager_step()) for _ in range(WARM_STEPS)]
    np.testing.assert_allclose([floor.step(xs, ys) for _ in range(WARM_STEPS)], losses, rtol=1e-4)
    _check(model, losses, compiled)
    np.testing.assert_allclose(np.concatenate([p.numpy().ravel() for p in jit_model.parameters()]),
                               np.concatenate([p.ravel() for p in floor.params]), rtol=1e-4, atol=1e-5)
    step_jit, what = _step_jit(eager_workload()[-1])
    print(f"step jit: {what}")
    t = bench({"numpy floor": lambda: floor.step(xs, ys), "eager": eager_step, "compiled": jit_step,
               "compiled seq": seq_step, "step jit": step_jit})
    _report("MLP", t, "numpy floor")
    print(f"MLP   compiled / eager = {t['compiled'] / t['eager']:.2f}, compiled seq / eager = "
          f"{t['compiled seq'] / t['eager']:.2f}")

    model, eager_step = cnn_workload()
    compiled = [_compiled(cnn_workload, "auto"), _compiled(cnn_workload, "never")]
    (_, jit_step, _), (_, seq_step, _) = compiled
    _check(model, [float(eager_step()) for _ in range(WARM_STEPS)], compiled)
    t = bench({"eager": eager_step, "compiled": jit_step, "compiled seq": seq_step}, rounds=11)
    _report("CNN", t, "eager")


if __name__ == "__main__":
    main()
