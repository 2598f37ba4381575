"""Layers, losses, autograd and optimizers on a device place (fixture `any_gpu`: the CuPy stand-in,
and the real GPU where there is one): the same training steps on the CPU and on the device give the
same parameters, bit for bit on the stand-in (it computes with NumPy)."""
import numpy as np
import pytest

import runtime as paddle
import runtime.nn as nn
import runtime.nn.functional as F

from helpers import assert_device_equal

GPU = paddle.CUDAPlace(0)


def _a(*shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _mlp():
    return nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Dropout(0.25), nn.Linear(8, 3))


def _cnn():
    return nn.Sequential(nn.Conv2D(2, 4, 3, padding=1), nn.BatchNorm2D(4), nn.ReLU(), nn.MaxPool2D(2),
                         nn.Flatten(), nn.Linear(4 * 2 * 2, 3))


class _Rnn(nn.Layer):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(6, 5)
        self.head = nn.Linear(5, 3)

    def forward(self, x):
        out, _ = self.lstm(x.reshape([4, 1, 6]))
        return self.head(out.reshape([4, 5]))


MODELS = {"mlp": (_mlp, (4, 6)), "cnn": (_cnn, (4, 2, 4, 4)), "lstm": (_Rnn, (4, 6))}
OPTIMIZERS = {
    "sgd": lambda ps: paddle.optimizer.SGD(0.1, parameters=ps),
    "momentum": lambda ps: paddle.optimizer.Momentum(0.1, momentum=0.9, parameters=ps, use_nesterov=True),
    "adam": lambda ps: paddle.optimizer.Adam(paddle.optimizer.lr.StepDecay(0.01, step_size=1, gamma=0.5),
                                             parameters=ps),
    "adamw": lambda ps: paddle.optimizer.AdamW(0.01, parameters=ps, weight_decay=0.1,
                                               grad_clip=nn.ClipGradByGlobalNorm(0.5)),
    "adamw-clip-by-norm": lambda ps: paddle.optimizer.AdamW(0.01, parameters=ps, grad_clip=nn.ClipGradByNorm(0.5)),
}


def _train(make_model, shape, make_opt, device, steps=3):
    paddle.seed(0)
    model = make_model()
    if device is not None:
        assert model.to(device=device) is model
    place = GPU if device else paddle.CPUPlace()
    assert all(p.place == place for p in model.parameters())
    opt = make_opt(model.parameters())
    x = paddle.to_tensor(_a(*shape), place=place)
    y = paddle.to_tensor(np.array([0, 2, 1, 0], np.int64), place=place)
    losses = []
    for _ in range(steps):
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.clear_grad()
        if isinstance(opt._learning_rate, paddle.optimizer.lr.LRScheduler):
            opt._learning_rate.step()
        losses.append(loss)
    assert all(loss.place == place for loss in losses)
    assert all(p.place == place for p in model.parameters())
    return [float(loss) for loss in losses], {k: v.numpy() for k, v in model.state_dict().items()}


@pytest.mark.parametrize("model", sorted(MODELS))
@pytest.mark.parametrize("opt", sorted(OPTIMIZERS))
def test_training_steps_on_the_device_match_the_cpu(any_gpu, model, opt):
    make_model, shape = MODELS[model]
    cpu_losses, cpu_state = _train(make_model, shape, OPTIMIZERS[opt], None)
    dev_losses, dev_state = _train(make_model, shape, OPTIMIZERS[opt], "gpu")
    assert_device_equal(dev_losses, cpu_losses, any_gpu, rtol=1e-4, atol=1e-5)
    assert dev_state.keys() == cpu_state.keys()
    for k in cpu_state:
        assert_device_equal(dev_state[k], cpu_state[k], any_gpu, rtol=1e-4, atol=1e-5, err_msg=k)


