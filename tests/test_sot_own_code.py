"""The JIT never traces itself: `sot.to_static` (or any function of sot) called inside a compiled
function breaks there with SOT-B004 and runs as eager code runs it; its own frames and what they
call (functools.update_wrapper) are not translated, so a report lists only the user's functions."""
import numpy as np

import runtime as paddle
import sot
from sot.opcode_executor.markers import is_sot_own
from sot_helpers import jit_of


def decorates_inside(x, n):
    @sot.to_static
    def inner(y):
        return y * 3
    return inner(x * n) - 1


def test_a_function_decorated_inside_a_compiled_one_gives_eager_results_and_breaks_once_there():
    jit = jit_of(decorates_inside)
    x = paddle.to_tensor(np.arange(4, dtype="float32"))
    for n in (1, 2, 2, 3):
        np.testing.assert_array_equal(jit(x, n).numpy(), decorates_inside(x, n).numpy())
    mine = sot.report().function("decorates_inside")
    codes = [e.code for f in mine for e in f.breaks]
    assert codes == ["SOT-B004"]
    assert "to_static" in mine[0].breaks[0].reason
    files = {f.file for f in sot.report().functions}
    assert not any(path.endswith(("functools.py", "/sot/api.py", "/sot/config.py")) for path in files)


def test_only_sot_modules_count_as_its_own_code():
    assert is_sot_own(sot.to_static) and is_sot_own(sot.explain)
    assert not is_sot_own(decorates_inside) and not is_sot_own(paddle.tanh) and not is_sot_own(len)
    assert not is_sot_own(jit_of(decorates_inside))  # a user's function wrapped by to_static is the user's
