"""nn.Layer mechanics: registration, naming, traversal, state_dict, hooks, modes, dtype moves, copies,
containers, ParamAttr and create_parameter."""
import copy
import re
import warnings

import numpy as np
import pytest

import runtime as paddle
import runtime.nn as nn
from runtime.nn.layer.layers import create_parameter
from runtime.nn.param_attr import ParamAttr
from runtime.regularizer import L2Decay


class Scale(nn.Layer):
    """y = x * w + b with w, b of shape [n] (only elementwise ops, so no functional op is needed)."""

    def __init__(self, n=3):
        super().__init__()
        self.w = self.create_parameter([n], default_initializer=nn.initializer.Constant(2.0))
        self.b = self.create_parameter([n], is_bias=True)

    def forward(self, x):
        return x * self.w + self.b


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = Scale(3)
        self.act = nn.ReLU()
        self.fc2 = Scale(3)
        self.register_buffer("steps", paddle.to_tensor(np.zeros([1], np.int64)))

    def forward(self, x):
        return self.fc2(self.fc1(x))


# ---------------------------------------------------------------- registration and routing
def test_setattr_routes_parameters_layers_and_buffers():
    net = Net()
    assert list(net._parameters) == []
    assert list(net._sub_layers) == ["fc1", "act", "fc2"]
    assert list(net._buffers) == ["steps"]
    assert list(net.fc1._parameters) == ["w", "b"]
    assert "fc1" not in net.__dict__ and "w" not in net.fc1.__dict__
    assert net.fc1.w is net.fc1._parameters["w"]
    assert net.steps is net._buffers["steps"]


def test_plain_tensor_attribute_is_a_non_persistable_buffer():
    net = Net()
    net.cache = paddle.to_tensor([1.0, 2.0])
    assert net._buffers["cache"] is net.cache
    assert "cache" not in net.state_dict()
    assert "cache" in net.to_static_state_dict()
    assert "steps" in net.state_dict()


def test_assigning_wrong_types_to_registered_names_raises():
    s = Scale()
    with pytest.raises(TypeError, match="assignment to parameter 'w' should be of type Parameter or None"):
        s.w = paddle.to_tensor([1.0, 2.0, 3.0])
    net = Net()
    with pytest.raises(TypeError, match="assignment to sublayer 'fc1' should be of type Layer or None"):
        net.fc1 = 3
    with pytest.raises(TypeError, match="assignment to buffer 'steps'"):
        net.steps = "x"
    s.w = None
    assert s._parameters["w"] is None and s.w is None
    assert [n for n, _ in s.named_parameters()] == ["b"]


def test_reassigning_a_name_moves_it_between_stores_and_delattr_removes():
    s = Scale()
    s.extra = paddle.to_tensor([1.0])
    s.extra = nn.ReLU()
    assert "extra" not in s._buffers and "extra" in s._sub_layers
    del s.extra
    del s.w
    assert "extra" not in s._sub_layers and "w" not in s._parameters
    with pytest.raises(AttributeError, match="'Scale' object has no attribute 'w'"):
        s.w
    s.plain = 5
    del s.plain
    assert not hasattr(s, "plain")


def test_add_parameter_and_register_buffer_checks():
    s = Scale()
    p = create_parameter([2], "float32")
    assert s.add_parameter("p", p) is p and s.p is p
    with pytest.raises(KeyError, match="can not contain `.`"):
        s.add_parameter("a.b", create_parameter([2], "float32"))
    with pytest.raises(KeyError, match="can not be empty"):
        s.add_parameter("", create_parameter([2], "float32"))
    with pytest.raises(KeyError, match="'training' already exists"):
        s.add_parameter("training", create_parameter([2], "float32"))
    with pytest.raises(TypeError, match="should be a Parameter"):
        s.add_parameter("q", paddle.to_tensor([1.0]))
    with pytest.raises(TypeError, match="name of buffer should be a string"):
        s.register_buffer(3, paddle.to_tensor([1.0]))
    with pytest.raises(TypeError, match="registered buffer should be a Tensor"):
        s.register_buffer("buf", np.zeros(2))
    with pytest.raises(TypeError, match="registered buffer should be a Tensor"):
        s.register_buffer("buf", create_parameter([2], "float32"))
    s.register_buffer("tmp", paddle.to_tensor([1.0]), persistable=False)
    assert "tmp" not in s.state_dict()
    s.register_buffer("tmp", paddle.to_tensor([1.0]), persistable=True)
    assert "tmp" in s.state_dict()