def test_small_device_parameters_update_in_one_multi_tensor_batch_as_on_the_cpu(any_gpu, monkeypatch):
    """The CNN's six parameters are small and share their scalars: the step stages them in one batch."""
    from runtime.optimizer import multi_tensor
    runs = []
    run = multi_tensor.Batch.run

    def counting(batch, kernel):
        runs.append((batch.params[0].place, len(batch.params)))
        return run(batch, kernel)
    monkeypatch.setattr(multi_tensor.Batch, "run", counting)
    make = OPTIMIZERS["adamw"]
    cpu_losses, cpu_state = _train(_cnn, (4, 2, 4, 4), make, None)
    assert runs and all(place.is_cpu_place() for place, _ in runs)
    del runs[:]
    dev_losses, dev_state = _train(_cnn, (4, 2, 4, 4), make, "gpu")
    assert runs and all(place == GPU and n == 6 for place, n in runs)
    assert_device_equal(dev_losses, cpu_losses, any_gpu, rtol=1e-4, atol=1e-5)
    for k in cpu_state:
        assert_device_equal(dev_state[k], cpu_state[k], any_gpu, rtol=1e-4, atol=1e-5, err_msg=k)


def test_layer_to_moves_parameters_buffers_and_grads_keeping_the_objects(any_gpu):
    model = _cnn()
    params = model.parameters()
    model(paddle.to_tensor(_a(4, 2, 4, 4))).sum().backward()
    model.to(device="gpu")
    assert [id(p) for p in model.parameters()] == [id(p) for p in params]
    assert all(t.place == GPU for t in model.state_dict().values())
    assert all(p.grad.place == GPU for p in params if not p.stop_gradient)
    model.to(device=paddle.CPUPlace())
    assert all(t.place.is_cpu_place() for t in model.state_dict().values())


@pytest.mark.parametrize("loss", ["mse_loss", "l1_loss", "smooth_l1_loss", "binary_cross_entropy_with_logits",
                                  "kl_div"])
def test_losses_and_their_gradients_on_the_device_match_the_cpu(any_gpu, loss):
    fn = getattr(F, loss)
    a, b = _a(3, 4), 1 / (1 + np.exp(-_a(3, 4, seed=1)))
    results = []
    for place in (paddle.CPUPlace(), GPU):
        x = paddle.to_tensor(a, place=place, stop_gradient=False)
        out = fn(x, paddle.to_tensor(b, place=place))
        out.backward()
        assert out.place == place and x.grad.place == place
        results.append((out.numpy(), x.grad.numpy()))
    for c, d in zip(*results):
        assert_device_equal(d, c, any_gpu)


def test_double_backward_on_the_device_matches_the_cpu(any_gpu):
    results = []
    for place in (paddle.CPUPlace(), GPU):
        x = paddle.to_tensor(_a(5), place=place, stop_gradient=False)
        (g,) = paddle.grad((paddle.tanh(x) * x).sum(), [x], create_graph=True)
        (gg,) = paddle.grad(g.sum(), [x])
        assert gg.place == place
        results.append(gg.numpy())
    assert_device_equal(results[1], results[0], any_gpu)


@pytest.mark.parametrize("opt", ["SGD", "Momentum", "RMSProp", "Adagrad", "Adam", "AdamW", "Adamax", "Lamb"])
def test_an_optimizer_step_on_the_device_never_waits_for_it(fake_gpu, opt):
    # the [1] beta powers live on the host, as Paddle places them: a step reads them as numbers
    # without a device-to-host copy, so the kernels it launches run while Python goes on (Lamb's trust
    # ratio stays a device scalar)
    paddle.seed(0)
    model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
    model.to(device="gpu")
    optimizer = getattr(paddle.optimizer, opt)(learning_rate=0.01, parameters=model.parameters())
    x = paddle.to_tensor(np.random.default_rng(0).standard_normal((4, 6)).astype("float32"), place="gpu")
    for _ in range(2):
        model(x).mean().backward()
        fake_gpu.trace.clear()
        optimizer.step()
        assert [e for e in fake_gpu.trace if e[0] == "sync"] == []
        optimizer.clear_grad()
    powers = [t for name, t in optimizer.state_dict().items() if "pow" in name]
    assert all(t.place == paddle.CPUPlace() for t in powers) and (powers or "Adam" not in opt)
