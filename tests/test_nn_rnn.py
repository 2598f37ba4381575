"""Recurrent layers: cells and stacked nets against NumPy gate equations, finite differences, numbers
recorded from Paddle 3.3.1 (tests/fixtures/paddle/rnn), argument errors, and the JIT against eager."""
import os

import numpy as np
import pytest

import runtime as paddle
import sot
from helpers import fd_grad, t
from sot_helpers import assert_same_result, fresh

F = paddle.nn.functional
FIXTURE = np.load(os.path.join(os.path.dirname(__file__), "fixtures", "paddle", "rnn", "rnn.npz"))


def sigmoid(v):
    return 1.0 / (1.0 + np.exp(-v))


# ----- NumPy references, written from the gate equations of Paddle's documentation

def np_cell(kind, p, x, state):
    """One step: (output, new state) of a cell with parameters p (dict of arrays) in NumPy."""
    gi = x @ p["weight_ih"].T + p["bias_ih"]
    h_prev = state[0] if kind == "lstm" else state
    gh = h_prev @ p["weight_hh"].T + p["bias_hh"]
    if kind in ("tanh", "relu"):
        h = np.tanh(gi + gh) if kind == "tanh" else np.maximum(gi + gh, 0)
        return h, h
    if kind == "gru":
        (xr, xz, xc), (hr, hz, hc) = np.split(gi, 3, -1), np.split(gh, 3, -1)
        r, z = sigmoid(xr + hr), sigmoid(xz + hz)
        c = np.tanh(xc + r * hc)
        h = z * h_prev + (1 - z) * c
        return h, h
    i, f, g, o = np.split(gi + gh, 4, -1)
    c = sigmoid(f) * state[1] + sigmoid(i) * np.tanh(g)
    h = sigmoid(o) * np.tanh(c)
    if "weight_ho" in p:
        h = h @ p["weight_ho"]
    return h, (h, c)