def test_super_init_not_called_is_reported():
    class Bad(nn.Layer):
        def __init__(self):
            self.register_buffer("x", paddle.to_tensor([1.0]))

    with pytest.raises(RuntimeError, match=r"super\(\).__init__\(\) should be called first"):
        Bad()

    class Early(nn.Layer):
        def __init__(self):
            self.fc = nn.Linear(2, 2)
            super().__init__()

    with pytest.raises(ValueError, match=r"cannot assign Linear 'fc': super\(\).__init__\(\) should be called"):
        Early()


# ---------------------------------------------------------------- names
def test_unique_layer_and_parameter_names():
    a, b = nn.Linear(2, 3), nn.Linear(2, 3)
    ia = int(re.fullmatch(r"linear_(\d+)", a.full_name()).group(1))
    assert b.full_name() == f"linear_{ia + 1}"
    assert a.weight.name == f"linear_{ia}.w_0" and a.bias.name == f"linear_{ia}.b_0"
    bn = nn.BatchNorm2D(3)
    stem = bn.full_name()
    assert stem.startswith("batch_norm2d_")
    assert [p.name for p in bn.parameters()] == [f"{stem}.w_0", f"{stem}.b_0", f"{stem}.w_1", f"{stem}.w_2"]
    custom = nn.Layer(name_scope="my_block")
    assert re.fullmatch(r"my_block_\d+", custom.full_name())
    named = nn.Linear(2, 2, weight_attr=ParamAttr(name="enc.w"), bias_attr="enc.b")
    assert named.weight.name == "enc.w" and named.bias.name == "enc.b"
    free = create_parameter([2, 2], "float32")
    assert re.fullmatch(r"create_parameter_\d+\.w_0", free.name)
    assert create_parameter([2], "float32", name="given").name == "given"


def test_camel_to_snake_scopes():
    class MyConvBlock(nn.Layer):
        pass

    class HTTPLayer(nn.Layer):
        pass

    assert MyConvBlock().full_name().startswith("my_conv_block_")
    assert HTTPLayer().full_name().startswith("http_layer_")


# ---------------------------------------------------------------- traversal
def test_named_parameters_order_prefix_and_sharing():
    net = Net()
    names = [n for n, _ in net.named_parameters()]
    assert names == ["fc1.w", "fc1.b", "fc2.w", "fc2.b"]
    assert [n for n, _ in net.named_parameters(prefix="model")] == ["model." + n for n in names]
    assert net.parameters(include_sublayers=False) == []
    net.fc2 = net.fc1  # a shared sublayer is listed once
    assert [n for n, _ in net.named_parameters()] == ["fc1.w", "fc1.b"]
    assert [n for n, _ in net.named_sublayers()] == ["fc1", "act"]


def test_sublayers_children_and_buffers():
    net = nn.Sequential(Net(), nn.ReLU())
    assert [n for n, _ in net.named_sublayers()] == ["0", "0.fc1", "0.act", "0.fc2", "1"]
    assert [n for n, _ in net.named_sublayers(prefix="m", include_self=True)][:2] == ["m", "m.0"]
    assert net.sublayers(include_self=True)[0] is net
    assert [n for n, _ in net.named_children()] == ["0", "1"]
    assert list(net.children()) == [net[0], net[1]]
    assert [n for n, _ in net.named_buffers()] == ["0.steps"]
    assert net.buffers() == [net[0].steps]
    assert net.buffers(include_sublayers=False) == []


def test_apply_visits_children_first_then_self():
    net = Net()
    seen = []
    assert net.apply(lambda layer: seen.append(type(layer).__name__)) is net
    assert seen == ["Scale", "ReLU", "Scale", "Net"]


