"""Guard cost of a compiled Layer forward as the model grows: µs per cache hit, from one run.

A model of N blocks (Linear, BatchNorm1D, ReLU: 4 layers and 6 tensors each) is translated once
in eval mode. Its cache entry's guards are then inserted into two fresh caches: as the
translation keeps them (the Layer tree folded into one guard, `sot.guards.layer_tree`), and with
every folded guard standing alone (what a cache without the structure epoch checks on a hit).
"lookup" is `CodeCache.lookup`, what the frame hook pays per call before the graph runs; "forward"
is the compiled call as a whole and "eager" the same forward eagerly (no grad), for scale.
"""
import copy

from _harness import bench, describe, fmt_time

import runtime as paddle
import runtime.nn as nn
import sot
from sot.guards import CodeCache, FrameLike
from sot.guards.layer_tree import leaf_guards


class Block(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.bn = nn.BatchNorm1D(8)
        self.act = nn.ReLU()

    def forward(self, x):
        return self.act(self.bn(self.fc(x)))


class Net(nn.Layer):
    def __init__(self, n: int):
        super().__init__()
        self.blocks = nn.LayerList([Block() for _ in range(n)])

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x


def main() -> None:
    print(describe())
    print(f"{'blocks':>6s} {'layers':>6s} {'guards':>7s} {'folded':>12s} {'one each':>12s} {'ratio':>7s} "
          f"{'forward':>12s} {'eager':>12s}")
    for n in (8, 25, 50):
        net = Net(n)
        net.eval()
        eager = copy.deepcopy(net)  # to_static compiles `net`'s own forward: time eager on a twin
        x = paddle.randn([2, 8])
        jit = sot.to_static(net)
        out = jit(x)
        with paddle.no_grad():
            want = eager(x)
        assert (out.numpy() == want.numpy()).all()
        entry = max(jit.forward.sot_translator.cache.entries, key=lambda e: e.id)  # (one cache for every size)
        frame = FrameLike({"self": net, "x": x}, Net.forward.__globals__)
        caches = {}
        for name, guards in (("folded", entry.guards), ("one each", tuple(leaf_guards(entry.guards)))):
            cache = caches[name] = CodeCache(Net.forward.__code__)
            cache.insert(guards, "translated")
            assert cache.lookup(frame) == "translated", (name, [str(m) for m in cache.miss_reasons()])
        with paddle.no_grad():
            r = bench({"folded": lambda: caches["folded"].lookup(frame),
                       "one each": lambda: caches["one each"].lookup(frame),
                       "forward": lambda: jit(x), "eager": lambda: eager(x)})
        n_guards = len(tuple(leaf_guards(entry.guards)))
        print(f"{n:6d} {len(net.sublayers(include_self=True)):6d} {n_guards:7d} {fmt_time(r['folded'])} "
              f"{fmt_time(r['one each'])} {r['one each'] / r['folded']:6.0f}x {fmt_time(r['forward'])} "
              f"{fmt_time(r['eager'])}")


if __name__ == "__main__":
    main()
