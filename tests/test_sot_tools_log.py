"""SOT_LOG: each named topic logs its events of a translation to the `sot` logger, with file:line."""
import logging
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import runtime as paddle
from sot import config
from sot_helpers import jit_of


def scaled(x, n):
    return paddle.tanh(x) * n


def raises(x):
    raise KeyError("no such key")


def run_logged(monkeypatch, caplog, topics):
    """Call `scaled` with n = 1, 2 (a recompile) and `raises` once under SOT_LOG=topics; the messages."""
    monkeypatch.setenv("SOT_LOG", topics)
    x = paddle.to_tensor(np.ones(3, "float32"))
    jit, fails = jit_of(scaled), jit_of(raises)
    with caplog.at_level(logging.INFO, logger="sot"):
        for n in (1, 2):
            np.testing.assert_array_equal(jit(x, n).numpy(), scaled(x, n).numpy())
        with pytest.raises(KeyError):
            fails(x)
    return [r.getMessage() for r in caplog.records if r.name == "sot"]


def test_each_topic_logs_its_events_with_file_and_line(monkeypatch, caplog):
    where = f"{__file__}:{scaled.__code__.co_firstlineno}"
    messages = run_logged(monkeypatch, caplog, "breaks,guards,recompiles,bytecode,sir")
    kinds = [m.split(" ", 1)[0] for m in messages]
    assert kinds.count("guards") == 3 and kinds.count("recompile") == 1 and kinds.count("eager") == 1
    assert kinds.count("sir") == 2 and kinds.count("bytecode") == 2
    (recompile,) = [m for m in messages if m.startswith("recompile")]
    assert where in recompile and "failed `f_locals['n'] == 1` (got 2 (int))" in recompile
    (eager,) = [m for m in messages if m.startswith("eager")]
    assert "[SOT-R001]" in eager and f"{__file__}:{raises.__code__.co_firstlineno + 1}" in eager
    assert all(__file__ in m for m in messages)
    assert any("tanh" in m for m in messages if m.startswith("sir"))
    assert any("RETURN_VALUE" in m for m in messages if m.startswith("bytecode"))


def test_only_the_named_topics_are_logged(monkeypatch, caplog):
    messages = run_logged(monkeypatch, caplog, "recompiles")
    assert [m.split(" ", 1)[0] for m in messages] == ["recompile"]


def test_no_logs_without_sot_log(monkeypatch, caplog):
    monkeypatch.delenv("SOT_LOG", raising=False)
    assert run_logged(monkeypatch, caplog, "") == []


def test_an_unknown_topic_is_an_error_naming_it(monkeypatch):
    monkeypatch.setenv("SOT_LOG", "breaks,gaurds")
    with pytest.raises(ValueError, match="SOT_LOG: unknown topic.*gaurds"):
        config.log_topics()


def test_all_names_every_topic(monkeypatch, caplog):
    every = run_logged(monkeypatch, caplog, "breaks,guards,recompiles,bytecode,sir")
    caplog.clear()
    assert run_logged(monkeypatch, caplog, "all") == every
    monkeypatch.setenv("SOT_LOG", "all")
    assert config.log_topics() == frozenset(config.LOG_TOPICS)


def run_python(code, sot_log):
    """`code` in a fresh interpreter with SOT_LOG=sot_log and this checkout's sources first on the path."""
    src = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
    env = dict(os.environ, SOT_LOG=sot_log, PYTHONPATH=os.pathsep.join([src, os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, capture_output=True, text=True,
                          timeout=120)


def test_a_bad_topic_fails_at_import_listing_the_known_topics():
    out = run_python("import sot\nprint('imported')", "breaks,gaurds")
    assert out.returncode != 0 and "imported" not in out.stdout
    assert "ValueError: SOT_LOG: unknown topic(s) gaurds; known: breaks, guards, recompiles, bytecode, sir, or all" \
        in out.stderr


def test_records_are_printed_once_when_the_user_also_configures_logging():
    """The stderr handler SOT_LOG adds steps aside once `logging.basicConfig` handles the records."""
    out = run_python("""
        import logging, sys
        import numpy as np
        import runtime as paddle
        import sot

        def first(x):
            return paddle.tanh(x)

        def second(x):
            return paddle.exp(x)

        x = paddle.to_tensor(np.ones(2, "float32"))
        np.testing.assert_array_equal(sot.to_static(first)(x).numpy(), first(x).numpy())
        logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="user: %(name)s %(message)s")
        np.testing.assert_array_equal(sot.to_static(second)(x).numpy(), second(x).numpy())
    """, "guards")
    assert out.returncode == 0, out.stderr
    lines = [line for line in out.stderr.splitlines() if line.split(": ", 1)[-1].startswith(("guards", "sot guards"))]
    assert [line.split(" ", 2)[:2] for line in lines] == [["sot:", "guards"], ["user:", "sot"]]
    assert "first" in lines[0] and "second" in lines[1]