# ---------------------------------------------------------------- state dict
def test_state_dict_keys_are_structured_and_hold_the_live_tensors():
    model = nn.Sequential(("fc1", nn.Linear(2, 3)), ("bn", nn.BatchNorm1D(3)))
    sd = model.state_dict()
    assert list(sd) == ["fc1.weight", "fc1.bias", "bn.weight", "bn.bias", "bn._mean", "bn._variance"]
    assert sd["fc1.weight"] is model.fc1.weight
    assert list(model.state_dict(structured_name_prefix="net.")) == ["net." + k for k in sd]
    assert list(model.state_dict(include_sublayers=False)) == []


def test_state_dict_round_trip_into_a_fresh_model():
    src, dst = Net(), Net()
    for p in src.parameters():
        p.set_value(np.random.rand(*p.shape).astype(np.float32))
    src.steps.set_value(np.array([7]))
    missing, unexpected = dst.set_state_dict(src.state_dict())
    assert missing == [] and unexpected == []
    for (n1, a), (n2, b) in zip(src.state_dict().items(), dst.state_dict().items()):
        assert n1 == n2 and a is not b
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_set_state_dict_accepts_numpy_reports_missing_and_unexpected_and_casts():
    dst = Net()
    values = {k: np.full(v.shape, 3.0, np.float64) for k, v in Net().state_dict().items() if k != "fc2.b"}
    values["extra"] = np.zeros(2)
    with pytest.warns(UserWarning, match="fc2.b"):
        missing, unexpected = dst.load_dict(values)
    assert missing == ["fc2.b"] and unexpected == ["extra"]
    assert dst.fc1.w.dtype == paddle.float32
    np.testing.assert_array_equal(dst.fc1.w.numpy(), np.full([3], 3.0, np.float32))
    np.testing.assert_array_equal(dst.fc2.b.numpy(), np.zeros([3], np.float32))


def test_set_state_dict_by_parameter_names():
    src, dst = Scale(), Scale()
    src.w.set_value(np.array([1.0, 2.0, 3.0], np.float32))
    by_name = {p.name: p.numpy() for p in src.parameters()}
    dst.w.name, dst.b.name = src.w.name, src.b.name
    assert dst.set_state_dict(by_name, use_structured_name=False) == ([], [])
    np.testing.assert_array_equal(dst.w.numpy(), [1.0, 2.0, 3.0])


def test_set_state_dict_errors_leave_every_parameter_untouched():
    dst = Net()
    before = {k: v.numpy() for k, v in dst.state_dict().items()}
    good = {k: np.full(v.shape, 9.0, np.float32) for k, v in dst.state_dict().items()}
    bad_shape = dict(good, **{"fc2.w": np.zeros([4], np.float32)})
    with pytest.raises(ValueError, match=r"'fc2.w' receives a shape \[4\], but the expected shape is \[3\]"):
        dst.set_state_dict(bad_shape)
    bad_type = dict(good, **{"fc2.b": "oops"})
    with pytest.raises(TypeError, match="value of 'fc2.b' must be a Tensor or a numeric array"):
        dst.set_state_dict(bad_type)
    with pytest.raises(TypeError, match="state_dict must be a dict"):
        dst.set_state_dict([1, 2])
    for k, v in dst.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), before[k])


def test_state_dict_hook_can_rewrite_the_dict():
    s = Scale()
    handle = s.register_state_dict_hook(lambda sd: {k.upper(): v for k, v in sd.items()})
    assert list(s.state_dict()) == ["W", "B"]
    assert list(s.state_dict(use_hook=False)) == ["w", "b"]
    handle.remove()
    assert list(s.state_dict()) == ["w", "b"]


# ---------------------------------------------------------------- calling and hooks
def test_forward_hooks_modify_inputs_and_outputs_and_can_be_removed():
    s = Scale()
    x = paddle.to_tensor([1.0, 2.0, 3.0])
    calls = []
    pre = s.register_forward_pre_hook(lambda layer, inp: (calls.append("pre"), inp[0] * 10)[1])
    post = s.register_forward_post_hook(lambda layer, inp, out: (calls.append("post"), out + 1)[1])
    np.testing.assert_allclose(s(x).numpy(), [21.0, 41.0, 61.0])
    assert calls == ["pre", "post"]
    pre.remove()
    np.testing.assert_allclose(s(x).numpy(), [3.0, 5.0, 7.0])
    post.remove()
    post.remove()  # removing twice is harmless
    np.testing.assert_allclose(s(x).numpy(), [2.0, 4.0, 6.0])
    observed = []
    s.register_forward_post_hook(lambda layer, inp, out: observed.append(out.shape))
    s(x)
    assert observed == [[3]]
    with pytest.raises(TypeError, match="hook must be callable"):
        s.register_forward_pre_hook(3)


