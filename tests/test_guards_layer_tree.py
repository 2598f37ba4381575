"""One structural guard per Layer tree (sot.guards.layer_tree over runtime.structure).

A translation of a Layer's forward folds the guards its Layer tree determines (sublayers, their
classes, flags, hooks, parameters and their metadata) into one `layer_tree` guard, checked in
full only after something moved the structure epoch. Each test changes one fact a compiled
forward relied on, through the public API, and checks that the next call is a miss whose report
names the folded guard that failed, and that its result equals eager's.
"""
import numpy as np
import pytest

import runtime as paddle
import runtime.nn as nn
import runtime.nn.functional as F
from runtime import structure
from sot.guards.layer_tree import leaf_guards

from sot_helpers import assert_same_result, jit_of, rand


class Block(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.bn = nn.BatchNorm1D(4)
        self.act = nn.ReLU()

    def forward(self, x):
        return self.act(self.bn(self.fc(x)))


class Net(nn.Layer):
    SCALE = (2.0,)  # a class attribute read through the layer: pinned by a class check

    def __init__(self, n=25):
        super().__init__()
        self.blocks = nn.LayerList([Block() for _ in range(n)])
        self.buf = paddle.zeros([4])  # a plain tensor attribute: a non-persistable buffer

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return x * self.SCALE[0] + self.buf


def _compiled(n=25):
    net = Net(n)
    net.eval()
    jit = jit_of(Net.forward)
    x = rand(3, 4)
    assert_same_result(jit(net, x), net(x))
    assert_same_result(jit(net, x), net(x))  # a hit: the tree's guards checked whole once, then stamped
    return net, jit, x


def _cache(jit):
    return jit.sot_translator.cache


def _guards(jit):
    (entry,) = [e for e in _cache(jit).entries if e.code is not None][-1:]
    return entry.guards


def _miss_names(jit, text):
    """The last miss's reason for the most recent entry names `text`."""
    reasons = _cache(jit).miss_reasons()[-1].reasons
    assert any(text in str(r) for r in reasons), [str(r) for r in reasons]


def _same_as_eager(net, jit, x):
    with paddle.no_grad():
        want = net(x)
    assert_same_result(jit(net, x), want)


def test_a_hundred_layer_tree_is_one_guard():
    net, jit, x = _compiled()
    guards = _guards(jit)
    trees = [g for g in guards if g.kind == "layer_tree"]
    assert len(trees) == 1 and trees[0].source == "f_locals['self']"
    assert len(guards) <= 8, [str(g) for g in guards]  # the input, a few builtins, the tree
    folded = list(leaf_guards(trees))
    assert len(folded) > 25 * 10  # per block: classes, flags, hooks, four parameters and their metadata
    # four classes (Block, Linear, BatchNorm1D, ReLU) and LayerList: class checks once per class, not per layer
    assert len(trees[0].expected.class_checks) < 30
    hits = _cache(jit).entries[0].hits
    _same_as_eager(net, jit, x)
    assert _cache(jit).entries[0].hits == hits + 1 and jit.sot_translator.translations == 1
    assert trees[0].expected.stamp[0] == structure.epoch()  # the hit took the one-check path


def _cast(net, x):
    net.to(dtype="float64")
    return x.astype("float64")


@pytest.mark.parametrize("change, named", [
    (lambda net, x: net.train(), "training"),
    (lambda net, x: setattr(net.blocks[3], "act", nn.Sigmoid()), "act"),
    (lambda net, x: net.blocks.append(Block().eval()), "_sub_layers"),
    (lambda net, x: setattr(net.blocks[1].fc.weight, "stop_gradient", True), "fc.weight"),
    (lambda net, x: setattr(net.blocks[1].fc.bias, "trainable", False), "fc.bias"),
    (lambda net, x: net.blocks[2].register_forward_post_hook(lambda layer, i, o: o * 3), "_forward_post_hooks"),
    (_cast, "fc.weight"),
    (lambda net, x: delattr(net.blocks[0], "act") or net.blocks[0].add_sublayer("act", nn.Tanh()), "act"),
], ids=["train", "swap-sublayer", "append", "stop_gradient", "trainable", "hook", "cast", "delattr"])
def test_a_structural_change_misses_with_the_folded_guard_named(change, named):
    net, jit, x = _compiled(4)
    changed = change(net, x)
    x = changed if isinstance(changed, paddle.Tensor) else x  # (a cast needs a float64 input)
    _same_as_eager(net, jit, x)
    assert jit.sot_translator.translations == 2
    _miss_names(jit, named)


def test_a_removed_hook_and_a_restored_mode_hit_again_after_one_full_check():
    net, jit, x = _compiled(4)
    handle = net.blocks[2].register_forward_post_hook(lambda layer, i, o: o * 3)
    _same_as_eager(net, jit, x)
    handle.remove()
    _same_as_eager(net, jit, x)  # the first entry's guards hold again: checked whole, then stamped
    assert jit.sot_translator.translations == 2
    first = _cache(jit).entries[0]
    hits = first.hits
    _same_as_eager(net, jit, x)
    assert first.hits == hits + 1


def test_patching_a_class_is_seen_though_the_epoch_does_not_move():
    net, jit, x = _compiled(3)
    epoch = structure.epoch()
    original = Block.forward
    try:
        Block.forward = lambda self, x: self.act(self.fc(x)) * 2.0
        assert structure.epoch() == epoch  # classes are not watched: class checks run on every hit
        _same_as_eager(net, jit, x)
        _miss_names(jit, "forward")
    finally:
        Block.forward = original


def test_a_class_attribute_read_through_a_layer_is_pinned():
    net, jit, x = _compiled(2)
    try:
        Net.SCALE = (3.0,)
        _same_as_eager(net, jit, x)
        _miss_names(jit, "SCALE")
    finally:
        Net.SCALE = (2.0,)


def test_a_module_global_of_a_sublayer_forward_is_checked_on_every_hit(monkeypatch):
    net, jit, x = _compiled(2)
    monkeypatch.setattr(F, "relu", lambda x, name=None: paddle.nn.functional.sigmoid(x))
    _same_as_eager(net, jit, x)
    _miss_names(jit, "relu")


def test_a_non_persistable_buffer_keeps_its_own_guards():
    net, jit, x = _compiled(2)
    assert any("f_locals['self'].buf" in str(g) and g.kind == "tensor_meta" for g in _guards(jit))
    net.buf.stop_gradient = False  # moves no epoch: a plain tensor is not watched
    _same_as_eager(net, jit, x)
    _miss_names(jit, "buf")


def test_another_instance_of_the_same_class_is_checked_whole():
    net, jit, x = _compiled(2)
    other = Net(2)
    other.eval()
    _same_as_eager(other, jit, x)  # other parameters: the identity guards folded in the tree fail
    assert jit.sot_translator.translations == 2
    _same_as_eager(net, jit, x)
    assert jit.sot_translator.translations == 2


def test_running_a_model_moves_no_epoch():
    """Forward, backward and an optimizer step change values, not structure: compiled entries keep
    their one-check hits through training."""
    net = Net(2)
    opt = paddle.optimizer.Adam(parameters=net.parameters())
    x = rand(3, 4)
    net(x).sum().backward()  # the first step creates the optimizer's state
    opt.step()
    opt.clear_grad()
    epoch = structure.epoch()
    for _ in range(2):
        net(x).sum().backward()
        opt.step()
        opt.clear_grad()
    with paddle.no_grad():
        net.eval()
        epoch_eval = structure.epoch()
        net(x)
    assert structure.epoch() == epoch_eval and epoch_eval != epoch  # eval() moved it, the steps did not


def test_tracked_stores_move_the_epoch_on_every_mutation():
    store = structure.TrackedDict()
    for mutate in (lambda d: d.__setitem__("a", 1), lambda d: d.update(b=2), lambda d: d.setdefault("c", 3),
                   lambda d: d.move_to_end("a"), lambda d: d.pop("a"), lambda d: d.popitem(),
                   lambda d: d.__delitem__("b"), lambda d: d.clear()):
        before = structure.epoch()
        mutate(store)
        assert structure.epoch() != before
    assert len(store) == 0


def test_only_a_persistable_tensors_flag_moves_the_epoch():
    p = nn.Linear(2, 2).weight
    t = paddle.zeros([2])
    before = structure.epoch()
    t.stop_gradient = False
    assert structure.epoch() == before
    p.stop_gradient = False  # unchanged: no move
    assert structure.epoch() == before
    p.stop_gradient = True
    assert structure.epoch() != before


def test_a_write_that_fails_still_moves_the_epoch_and_changes_nothing():
    layer = nn.Linear(2, 2)
    before = structure.epoch()
    with pytest.raises(TypeError):
        layer.weight = np.zeros((2, 2))  # a parameter slot takes a Parameter or None
    assert structure.epoch() != before and isinstance(layer.weight, paddle.Parameter)


class _ConvNet(nn.Layer):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2D(3, 4, 3, stride=2, padding=[1, 1], dilation=1)
        self.up = nn.Conv2DTranspose(4, 2, 2, stride=2, output_padding=[0, 0])

    def forward(self, x):
        return self.up(F.relu(self.conv(x)))


def test_conv_settings_are_immutable_so_their_guards_fold():
    net, x = _ConvNet(), rand(1, 3, 8, 8)
    jit = jit_of(_ConvNet.forward)
    assert_same_result(jit(net, x), net(x))
    assert [g.kind for g in _guards(jit)].count("len_eq") == 0, [str(g) for g in _guards(jit)]
    assert len(_guards(jit)) <= 6
    assert net.conv._stride == (2, 2) and net.conv._padding == (1, 1)
    assert "stride=[2, 2], padding=[1, 1]" in repr(net.conv)  # printed as Paddle prints it


class _ListNet(nn.Layer):
    """Sublayers kept in a plain Python list as well (DenseNet's style): each is a tree of its own."""

    def __init__(self, n=4):
        super().__init__()
        self.stages = []
        for i in range(n):
            self.stages.append(self.add_sublayer(f"stage{i}", Block()))

    def forward(self, x):
        for stage in self.stages:
            x = stage(x)
        return x


def test_class_checks_are_made_once_per_entry_across_its_trees():
    net, x = _ListNet(), rand(3, 4)
    net.eval()
    jit = jit_of(_ListNet.forward)
    assert_same_result(jit(net, x), net(x))
    trees = [g.expected for g in _guards(jit) if g.kind == "layer_tree"]
    assert len(trees) > 1  # list items are not covered by the epoch: each is a root of its own
    keys = [(c.cls, tuple(s.key for s in c.steps), c.guard.kind) for t in trees for c in t.class_checks]
    assert len(keys) == len(set(keys)) and any(k[0] is Block for k in keys)
    original = Block.forward
    try:  # a class check made by one tree still guards every layer of that class
        Block.forward = lambda self, x: self.act(self.fc(x)) * 2.0
        _same_as_eager(net, jit, x)
        _miss_names(jit, "forward")
    finally:
        Block.forward = original
