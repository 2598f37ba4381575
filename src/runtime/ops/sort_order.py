"""The order Paddle's CPU kernels leave tied values in: `argsort` sorts with libstdc++'s `std::sort`
(introsort, not stable) and `topk` picks with `std::nth_element` then sorts the top k;
generate_proposals keeps its pre-NMS top n as `std::nth_element` leaves them; matrix_nms ranks with
`std::partial_sort` (a heap). Detection code that
sorts scores (nms, generate_proposals) must reproduce that order, since which of two tied boxes comes first
decides which one suppresses the other. These are straight transcriptions of libstdc++'s
algorithms over a list of indices, compared through the values (NaN first, then larger: Paddle's
descending comparator). Host-only, O(n log n) Python steps: meant for box counts, not tensors.
"""
from __future__ import annotations

import math
from typing import Callable, Sequence

__all__ = ["argsort_descending", "topk_descending", "partition_descending", "partial_sort_descending"]

_THRESHOLD = 16  # libstdc++'s _S_threshold: ranges this short are insertion-sorted


def _greater(values: Sequence[float]) -> Callable[[int, int], bool]:
    def comp(i: int, j: int) -> bool:
        a, b = values[i], values[j]
        return (a != a and b == b) or a > b
    return comp


def _adjust_heap(a: list, first: int, hole: int, length: int, value: int, comp) -> None:
    top = child = hole
    while child < (length - 1) // 2:
        child = 2 * (child + 1)
        if comp(a[first + child], a[first + child - 1]):
            child -= 1
        a[first + hole] = a[first + child]
        hole = child
    if length % 2 == 0 and child == (length - 2) // 2:
        child = 2 * (child + 1)
        a[first + hole] = a[first + child - 1]
        hole = child - 1
    parent = (hole - 1) // 2
    while hole > top and comp(a[first + parent], value):
        a[first + hole] = a[first + parent]
        hole = parent
        parent = (hole - 1) // 2
    a[first + hole] = value


def _pop_heap(a: list, first: int, last: int, result: int, comp) -> None:
    value = a[result]
    a[result] = a[first]
    _adjust_heap(a, first, 0, last - first, value, comp)


def _heap_select(a: list, first: int, middle: int, last: int, comp) -> None:
    length = middle - first
    for parent in range((length - 2) // 2, -1, -1) if length > 1 else ():
        _adjust_heap(a, first, parent, length, a[first + parent], comp)
    for i in range(middle, last):
        if comp(a[i], a[first]):
            _pop_heap(a, first, middle, i, comp)


def _sort_heap(a: list, first: int, last: int, comp) -> None:
    while last - first > 1:
        last -= 1
        _pop_heap(a, first, last, last, comp)


def _partition_pivot(a: list, first: int, last: int, comp) -> int:
    """Median of three moved to `first`, then Hoare's unguarded partition around it."""
    x, y, z = first + 1, first + (last - first) // 2, last - 1
    if comp(a[x], a[y]):
        m = y if comp(a[y], a[z]) else z if comp(a[x], a[z]) else x
    else:
        m = x if comp(a[x], a[z]) else z if comp(a[y], a[z]) else y
    a[first], a[m] = a[m], a[first]
    lo, hi = first + 1, last
    while True:
        while comp(a[lo], a[first]):
            lo += 1
        hi -= 1
        while comp(a[first], a[hi]):
            hi -= 1
        if not lo < hi:
            return lo
        a[lo], a[hi] = a[hi], a[lo]
        lo += 1


def _linear_insert(a: list, last: int, comp) -> None:
    value = a[last]
    while comp(value, a[last - 1]):
        a[last] = a[last - 1]
        last -= 1
    a[last] = value


def _insertion_sort(a: list, first: int, last: int, comp) -> None:
    for i in range(first + 1, last):
        if comp(a[i], a[first]):
            a[first:i + 1] = [a[i], *a[first:i]]
        else:
            _linear_insert(a, i, comp)


def _introsort(a: list, first: int, last: int, depth: int, comp) -> None:
    while last - first > _THRESHOLD:
        if depth == 0:
            _heap_select(a, first, last, last, comp)
            _sort_heap(a, first, last, comp)
            return
        depth -= 1
        cut = _partition_pivot(a, first, last, comp)
        _introsort(a, cut, last, depth, comp)
        last = cut


def _std_sort(a: list, first: int, last: int, comp) -> None:
    n = last - first
    if n < 2:
        return
    _introsort(a, first, last, 2 * int(math.log2(n)), comp)
    if n > _THRESHOLD:
        _insertion_sort(a, first, first + _THRESHOLD, comp)
        for i in range(first + _THRESHOLD, last):
            _linear_insert(a, i, comp)
    else:
        _insertion_sort(a, first, last, comp)


def _nth_element(a: list, first: int, nth: int, last: int, comp) -> None:
    depth = 2 * int(math.log2(last - first))
    while last - first > 3:
        if depth == 0:
            _heap_select(a, first, nth + 1, last, comp)
            a[first], a[nth] = a[nth], a[first]
            return
        depth -= 1
        cut = _partition_pivot(a, first, last, comp)
        if cut <= nth:
            first = cut
        else:
            last = cut
    _insertion_sort(a, first, last, comp)


def argsort_descending(values: Sequence[float]) -> list[int]:
    """`paddle.argsort(values, descending=True)` on the CPU, ties in the order std::sort leaves them."""
    order = list(range(len(values)))
    _std_sort(order, 0, len(order), _greater(values))
    return order


def topk_descending(values: Sequence[float], k: int) -> list[int]:
    """The indices `paddle.topk(values, k)` gives on the CPU (nth_element, then std::sort of the first k).
    With k equal to the length, ties may come in another order than Paddle's."""
    order = list(range(len(values)))
    comp = _greater(values)
    if 0 < k < len(order):
        _nth_element(order, 0, k - 1, len(order), comp)
    _std_sort(order, 0, min(k, len(order)), comp)
    return order[:k]


def partition_descending(values: Sequence[float], k: int) -> list[int]:
    """The first k indices, unsorted, as `std::nth_element(first, first + k, last)` leaves them (k < length)."""
    order = list(range(len(values)))
    _nth_element(order, 0, k, len(order), _greater(values))
    return order[:k]


def partial_sort_descending(values: Sequence[float], k: int) -> list[int]:
    """The first k indices as `std::partial_sort(first, first + k, last)` sorts them (heap select, heap sort)."""
    order = list(range(len(values)))
    comp = _greater(values)
    _heap_select(order, 0, k, len(order), comp)
    _sort_heap(order, 0, k, comp)
    return order[:k]