def test_base_forward_is_not_implemented():
    with pytest.raises(NotImplementedError, match="Layer.forward"):
        nn.Layer()(1)


def test_gradients_reach_parameters_and_clear_gradients():
    net = Net()
    x = paddle.to_tensor([1.0, -2.0, 3.0])
    net(x).sum().backward()
    # y = (x*w1 + b1)*w2 + b2 with w = 2, b = 0: dy/dw1 = x*w2, dy/db1 = w2, dy/dw2 = x*w1, dy/db2 = 1
    np.testing.assert_allclose(net.fc1.w.grad.numpy(), [2.0, -4.0, 6.0])
    np.testing.assert_allclose(net.fc1.b.grad.numpy(), [2.0, 2.0, 2.0])
    np.testing.assert_allclose(net.fc2.w.grad.numpy(), [2.0, -4.0, 6.0])
    np.testing.assert_allclose(net.fc2.b.grad.numpy(), [1.0, 1.0, 1.0])
    net.clear_gradients()
    assert all(not np.any(p.grad.numpy()) for p in net.parameters())
    net.clear_gradients(set_to_zero=False)
    assert all(p.grad is None for p in net.parameters())


def test_train_and_eval_are_recursive():
    net = nn.Sequential(Net(), nn.Dropout(0.5))
    assert net.eval() is net
    assert all(not layer.training for layer in net.sublayers(include_self=True))
    net.train()
    assert all(layer.training for layer in net.sublayers(include_self=True))


# ---------------------------------------------------------------- dtype, device, copies
def test_to_dtype_casts_floating_params_buffers_and_grads_in_place():
    net = Net()
    net.stats = paddle.to_tensor([1.5])
    params = net.parameters()
    net(paddle.to_tensor([1.0, 2.0, 3.0])).sum().backward()
    assert net.to(dtype="float64") is net
    assert net.parameters() == params  # the same Parameter objects
    assert all(p.dtype == paddle.float64 and p.grad.dtype == paddle.float64 for p in params)
    assert net.stats.dtype == paddle.float64
    assert net.steps.dtype == paddle.int64  # integer buffers are left alone
    assert net._dtype == "float64"
    np.testing.assert_allclose(net(paddle.to_tensor([1.0, 2.0, 3.0], dtype="float64")).numpy(), [4.0, 8.0, 12.0])
    net.float()
    assert all(p.dtype == paddle.float32 for p in params)
    net.float16(excluded_layers=[Scale])
    assert all(p.dtype == paddle.float32 for p in params) and net.stats.dtype == paddle.float16
    assert net.to() is net
    net.to(device="cpu")
    assert net.fc1.w.place == paddle.CPUPlace()
    with pytest.raises(TypeError, match="excluded_layers"):
        net.float(excluded_layers=3)
    with pytest.raises(TypeError, match="blocking"):
        net.to(dtype="float32", blocking=1)


def test_deepcopy_gives_independent_parameters_with_the_same_values_and_names():
    net = Net()
    net.fc1.w.set_value(np.array([1.0, 2.0, 3.0], np.float32))
    clone = copy.deepcopy(net)
    assert clone.fc1.w is not net.fc1.w and isinstance(clone.fc1.w, paddle.Parameter)
    assert clone.fc1.w.name == net.fc1.w.name and not clone.fc1.w.stop_gradient
    np.testing.assert_array_equal(clone.fc1.w.numpy(), [1.0, 2.0, 3.0])
    clone.fc1.w.set_value(np.zeros(3, np.float32))
    np.testing.assert_array_equal(net.fc1.w.numpy(), [1.0, 2.0, 3.0])
    assert [n for n, _ in clone.named_parameters()] == [n for n, _ in net.named_parameters()]