def np_net(kind, params, x, states, lengths, num_layers, num_dirs):
    """A stacked net, sequence by sequence: only the first lengths[b] steps run (backwards for the reverse
    direction), outputs past a length are 0, final states are those after the last valid step.
    x is [batch, time, input]; states[k][d] the initial state of layer k, direction d."""
    batch, steps = x.shape[:2]
    finals = []
    for k in range(num_layers):
        outs = []
        for d in range(num_dirs):
            sfx = f"_l{k}" + ("_reverse" if d else "")
            p = {n: params[n + sfx] for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")}
            out = None
            final = []
            for b in range(batch):
                state = states[k][d] if kind != "lstm" else tuple(s for s in states[k][d])
                state = state[b] if kind != "lstm" else (state[0][b], state[1][b])
                order = range(lengths[b]) if d == 0 else reversed(range(lengths[b]))
                for step in order:
                    y, state = np_cell(kind, p, x[b, step], state)
                    if out is None:
                        out = np.zeros((batch, steps, y.shape[-1]))
                    out[b, step] = y
                final.append(state)
            outs.append(out)
            finals.append(final)
        x = np.concatenate(outs, -1)
    if kind == "lstm":
        return x, tuple(np.array([[f[b][j] for b in range(batch)] for f in finals]) for j in range(2))
    return x, np.array([[f[b] for b in range(batch)] for f in finals])


# ----- cells

CELLS = {
    "tanh": lambda: paddle.nn.SimpleRNNCell(3, 4),
    "relu": lambda: paddle.nn.SimpleRNNCell(3, 4, activation="relu"),
    "lstm": lambda: paddle.nn.LSTMCell(3, 4),
    "lstm_proj": lambda: paddle.nn.LSTMCell(3, 4, proj_size=2),
    "gru": lambda: paddle.nn.GRUCell(3, 4),
}


def cell_case(name, rng):
    """A float64 cell, its input and state arrays (with random biases, so each term matters)."""
    paddle.set_default_dtype("float64")
    cell = CELLS[name]()
    for p in cell.parameters():
        p.set_value(rng.uniform(-0.9, 0.9, p.shape))
    x = rng.normal(size=(2, 3))
    width = 2 if name == "lstm_proj" else 4
    states = [rng.normal(size=(2, width))] + ([rng.normal(size=(2, 4))] if name.startswith("lstm") else [])
    return cell, x, states


def run_cell(cell, x, states):
    s = tuple(states) if len(states) == 2 else states[0]
    return cell(x, s)


@pytest.mark.parametrize("name", list(CELLS))
def test_cell_matches_numpy_gate_equations(name):
    cell, x, states = cell_case(name, np.random.default_rng(0))
    params = {n: p.numpy() for n, p in cell.named_parameters()}
    kind = "lstm" if name.startswith("lstm") else name
    want_y, want_state = np_cell(kind, params, x, tuple(states) if len(states) == 2 else states[0])
    y, state = run_cell(cell, t(x), [t(s) for s in states])
    np.testing.assert_allclose(y.numpy(), want_y, rtol=1e-12, atol=1e-12)
    for got, want in zip(state if kind == "lstm" else (state,), want_state if kind == "lstm" else (want_state,)):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", list(CELLS))
def test_cell_gradients_match_finite_differences(name):
    rng = np.random.default_rng(1)
    cell, x, states = cell_case(name, rng)
    params = dict(cell.named_parameters())
    weights = {n: rng.normal(size=(2, s.shape[-1])) for n, s in zip("yc", [states[0]] + states[1:])}

    def loss(x_t, state_ts):
        y, state = run_cell(cell, x_t, state_ts)
        out = (y * t(weights["y"])).sum()
        if name.startswith("lstm"):
            out = out + (state[1] * t(weights["c"])).sum()
        return out

    x_t, state_ts = t(x, grad=True), [t(s, grad=True) for s in states]
    loss(x_t, state_ts).backward()

    def value():
        for n, p in params.items():
            p.set_value(arrays[n])
        return float(loss(t(x), [t(s) for s in states]))

    arrays = {n: p.numpy().copy() for n, p in params.items()}
    got = {n: p.grad.numpy() for n, p in params.items()}
    for n in params:
        np.testing.assert_allclose(got[n], fd_grad(value, arrays[n]), rtol=1e-6, atol=1e-8, err_msg=n)
    np.testing.assert_allclose(x_t.grad.numpy(), fd_grad(value, x), rtol=1e-6, atol=1e-8)
    for s_t, s in zip(state_ts, states):
        np.testing.assert_allclose(s_t.grad.numpy(), fd_grad(value, s), rtol=1e-6, atol=1e-8)


# ----- stacked nets

NETS = {"tanh": paddle.nn.SimpleRNN, "lstm": paddle.nn.LSTM, "gru": paddle.nn.GRU}


def net_case(kind, rng, time_major, batch=3, steps=4, hidden=4):
    """A float64 2-layer bidirectional net, inputs [batch, steps, 3], initial states and lengths."""
    paddle.set_default_dtype("float64")
    net = NETS[kind](3, hidden, num_layers=2, direction="bidirectional", time_major=time_major)
    for p in net.parameters():
        p.set_value(rng.uniform(-0.9, 0.9, p.shape))
    x = rng.normal(size=(batch, steps, 3))
    states = [rng.normal(size=(4, batch, hidden)) for _ in range(2 if kind == "lstm" else 1)]
    lengths = np.array([steps, 2, 1][:batch], dtype="int64")
    return net, x, states, lengths


def run_net(net, x, states, lengths, time_major):
    """net on batch-major x (transposed when time_major); output back in batch-major layout."""
    xs = np.swapaxes(x, 0, 1) if time_major else x
    s = tuple(t(a) for a in states) if len(states) == 2 else t(states[0])
    out, final = net(t(xs), s, t(lengths))
    out = out.numpy()
    return (np.swapaxes(out, 0, 1) if time_major else out), final


@pytest.mark.parametrize("time_major", [False, True])
@pytest.mark.parametrize("kind", list(NETS))
def test_stacked_bidirectional_net_matches_numpy_reference(kind, time_major):
    net, x, states, lengths = net_case(kind, np.random.default_rng(2), time_major)
    params = {n: p.numpy() for n, p in net.named_parameters()}
    split = [[states[0][2 * k + d] for d in range(2)] for k in range(2)]
    if kind == "lstm":
        split = [[(states[0][2 * k + d], states[1][2 * k + d]) for d in range(2)] for k in range(2)]
    want_out, want_final = np_net(kind, params, x, split, lengths, 2, 2)
    out, final = run_net(net, x, states, lengths, time_major)
    np.testing.assert_allclose(out, want_out, rtol=1e-12, atol=1e-12)
    for got, want in zip(final if kind == "lstm" else (final,), want_final if kind == "lstm" else (want_final,)):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kind", ["lstm", "gru"])
def test_stacked_net_gradients_with_lengths_match_finite_differences(kind):
    rng = np.random.default_rng(3)
    net, x, states, lengths = net_case(kind, rng, False, batch=2, steps=3, hidden=2)
    out_w, h_w = rng.normal(size=(2, 3, 4)), rng.normal(size=(4, 2, 2))
    params = dict(net.named_parameters())
    checked = ["weight_ih_l0", "weight_hh_l1_reverse", "bias_hh_l0_reverse"]

    def loss(x_t, state_ts):
        out, final = net(x_t, tuple(state_ts) if kind == "lstm" else state_ts[0], t(lengths))
        h = final[1] if kind == "lstm" else final  # the cell state carries the LSTM's memory
        return (out * t(out_w)).sum() + (h * t(h_w)).sum()

    x_t, state_ts = t(x, grad=True), [t(s, grad=True) for s in states]
    loss(x_t, state_ts).backward()
    arrays = {n: params[n].numpy().copy() for n in checked}

    def value():
        for n in checked:
            params[n].set_value(arrays[n])
        return float(loss(t(x), [t(s) for s in states]))

    for n in checked:
        np.testing.assert_allclose(params[n].grad.numpy(), fd_grad(value, arrays[n]), rtol=1e-6, atol=1e-8,
                                   err_msg=n)
    np.testing.assert_allclose(x_t.grad.numpy(), fd_grad(value, x), rtol=1e-6, atol=1e-8)
    for s_t, s in zip(state_ts, states):
        np.testing.assert_allclose(s_t.grad.numpy(), fd_grad(value, s), rtol=1e-6, atol=1e-8)
    assert np.all(x_t.grad.numpy()[1, 2] == 0)  # a step past the sequence's length feeds nothing


# ----- numbers recorded from Paddle 3.3.1

def fixture_net(case):
    cls, kw = {
        "simple_rnn_relu_fwd": (paddle.nn.SimpleRNN, {"direction": "forward", "activation": "relu"}),
        "lstm_nolen": (paddle.nn.LSTM, {"direction": "bidirect"}),
        "lstm_proj": (paddle.nn.LSTM, {"direction": "forward", "proj_size": 2}),
    }.get(case, (None, None))
    if cls is None:
        kind, layout = case.rsplit("_", 1)
        cls = {"simple_rnn": paddle.nn.SimpleRNN, "lstm": paddle.nn.LSTM, "gru": paddle.nn.GRU}[kind]
        kw = {"direction": "bidirect", "time_major": layout == "tm"}
    return cls(3, 4, num_layers=2, **kw), cls is paddle.nn.LSTM


PADDLE_CASES = ["simple_rnn_bm", "simple_rnn_tm", "lstm_bm", "lstm_tm", "gru_bm", "gru_tm", "simple_rnn_relu_fwd",
                "lstm_nolen", "lstm_proj"]


def load_params(layer, case):
    for name, p in layer.named_parameters():
        p.set_value(FIXTURE[f"{case}/param/{name}"])


@pytest.mark.parametrize("case", PADDLE_CASES)
def test_stacked_net_matches_paddle(case):
    net, is_lstm = fixture_net(case)
    assert list(net.state_dict()) == FIXTURE[f"{case}/state_dict_keys"].tolist()
    load_params(net, case)
    states = t(FIXTURE[f"{case}/h0"])
    if is_lstm:
        states = (states, t(FIXTURE[f"{case}/c0"]))
    lengths = t(FIXTURE[f"{case}/seq_len"]) if f"{case}/seq_len" in FIXTURE.files else None
    out, final = net(t(FIXTURE[f"{case}/x"]), states, lengths)
    np.testing.assert_allclose(out.numpy(), FIXTURE[f"{case}/out"], rtol=1e-5, atol=1e-6)
    for got, key in zip(final if is_lstm else (final,), "hc"):
        np.testing.assert_allclose(got.numpy(), FIXTURE[f"{case}/{key}"], rtol=1e-5, atol=1e-6)


def test_birnn_over_cells_matches_paddle_and_keeps_outputs_past_lengths():
    case = "birnn_gru"
    net = paddle.nn.BiRNN(paddle.nn.GRUCell(3, 4), paddle.nn.GRUCell(3, 4))
    assert list(net.state_dict()) == FIXTURE[f"{case}/state_dict_keys"].tolist()
    load_params(net, case)
    out, (h_fw, h_bw) = net(t(FIXTURE[f"{case}/x"]), (t(FIXTURE[f"{case}/h0"]), t(FIXTURE[f"{case}/h0b"])),
                            t(FIXTURE[f"{case}/seq_len"]))
    np.testing.assert_allclose(out.numpy(), FIXTURE[f"{case}/out"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(h_fw.numpy(), FIXTURE[f"{case}/h"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(h_bw.numpy(), FIXTURE[f"{case}/hb"], rtol=1e-5, atol=1e-6)
    assert np.abs(out.numpy()[2, 1:]).min() > 0  # past the length of 1, as Paddle's composed RNN leaves them


def test_parameter_aliases_follow_paddle_when_a_bias_is_frozen():
    """Paddle names no bias whose attr is False, so its flat names shift; the structured names stay right."""
    net = paddle.nn.GRU(3, 4, bias_ih_attr=False)
    sd = net.state_dict()
    assert list(sd) == ["weight_ih_l0", "weight_hh_l0", "bias_hh_l0", "0.cell.weight_ih", "0.cell.weight_hh",
                        "0.cell.bias_ih", "0.cell.bias_hh"]
    assert sd["bias_hh_l0"] is sd["0.cell.bias_ih"] and sd["0.cell.bias_ih"].stop_gradient
    np.testing.assert_array_equal(sd["0.cell.bias_ih"].numpy(), np.zeros(12, "float32"))
    assert [n for n, _ in net.named_parameters()] == ["weight_ih_l0", "weight_hh_l0", "bias_hh_l0", "0.cell.bias_hh"]


# ----- initialisation, dropout, wrappers

def test_default_initialisation_is_uniform_within_one_over_sqrt_hidden():
    paddle.seed(5)
    net = paddle.nn.LSTM(16, 64, direction="bidirect")
    bound = 1.0 / np.sqrt(64)
    values = np.concatenate([p.numpy().ravel() for p in net.parameters()])
    assert np.abs(values).max() <= bound and np.abs(values).max() > 0.99 * bound
    np.testing.assert_allclose(values.std(), bound / np.sqrt(3), rtol=0.02)  # the std of U(-b, b)
    np.testing.assert_allclose(values.mean(), 0.0, atol=0.01 * bound)


def test_dropout_applies_between_layers_only_while_training():
    paddle.seed(6)
    net = paddle.nn.GRU(3, 4, num_layers=2, dropout=0.5)
    plain = paddle.nn.GRU(3, 4, num_layers=2)
    plain.set_state_dict(net.state_dict())
    x = t(np.random.default_rng(6).normal(size=(2, 5, 3)).astype("float32"))
    net.eval()
    assert_same_result(net(x), plain(x))
    net.train()
    assert not np.allclose(net(x)[0].numpy(), plain(x)[0].numpy())
    one = paddle.nn.GRU(3, 4, num_layers=1, dropout=0.9)
    one.train()
    out_train = one(x)
    one.eval()
    assert_same_result(out_train, one(x))  # nothing before the first layer is dropped


def test_rnn_wrapper_reverse_and_zero_initial_states():
    paddle.set_default_dtype("float64")
    cell = paddle.nn.SimpleRNNCell(3, 4)
    x = np.random.default_rng(7).normal(size=(2, 5, 3))
    out, h = paddle.nn.RNN(cell, is_reverse=True)(t(x))
    p = {n: q.numpy() for n, q in cell.named_parameters()}
    state, want = np.zeros((2, 4)), np.zeros((2, 5, 4))
    for step in reversed(range(5)):
        want[:, step], state = np_cell("tanh", p, x[:, step], state)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-12)
    np.testing.assert_allclose(h.numpy(), state, rtol=1e-12)


def test_cell_initial_states_have_the_cell_state_shapes():
    cell = paddle.nn.LSTMCell(3, 4, proj_size=2)
    h, c = cell.get_initial_states(t(np.zeros((5, 3), "float32")), init_value=0.5)
    assert (h.shape, c.shape) == ([5, 2], [5, 4]) and float(c.sum()) == 10.0
    y, (h1, c1) = cell(t(np.ones((5, 3), "float32")))
    assert (y.shape, h1.shape, c1.shape) == ([5, 2], [5, 2], [5, 4])


class _Float64Cell(paddle.nn.SimpleRNNCell):
    @property
    def state_dtype(self):
        return "float64"


class _UndecidedCell(paddle.nn.SimpleRNNCell):
    @property
    def state_dtype(self):
        raise NotImplementedError("no dtype")


def test_initial_states_take_the_dtype_a_cell_declares_else_the_default():
    x = t(np.zeros((2, 3), "float32"))
    assert _Float64Cell(3, 4).get_initial_states(x).dtype == paddle.float64
    assert _UndecidedCell(3, 4).get_initial_states(x).dtype == paddle.float32  # it raised: the default, as Paddle
    assert paddle.nn.SimpleRNNCell(3, 4).get_initial_states(x).dtype == paddle.float32
    paddle.set_default_dtype("float64")
    assert paddle.nn.GRUCell(3, 4).get_initial_states(x).dtype == paddle.float64


def test_zero_initial_states_are_compiled_with_the_forward():
    """The base cell's raising `state_dtype` is not called (a raise caught in a compiled forward would make
    it run eagerly)."""
    net = paddle.nn.RNN(paddle.nn.SimpleRNNCell(3, 4))
    x = t(np.random.rand(2, 5, 3).astype("float32"))
    report = sot.explain(net, x)
    assert_same_result(report.result, net(x))
    assert (report.graph_count, report.break_count, report.fallbacks) == (1, 0, []), str(report)


# ----- sequence_mask

def test_sequence_mask_matches_numpy_and_paddle():
    lengths = FIXTURE["sequence_mask/x"]
    np.testing.assert_array_equal(F.sequence_mask(t(lengths), 4).numpy(), FIXTURE["sequence_mask/out"])
    got = F.sequence_mask(t(np.array([[1, 3], [0, 2]])), dtype="float32")
    want = (np.arange(3) < np.array([[1, 3], [0, 2]])[..., None]).astype("float32")
    assert got.dtype == paddle.float32 and got.stop_gradient
    np.testing.assert_array_equal(got.numpy(), want)
    np.testing.assert_array_equal(F.sequence_mask(t(np.array([2, 1], "int32")), t(np.array(3))).numpy(),
                                  [[1, 1, 0], [1, 0, 0]])


def test_sequence_mask_without_maxlen_under_to_static_matches_eager():
    def fn(lengths):
        return F.sequence_mask(lengths) * 2

    lengths = t(np.array([3, 1, 2]))
    jit = sot.to_static(fresh(fn))
    assert_same_result(jit(lengths), fn(lengths))


# ----- argument errors (Paddle raises ValueError for each)

@pytest.mark.parametrize("build, call, arg", [
    (lambda: paddle.nn.LSTM(3, 4), lambda m: m(t(np.zeros((2, 3), "float32"))), "inputs"),
    (lambda: paddle.nn.GRU(3, 4), lambda m: m(t(np.zeros((2, 5, 7), "float32"))), "inputs"),
    (lambda: paddle.nn.LSTM(3, 4, direction="bidirect"),
     lambda m: m(t(np.zeros((2, 5, 3), "float32")), (t(np.zeros((2, 2, 5), "float32")),
                                                     t(np.zeros((2, 2, 4), "float32")))), "initial_states"),
    (lambda: paddle.nn.SimpleRNN(3, 4), lambda m: m(t(np.zeros((2, 5, 3), "float32")),
                                                    t(np.zeros((1, 3, 4), "float32"))), "initial_states"),
    (lambda: paddle.nn.GRU(3, 4), lambda m: m(t(np.zeros((2, 5, 3), "float32")), None,
                                              t(np.array([5, 2, 1]))), "sequence_length"),
    (lambda: paddle.nn.GRUCell(3, 4), lambda m: m(t(np.zeros((2, 3), "float32")),
                                                  t(np.zeros((2, 5), "float32"))), "states"),
    (lambda: paddle.nn.LSTMCell(3, 4), lambda m: m(t(np.zeros((2, 3, 3), "float32"))), "inputs"),
    (lambda: paddle.nn.RNN(paddle.nn.GRUCell(3, 4)), lambda m: m(t(np.zeros((2, 3), "float32"))), "inputs"),
])
def test_bad_call_arguments_raise_value_error_naming_the_argument(build, call, arg):
    with pytest.raises(ValueError, match=f"'{arg}'"):
        call(build())


@pytest.mark.parametrize("build, words", [
    (lambda: paddle.nn.LSTM(3, 4, direction="bi"), "direction"),
    (lambda: paddle.nn.GRU(3, 0), "hidden_size"),
    (lambda: paddle.nn.SimpleRNN(3, 4, activation="sigmoid"), "activation"),
    (lambda: paddle.nn.SimpleRNNCell(3, 4, activation="sigmoid"), "activation"),
    (lambda: paddle.nn.LSTMCell(3, 4, proj_size=4), "proj_size"),
    (lambda: paddle.nn.LSTM(3, 4, num_layers=0), "num_layers"),
    (lambda: paddle.nn.GRU(3, 4, dropout=1.5), "dropout"),
    (lambda: paddle.nn.BiRNN(paddle.nn.GRUCell(3, 4), paddle.nn.GRUCell(5, 4)), "input size"),
])
def test_bad_constructor_arguments_raise_value_error_naming_the_argument(build, words):
    with pytest.raises(ValueError, match=words):
        build()


# ----- under the JIT

class TinyLM(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.emb = paddle.nn.Embedding(10, 4)
        self.lstm = paddle.nn.LSTM(4, 5, num_layers=2, direction="bidirect")
        self.head = paddle.nn.Linear(10, 10)

    def forward(self, tokens, lengths):
        h, _ = self.lstm(self.emb(tokens), sequence_length=lengths)
        return self.head(h)


def lm_step(model, tokens, labels, lengths):
    loss = F.cross_entropy(model(tokens, lengths), labels)
    loss.backward()
    return loss


def test_lstm_language_model_forward_and_backward_under_to_static_match_eager():
    paddle.seed(8)
    model = TinyLM()
    tokens = t(np.array([[1, 2, 3, 4], [5, 6, 0, 0]]))
    labels = t(np.array([[2, 3, 4, 5], [6, 7, 0, 0]]))
    lengths = t(np.array([4, 2]))
    want = lm_step(model, tokens, labels, lengths)
    want_grads = {n: p.grad.numpy().copy() for n, p in model.named_parameters()}
    model.clear_gradients()
    report = sot.explain(fresh(lm_step), model, tokens, labels, lengths)
    assert_same_result(report.result, want)
    for n, p in model.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), want_grads[n], rtol=1e-6, atol=1e-7, err_msg=n)
    assert report.fallbacks == [] and report.graph_count == 1
    assert [b.code for b in report.breaks] == ["SOT-B003"]  # only loss.backward(), which runs for real


def run_rnn(net, x, states, lengths):
    return net(x, states, lengths)


@pytest.mark.parametrize("make, width", [
    (lambda: paddle.nn.SimpleRNN(3, 4, num_layers=2, time_major=True, activation="relu"), 1),
    (lambda: paddle.nn.GRU(3, 4, direction="bidirect", time_major=True), 1),
    (lambda: paddle.nn.LSTM(3, 4, num_layers=2, proj_size=2), 2),
])
def test_stacked_nets_under_to_static_are_captured_and_match_eager(make, width):
    paddle.seed(9)
    net = make()
    rng = np.random.default_rng(9)
    x = t(rng.normal(size=(3, 3, 3)).astype("float32"))
    rows = net.num_layers * net.num_directions
    states = tuple(t(rng.normal(size=(rows, 3, w)).astype("float32")) for w in ((net.proj_size or 4), 4)[:width])
    report = sot.explain(fresh(run_rnn), net, x, states[0] if width == 1 else states, t(np.array([3, 1, 2])))
    assert_same_result(report.result, run_rnn(net, x, states[0] if width == 1 else states, t(np.array([3, 1, 2]))))
    assert report.fallbacks == [] and report.graph_count == 1 and report.break_count == 0


def test_rnn_under_to_static_follows_new_sequence_lengths_and_batch_sizes():
    paddle.seed(10)
    net = paddle.nn.RNN(paddle.nn.GRUCell(3, 4))
    jit = sot.to_static(fresh(run_rnn))
    rng = np.random.default_rng(10)
    for batch, steps in [(2, 3), (2, 5), (4, 5), (3, 2)]:
        x = t(rng.normal(size=(batch, steps, 3)).astype("float32"))
        lengths = t(rng.integers(1, steps + 1, size=batch))
        assert_same_result(jit(net, x, None, lengths), run_rnn(net, x, None, lengths))
