"""Layers with state and convolutions train in static mode exactly as eagerly."""
import numpy as np

import runtime as paddle
import runtime.nn as nn
import runtime.nn.functional as F
from runtime import static


class SmallCNN(nn.Layer):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2D(2, 4, 3, padding=1)
        self.bn = nn.BatchNorm2D(4)
        self.pool = nn.MaxPool2D(2)
        self.fc = nn.Linear(4 * 3 * 3, 3)

    def forward(self, x):
        h = self.pool(F.relu(self.bn(self.conv(x))))
        return self.fc(paddle.flatten(h, 1))


def test_cnn_with_batch_norm_trains_like_eager():
    rng = np.random.default_rng(0)
    xs = rng.normal(size=(4, 2, 6, 6)).astype(np.float32)
    ys = rng.integers(0, 3, 4).astype(np.int64)

    paddle.enable_static()
    try:
        main, startup = static.Program(), static.Program()
        with static.program_guard(main, startup):
            x = static.data("x", [None, 2, 6, 6])
            y = static.data("y", [None], dtype="int64")
            model = SmallCNN()
            loss = F.cross_entropy(model(x), y)
            paddle.optimizer.SGD(learning_rate=0.1).minimize(loss)
        names = [p.name for p in main.global_block().all_parameters()]
    finally:
        paddle.disable_static()
    scope = static.Scope()
    exe = static.Executor(paddle.CPUPlace())
    exe.run(startup, scope=scope)

    eager = SmallCNN()
    # both models create their parameters in the same order (state_dict order = creation order)
    pairs = list(zip(eager.state_dict().values(), names))
    assert len(pairs) == len(names) == 8
    for p, n in pairs:
        p.set_value(scope.find_var(n).get_tensor())
    opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=eager.parameters())

    for _ in range(3):
        (static_loss,) = exe.run(main, feed={"x": xs, "y": ys}, fetch_list=[loss], scope=scope)
        eager_loss = F.cross_entropy(eager(paddle.to_tensor(xs)), paddle.to_tensor(ys))
        eager_loss.backward()
        opt.step()
        opt.clear_grad()
        np.testing.assert_allclose(static_loss, eager_loss.numpy(), rtol=1e-5)
    for p, n in pairs:  # parameters after SGD, and BatchNorm's running statistics
        np.testing.assert_allclose(scope.find_var(n).get_tensor(), p.numpy(), rtol=1e-5, atol=1e-6)