def test_repr_follows_paddle_layout():
    net = nn.Sequential(nn.Linear(2, 3), nn.Sequential(nn.ReLU()))
    assert repr(net) == ("Sequential(\n"
                         "  (0): Linear(in_features=2, out_features=3, dtype=float32)\n"
                         "  (1): Sequential(\n"
                         "    (0): ReLU()\n"
                         "  )\n"
                         ")")
    assert "steps" in dir(Net()) and "fc1" in dir(Net())


# ---------------------------------------------------------------- ParamAttr / create_parameter
def test_param_attr_settings_reach_the_parameter():
    init = nn.initializer.Constant(0.5)
    layer = nn.Linear(2, 3, weight_attr=ParamAttr(initializer=init, learning_rate=0.1, trainable=False,
                                                  need_clip=False), bias_attr=False)
    assert layer.bias is None and [n for n, _ in layer.named_parameters()] == ["weight"]
    w = layer.weight
    assert w.stop_gradient and not w.trainable
    assert w.optimize_attr == {"learning_rate": 0.1} and w.need_clip is False
    np.testing.assert_array_equal(w.numpy(), np.full([2, 3], 0.5, np.float32))
    assert nn.Linear(2, 2, weight_attr=nn.initializer.Constant(1.0)).weight.numpy().tolist() == [[1.0, 1.0]] * 2


def test_param_attr_type_errors():
    with pytest.raises(TypeError, match="'name' must be a str"):
        ParamAttr(name=3)
    with pytest.raises(TypeError, match="'learning_rate' must be a float"):
        ParamAttr(learning_rate="fast")
    with pytest.raises(TypeError, match="'trainable' must be a bool"):
        ParamAttr(trainable=1)
    with pytest.raises(TypeError, match="'initializer' must be"):
        ParamAttr(initializer="xavier")
    with pytest.raises(TypeError, match="'regularizer' must be"):
        ParamAttr(regularizer=1e-4)
    with pytest.raises(TypeError, match="a parameter attribute must be"):
        nn.Linear(2, 2, weight_attr=3.5)
    decay = L2Decay(1e-3)
    assert nn.Linear(2, 2, weight_attr=ParamAttr(regularizer=decay)).weight.regularizer is decay
    assert nn.Linear(2, 2, weight_attr=decay).weight.regularizer is decay


def test_create_parameter_defaults_and_errors():
    w = create_parameter([4, 5], "float64")
    b = create_parameter([5], "float32", is_bias=True)
    assert isinstance(w, paddle.Parameter) and w.dtype == paddle.float64 and w.persistable and not w.stop_gradient
    limit = np.sqrt(6.0 / 9)
    assert np.all(np.abs(w.numpy()) <= limit) and np.any(w.numpy() != 0)
    np.testing.assert_array_equal(b.numpy(), np.zeros(5, np.float32))
    with pytest.raises(ValueError, match="must be a positive int, got 0 at index 1"):
        create_parameter([2, 0], "float32")
    with pytest.raises(TypeError, match="needs an initializer"):
        create_parameter([2], "int64")
    ints = create_parameter([2], "int64", default_initializer=nn.initializer.Constant(3))
    assert ints.numpy().tolist() == [3, 3]
    with pytest.raises(ValueError, match="must not be False"):
        create_parameter([2], "float32", attr=False)


def test_default_dtype_follows_paddle_default():
    paddle.set_default_dtype("float64")
    assert nn.Linear(2, 2).weight.dtype == paddle.float64
    assert Scale().w.dtype == paddle.float64


def test_set_global_initializer_overrides_defaults_but_not_attrs():
    nn.initializer.set_global_initializer(nn.initializer.Constant(0.25), nn.initializer.Constant(-1.0))
    try:
        layer = nn.Linear(2, 2)
        explicit = nn.Linear(2, 2, weight_attr=nn.initializer.Constant(4.0))
    finally:
        nn.initializer.set_global_initializer(None)
    assert np.all(layer.weight.numpy() == 0.25) and np.all(layer.bias.numpy() == -1.0)
    assert np.all(explicit.weight.numpy() == 4.0)
    assert np.any(nn.Linear(3, 3).weight.numpy() != 0.25)
    with pytest.raises(TypeError, match="weight_init"):
        nn.initializer.set_global_initializer("zeros")


