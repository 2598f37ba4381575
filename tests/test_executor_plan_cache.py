"""A saved plan: `Plan.dumps` writes the build's analysis under the program's
structural hash; a core built with it (`InterpreterCore.build(saved=...)`) takes the dependency
graph, GC plan, placement, edge kinds and cost choice from it instead of analysing again. The
reloaded plan equals the fresh one field by field, and runs from it equal runs from a fresh build
bit for bit, sequential and parallel; a plan of another program or damaged data is refused."""
import dataclasses

import numpy as np
import pytest
from executor_helpers import default_executor_flags, seed_training_program  # noqa: F401 - fixture

import runtime as paddle
from runtime import static
from runtime.executor.executor import prepare_program
from runtime.executor import interpreter
from runtime.executor.interpreter import InterpreterCore
from runtime.executor.plan import Plan

pytestmark = pytest.mark.usefixtures("default_executor_flags", "static_mode")

def _core(main, feed_names, fetch_names, scope, saved=None):
    """A core of `main` as the Executor makes one, built fresh or from `saved`."""
    prepared, pairs = prepare_program(main, feed_names, fetch_names)
    core = InterpreterCore(prepared, scope, None, feed_names, fetch_names, holder_vars=("feed", "fetch"),
                           inplace_pairs=pairs)
    core.build(saved)
    return core


def _comparable(value):
    """A plan field in a form `==` compares by value (Instructions compare by identity)."""
    if isinstance(value, tuple) and value and dataclasses.is_dataclass(value[0]):
        return [{k: (repr(v) if k == "attrs" else v) for k, v in dataclasses.asdict(ins).items()} for ins in value]
    return value


def _trained(main, startup, loss, feeds, saved=None, parallel=False):
    """Losses and final parameters of a few training steps in a fresh scope."""
    scope = static.Scope()
    paddle.seed(0)  # the same initial parameters for both
    static.Executor().run(startup, scope=scope)
    names = sorted(feeds[0])
    core = _core(main, names, [loss.name], scope, saved)
    losses = [core.run([f[n] for n in names], parallel=parallel)[0] for f in feeds]
    params = {p.name: np.array(scope.find_var(p.name).get_tensor()) for p in main.all_parameters()}
    return core, losses, params


def test_a_saved_plan_round_trips_field_by_field_and_its_analysis_is_not_redone(monkeypatch):
    main, startup, loss, feeds = seed_training_program(1)
    core = _core(main, sorted(feeds[0]), [loss.name], static.Scope())
    loaded = Plan.loads(core.plan.dumps(), core.program, core.place)
    for field in dataclasses.fields(Plan):
        if field.name not in ("program", "place"):
            assert _comparable(getattr(loaded, field.name)) == _comparable(getattr(core.plan, field.name)), field.name

    def not_again(*args, **kwargs):
        raise AssertionError("analysed again")
    for name in ("DependencyBuilder", "analyse_lifetimes", "StreamAnalyzer", "place"):
        monkeypatch.setattr(interpreter, name, not_again)
    again = _core(main, sorted(feeds[0]), [loss.name], static.Scope(), saved=core.plan.dumps())
    for field in dataclasses.fields(Plan):
        if field.name not in ("program", "place"):
            assert _comparable(getattr(again.plan, field.name)) == _comparable(getattr(core.plan, field.name)), \
                field.name


@pytest.mark.parametrize("parallel", [False, True], ids=["sequential", "parallel"])
def test_training_from_a_saved_plan_equals_training_from_a_fresh_build(parallel):
    main, startup, loss, feeds = seed_training_program(4)
    fresh, want_losses, want_params = _trained(main, startup, loss, feeds, parallel=parallel)
    _, got_losses, got_params = _trained(main, startup, loss, feeds, saved=fresh.plan.dumps(), parallel=parallel)
    for got, want in zip(got_losses, want_losses):
        np.testing.assert_array_equal(got, want)
    assert got_params.keys() == want_params.keys()
    for name in want_params:
        np.testing.assert_array_equal(got_params[name], want_params[name])


def test_a_plan_of_another_program_or_damaged_data_is_refused():
    main, startup, loss, feeds = seed_training_program(1)
    names = sorted(feeds[0])
    data = _core(main, names, [loss.name], static.Scope()).plan.dumps()
    other, _, other_loss, _ = seed_training_program(1)  # another program: new var names, another hash
    with pytest.raises(ValueError, match="the plan was made for program .*, not for this program"):
        _core(other, names, [other_loss.name], static.Scope(), saved=data)
    with pytest.raises(ValueError, match="not a saved plan"):
        _core(main, names, [loss.name], static.Scope(), saved=data[:40])
