"""Search and sort ops against hand-written references: nonzero, masked_select, sort, argsort,
topk, kthvalue, unique, unique_consecutive, searchsorted, bucketize; gradients and errors."""
import itertools

import numpy as np
import pytest

import runtime as paddle

RNG = np.random.default_rng(2)


def T(a, stop_gradient=True):
    return paddle.to_tensor(np.asarray(a), stop_gradient=stop_gradient)


def _stable_order(row, descending):
    """Indices sorting `row` (Python's sort is stable: ties keep their order)."""
    return sorted(range(len(row)), key=lambda i: -row[i] if descending else row[i])


def _rows(a, axis):
    """Every 1-D slice of `a` along `axis`, with the index that addresses it."""
    moved = np.moveaxis(a, axis, -1)
    for idx in np.ndindex(moved.shape[:-1]):
        yield idx, moved[idx]


# ---------------------------------------------------------------- nonzero / where / masked_select
def test_nonzero_forms():
    a = np.array([[1.0, 0.0, 0.0], [0.0, 2.0, 3.0]])
    expected = [(i, j) for i in range(2) for j in range(3) if a[i, j] != 0]
    out = paddle.nonzero(T(a))
    assert out.dtype == paddle.int64
    np.testing.assert_array_equal(out.numpy(), expected)
    rows, cols = paddle.nonzero(T(a), as_tuple=True)
    assert rows.shape == [3, 1]
    np.testing.assert_array_equal(rows.numpy()[:, 0], [e[0] for e in expected])
    np.testing.assert_array_equal(cols.numpy()[:, 0], [e[1] for e in expected])
    (r,) = paddle.where(T([False, True, True]))
    np.testing.assert_array_equal(r.numpy(), [[1], [2]])
    assert T(np.zeros((2, 2))).nonzero().shape == [0, 2]


def test_masked_select_and_gradient():
    a = RNG.normal(size=(3, 4))
    mask = a > 0
    np.testing.assert_array_equal(paddle.masked_select(T(a), T(mask)).numpy(),
                                  [a[i, j] for i in range(3) for j in range(4) if mask[i, j]])
    row_mask = np.array([True, False, True, True])
    np.testing.assert_array_equal(T(a).masked_select(T(row_mask)).numpy(),
                                  [a[i, j] for i in range(3) for j in range(4) if row_mask[j]])
    x = T(a[:, :1], stop_gradient=False)  # broadcast against a [3, 4] mask
    paddle.masked_select(x, T(mask)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), mask.sum(axis=1, keepdims=True).astype(float))
    with pytest.raises(TypeError, match="masked_select: argument 'mask' must be a bool tensor"):
        paddle.masked_select(T(a), T(np.ones((3, 4))))
    with pytest.raises(ValueError, match="masked_select: the shape of argument 'x'"):
        paddle.masked_select(T(a), T(np.ones(3, dtype=bool)))


# ---------------------------------------------------------------- sort / argsort
@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("axis", [0, -1])
def test_sort_argsort_stable_with_ties(descending, axis):
    a = RNG.integers(0, 3, size=(4, 5)).astype(np.float64)  # many ties
    values = paddle.sort(T(a), axis=axis, descending=descending).numpy()
    indices = T(a).argsort(axis=axis, descending=descending, stable=True).numpy()
    for idx, row in _rows(a, axis):
        order = _stable_order(list(row), descending)
        np.testing.assert_array_equal(np.moveaxis(indices, axis, -1)[idx], order)
        np.testing.assert_array_equal(np.moveaxis(values, axis, -1)[idx], row[order])


def test_sort_ints_and_bools_descending():
    a = np.array([3, -1, 7, 0, -1], dtype=np.int32)
    np.testing.assert_array_equal(paddle.sort(T(a), descending=True).numpy(), [7, 3, 0, -1, -1])
    np.testing.assert_array_equal(paddle.argsort(T(a), descending=True).numpy(), [2, 0, 3, 1, 4])
    np.testing.assert_array_equal(paddle.argsort(T([True, False, True]), descending=True).numpy(), [0, 2, 1])
    u = np.array([3, 250, 0], dtype=np.uint8)
    np.testing.assert_array_equal(paddle.sort(T(u), descending=True).numpy(), [250, 3, 0])


