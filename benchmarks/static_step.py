"""The MLP step as a static Program: one MLP training step through Executor.run vs eager vs the NumPy floor.

The model, batch and optimizer are those of benchmarks/mlp_step.py: Linear 784->512, ReLU,
512->512, ReLU, 512->10; cross-entropy (mean) on int64 labels; batch 128 float32; Adam lr 1e-3.
The static step is `exe.run(main, feed={x, y}, fetch_list=[loss])` on a program built in static
mode with the same layers and `optimizer.minimize(loss)`. All sides start from the same weights
and are checked to produce the same parameters after one step before timing. The static step
is timed with the passes on (the default) and off. Aim: static <= 1.1x the floor.
"""
from _harness import bench, describe, fmt_time
from mlp_step import BATCH, MLP, SIZES, eager_workload
from static_overhead import with_flags

import numpy as np

import runtime as paddle
import runtime.nn.functional as F
from runtime import static


def build_static() -> tuple[static.Program, static.Program, str, list[str]]:
    """The training program, its startup program, the loss name and the parameter names."""
    main, startup = static.Program(), static.Program()
    paddle.enable_static()
    try:
        with static.program_guard(main, startup):
            x = static.data("x", [BATCH, SIZES[0]], "float32")
            y = static.data("y", [BATCH], "int64")
            model = MLP()
            loss = F.cross_entropy(model(x), y)
            paddle.optimizer.Adam(learning_rate=1e-3, parameters=model.parameters()).minimize(loss)
    finally:
        paddle.disable_static()
    return main, startup, loss.name, [p.name for p in model.parameters()]


class StaticStep:
    """One executor and scope running the training program from given initial weights."""

    def __init__(self, main: static.Program, startup: static.Program, loss: str, names: list[str],
                 init: list[np.ndarray], passes: bool):
        self.names = names
        self.scope = static.Scope()
        exe = static.Executor(paddle.CPUPlace())
        exe.run(startup, scope=self.scope)
        for name, value in zip(names, init):
            self.scope.find_var(name).set(value)
        self.step = with_flags(passes, lambda feed: exe.run(main, feed=feed, fetch_list=[loss], scope=self.scope)[0])

    def params(self) -> list[np.ndarray]:
        return [np.asarray(self.scope.find_var(n).get_tensor()) for n in self.names]


def main() -> None:
    print(describe())
    model, xs, ys, floor, eager_step = eager_workload()
    init = [p.numpy() for p in model.parameters()]
    program = build_static()
    static_on, static_off = StaticStep(*program, init, passes=True), StaticStep(*program, init, passes=False)

    feed = {"x": xs, "y": ys}
    loss_static = float(static_on.step(feed))
    loss_off = float(static_off.step(feed))
    loss_eager = float(eager_step())
    loss_floor = floor.step(xs, ys)
    assert abs(loss_static - loss_eager) < 1e-5 and abs(loss_static - loss_floor) < 1e-4, \
        (loss_static, loss_eager, loss_floor)
    assert loss_off == loss_static, (loss_off, loss_static)
    for s, s_off, e, f in zip(static_on.params(), static_off.params(), model.parameters(), floor.params):
        np.testing.assert_allclose(s, e.numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(s, f, rtol=1e-4, atol=1e-5)
        np.testing.assert_array_equal(s, s_off)
    r = bench({"numpy floor": lambda: floor.step(xs, ys), "runtime eager": eager_step,
               "static": lambda: static_on.step(feed), "static, passes off": lambda: static_off.step(feed)})
    base = r["numpy floor"]
    for name, t in r.items():
        print(f"{name:19s} {fmt_time(t)}  ({t / base:.2f}x the floor)")
    print(f"static / eager: {r['static'] / r['runtime eager']:.2f}x")


if __name__ == "__main__":
    main()
