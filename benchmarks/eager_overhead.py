"""Per-op dispatch overhead of `runtime` eager vs the bare NumPy call (aim: tiny op <= +3 us).

Each pair runs the same math; the overhead is (runtime - numpy) per call and the ratio
is runtime / numpy, from one run of the round-robin harness.
"""
from _harness import bench, describe, fmt_time

import numpy as np

import runtime as paddle


def main() -> None:
    print(describe())
    rng = np.random.default_rng(0)
    tiny = rng.standard_normal(1).astype(np.float32)
    big = rng.standard_normal((1024, 1024)).astype(np.float32)
    mat = rng.standard_normal((64, 64)).astype(np.float32)
    t_tiny, t_big, t_mat = (paddle.to_tensor(a) for a in (tiny, big, mat))
    w_tiny = paddle.to_tensor(tiny, stop_gradient=False)
    cases = {
        "add [1]": (lambda: tiny + tiny, lambda: t_tiny + t_tiny),
        "add scalar [1]": (lambda: tiny + 1.0, lambda: t_tiny + 1.0),
        "tanh [1]": (lambda: np.tanh(tiny), lambda: paddle.tanh(t_tiny)),
        "add [1], grad recorded": (lambda: tiny + tiny, lambda: w_tiny + t_tiny),
        "sum [1]": (lambda: tiny.sum(), lambda: t_tiny.sum()),
        "matmul [64,64]": (lambda: mat @ mat, lambda: paddle.matmul(t_mat, t_mat)),
        "add [1024,1024]": (lambda: big + big, lambda: t_big + t_big),
        "tanh [1024,1024]": (lambda: np.tanh(big), lambda: paddle.tanh(t_big)),
    }
    for name, (ref, ours) in cases.items():
        np.testing.assert_allclose(np.asarray(ours().numpy()), ref(), rtol=1e-5, atol=1e-6)
    print(f"{'case':26s} {'numpy':>12s} {'runtime':>12s} {'overhead':>12s} {'ratio':>7s}")
    for name, (ref, ours) in cases.items():
        r = bench({"numpy": ref, "runtime": ours}, rounds=11)
        print(f"{name:26s} {fmt_time(r['numpy'])} {fmt_time(r['runtime'])} "
              f"{fmt_time(r['runtime'] - r['numpy'])} {r['runtime'] / r['numpy']:6.2f}x")


if __name__ == "__main__":
    main()