def test_sort_gradient_follows_permutation():
    a = np.array([[0.3, -1.0, 2.0], [5.0, 4.0, -3.0]])
    x = T(a, stop_gradient=False)
    w = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    (paddle.sort(x, axis=1, descending=True) * T(w)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[2.0, 3.0, 1.0], [4.0, 5.0, 6.0]])


# ---------------------------------------------------------------- topk / kthvalue
@pytest.mark.parametrize("largest", [True, False])
def test_topk_matches_reference(largest):
    a = RNG.integers(0, 4, size=(3, 6)).astype(np.float32)
    values, indices = paddle.topk(T(a), 3, largest=largest)
    assert values.shape == indices.shape == [3, 3] and indices.dtype == paddle.int64
    for r in range(3):
        order = _stable_order(list(a[r]), largest)[:3]
        np.testing.assert_array_equal(indices.numpy()[r], order)
        np.testing.assert_array_equal(values.numpy()[r], a[r][order])
    v0, i0 = T(a).topk(paddle.to_tensor(2), axis=0)
    for c in range(6):
        order = _stable_order(list(a[:, c]), True)[:2]
        np.testing.assert_array_equal(i0.numpy()[:, c], order)


def test_topk_gradient_and_errors():
    a = np.array([[0.1, 0.9, 0.5], [0.7, 0.2, 0.3]])
    x = T(a, stop_gradient=False)
    values, indices = paddle.topk(x, 2)
    assert indices.stop_gradient
    (values * T([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[0.0, 1.0, 2.0], [3.0, 0.0, 4.0]])
    with pytest.raises(ValueError, match=r"topk: argument 'k' \(4\) must be in \[1, 3\]"):
        paddle.topk(T(a), 4)
    with pytest.raises(TypeError, match="topk: argument 'k' must be an int"):
        paddle.topk(T(a), 1.5)
    with pytest.raises(ValueError, match="topk: argument 'x' must have at least 1 dimension"):
        paddle.topk(paddle.to_tensor(1.0), 1)


def test_kthvalue():
    a = RNG.normal(size=(3, 5))
    values, indices = paddle.kthvalue(T(a), 2)
    for r in range(3):
        order = _stable_order(list(a[r]), False)
        assert indices.numpy()[r] == order[1]
        assert values.numpy()[r] == a[r, order[1]]
    v, i = T(a).kthvalue(3, axis=0, keepdim=True)
    assert v.shape == [1, 5]
    np.testing.assert_array_equal(v.numpy()[0], np.sort(a, axis=0)[2])
    x = T(a, stop_gradient=False)
    paddle.kthvalue(x, 1, axis=1)[0].sum().backward()
    expected = np.zeros_like(a)
    expected[np.arange(3), np.argmin(a, axis=1)] = 1.0
    np.testing.assert_array_equal(x.grad.numpy(), expected)
    with pytest.raises(ValueError, match=r"kthvalue: argument 'k' \(0\) must be in \[1, 5\]"):
        paddle.kthvalue(T(a), 0)


# ---------------------------------------------------------------- unique / unique_consecutive
def test_unique_all_outputs():
    a = np.array([[2, 3, 1], [3, 2, 2]])
    out, index, inverse, counts = paddle.unique(T(a), return_index=True, return_inverse=True,
                                                return_counts=True)
    flat = a.reshape(-1).tolist()
    values = sorted(set(flat))
    np.testing.assert_array_equal(out.numpy(), values)
    np.testing.assert_array_equal(index.numpy(), [flat.index(v) for v in values])
    np.testing.assert_array_equal(inverse.numpy(), [values.index(v) for v in flat])
    np.testing.assert_array_equal(counts.numpy(), [flat.count(v) for v in values])
    assert index.dtype == inverse.dtype == counts.dtype == paddle.int64
    single = paddle.unique(T([4.0, 1.0, 4.0]))
    np.testing.assert_array_equal(single.numpy(), [1.0, 4.0])


def test_unique_along_axis_and_dtype():
    a = np.array([[1, 2], [0, 5], [1, 2]])
    out, inverse = paddle.unique(T(a), return_inverse=True, axis=0, dtype="int32")
    np.testing.assert_array_equal(out.numpy(), [[0, 5], [1, 2]])
    np.testing.assert_array_equal(inverse.numpy(), [1, 0, 1])
    assert inverse.dtype == paddle.int32
    with pytest.raises(TypeError, match="unique: argument 'dtype' must be int32 or int64, got float32"):
        paddle.unique(T(a), dtype="float32")


def test_unique_consecutive():
    seq = [1, 1, 2, 2, 3, 1, 1, 2]
    out, inverse, counts = paddle.unique_consecutive(T(seq), return_inverse=True, return_counts=True)
    groups = [(k, len(list(g))) for k, g in itertools.groupby(seq)]
    np.testing.assert_array_equal(out.numpy(), [k for k, _ in groups])
    np.testing.assert_array_equal(counts.numpy(), [n for _, n in groups])
    np.testing.assert_array_equal(inverse.numpy(), [i for i, (_, n) in enumerate(groups) for _ in range(n)])
    a = np.array([[1, 1, 2, 1], [3, 3, 4, 3]])
    cols = paddle.unique_consecutive(T(a), axis=1)
    np.testing.assert_array_equal(cols.numpy(), [[1, 2, 1], [3, 4, 3]])
    assert paddle.unique_consecutive(T(np.zeros((0,)))).shape == [0]


# ---------------------------------------------------------------- searchsorted / bucketize
def _count_before(seq, v, right):
    return sum(1 for s in seq if (s <= v if right else s < v))


@pytest.mark.parametrize("right", [False, True])
def test_searchsorted_1d_and_batched(right):
    seq = np.array([1.0, 3.0, 3.0, 7.0])
    values = np.array([[0.0, 3.0], [5.0, 9.0]])
    out = paddle.searchsorted(T(seq), T(values), right=right)
    np.testing.assert_array_equal(out.numpy(), [[_count_before(seq, v, right) for v in row] for row in values])
    assert out.dtype == paddle.int64
    seq2 = np.array([[1, 3, 5, 7, 9, 11], [2, 4, 6, 8, 10, 12]])
    vals2 = np.array([[3, 6, 9, 10], [3, 6, 9, 10]])
    out2 = paddle.searchsorted(T(seq2), T(vals2), out_int32=True, right=right)
    assert out2.dtype == paddle.int32
    np.testing.assert_array_equal(out2.numpy(), [[_count_before(s, v, right) for v in row]
                                                  for s, row in zip(seq2, vals2)])
    b = paddle.bucketize(T(values), T(seq), right=right)
    np.testing.assert_array_equal(b.numpy(), out.numpy())


def test_searchsorted_errors():
    with pytest.raises(ValueError, match="searchsorted: argument 'sorted_sequence' \\[2, 3\\] must be 1-D"):
        paddle.searchsorted(T(np.zeros((2, 3))), T(np.zeros((3, 1))))
    with pytest.raises(ValueError, match="bucketize: argument 'sorted_sequence' must be 1-D"):
        paddle.bucketize(T(np.zeros(3)), T(np.zeros((2, 3))))
    with pytest.raises(TypeError, match="searchsorted: argument 'values' must be an int or float tensor"):
        paddle.searchsorted(T(np.zeros(3)), T([True]))


def test_mode():
    x = np.array([[[1, 2, 2], [2, 3, 3]], [[0, 5, 5], [9, 9, 0]]])
    values, indices = paddle.mode(T(x), axis=2)
    np.testing.assert_array_equal(values.numpy(), [[2, 3], [5, 9]])
    np.testing.assert_array_equal(indices.numpy(), [[2, 2], [2, 1]])  # the last occurrence
    a = RNG.integers(0, 3, size=(4, 7))
    v, i = T(a).mode(axis=0, keepdim=True)
    assert v.shape == i.shape == [1, 7]
    for c in range(7):
        col = list(a[:, c])
        best = min(set(col), key=lambda val: (-col.count(val), val))
        assert v.numpy()[0, c] == best
        assert i.numpy()[0, c] == max(r for r, val in enumerate(col) if val == best)
    w = T(np.array([[0.5, 0.2, 0.5]]), stop_gradient=False)
    paddle.mode(w)[0].sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [[0.0, 0.0, 1.0]])