# ---------------------------------------------------------------- containers
def test_sequential_indexing_slicing_and_deletion():
    a, b, c = nn.ReLU(), nn.Tanh(), nn.Sigmoid()
    seq = nn.Sequential(a, b, c)
    assert len(seq) == 3 and seq[0] is a and seq[-1] is c and seq["1"] is b
    sliced = seq[1:]
    assert isinstance(sliced, nn.Sequential) and list(sliced.children()) == [b, c]
    with pytest.raises(IndexError, match="index 3 is out of range"):
        seq[3]
    seq[1] = nn.ReLU6()
    assert isinstance(seq[1], nn.ReLU6)
    with pytest.raises(TypeError, match="only a Layer"):
        seq[0] = 3
    del seq[2]
    assert len(seq) == 2
    with pytest.raises(KeyError, match="no sublayer named '7'"):
        del seq[7]
    named = nn.Sequential(("first", a), ("second", b))
    assert [n for n, _ in named.named_children()] == ["first", "second"] and named.first is a
    np.testing.assert_allclose(nn.Sequential(Scale(), Scale())(paddle.to_tensor([1.0, 2.0, 3.0])).numpy(),
                               [4.0, 8.0, 12.0])


def test_layer_list_operations():
    layers = nn.LayerList([Scale(1), Scale(1)])
    assert len(layers) == 2 and [n for n, _ in layers.named_parameters()] == ["0.w", "0.b", "1.w", "1.b"]
    third, first = Scale(1), Scale(1)
    assert layers.append(third) is layers and layers[-1] is third
    layers.insert(0, first)
    assert layers[0] is first and list(layers._sub_layers) == ["0", "1", "2", "3"] and layers[3] is third
    layers.extend([nn.ReLU(), nn.Tanh()])
    assert len(layers) == 6 and isinstance(layers[5], nn.Tanh)
    del layers[0]
    assert layers[0] is not first and list(layers._sub_layers) == ["0", "1", "2", "3", "4"]
    del layers[1:3]
    assert len(layers) == 3 and list(layers._sub_layers) == ["0", "1", "2"]
    assert isinstance(layers[1:], nn.LayerList) and len(layers[1:]) == 2
    layers[0] = nn.ReLU6()
    assert isinstance(list(layers)[0], nn.ReLU6)
    with pytest.raises(IndexError, match="out of range"):
        layers[5]
    with pytest.raises(IndexError, match="index should be an integer in range"):
        layers.insert(10, nn.ReLU())
    with pytest.raises(TypeError, match="indices must be integers"):
        layers["0"]


def test_layer_dict_operations():
    d = nn.LayerDict({"a": nn.ReLU(), "b": nn.Tanh()})
    assert len(d) == 2 and list(d) == ["a", "b"] and "a" in d and isinstance(d["b"], nn.Tanh)
    d["c"] = nn.Sigmoid()
    d.update([("e", nn.ReLU6())])
    assert list(d.keys()) == ["a", "b", "c", "e"]
    assert isinstance(d.pop("a"), nn.ReLU) and "a" not in d
    del d["b"]
    assert [k for k, _ in d.items()] == ["c", "e"] and len(list(d.values())) == 2
    with pytest.raises(ValueError, match="element 0 of sublayers must be a"):
        d.update([("x", nn.ReLU(), 3)])
    with pytest.raises(TypeError, match="mapping or an iterable"):
        d.update(5)
    d.clear()
    assert len(d) == 0


def test_parameter_list_operations():
    ps = [create_parameter([2], "float32") for _ in range(3)]
    plist = nn.ParameterList(ps[:2])
    assert len(plist) == 2 and plist[1] is ps[1] and list(plist) == ps[:2]
    plist.append(ps[2])
    assert plist[-1] is ps[2] and [n for n, _ in plist.named_parameters()] == ["0", "1", "2"]
    assert list(plist[1:]) == ps[1:]
    new = create_parameter([2], "float32")
    plist[0] = new
    assert plist[0] is new
    with pytest.raises(TypeError, match="only a Parameter"):
        plist[0] = paddle.to_tensor([1.0])
    with pytest.raises(TypeError, match="should be a Parameter"):
        plist.append(paddle.to_tensor([1.0]))


def test_warnings_are_only_for_missing_keys():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Net().set_state_dict(Net().state_dict())
