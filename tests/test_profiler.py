"""`paddle.profiler`: the scheduler's states (recorded from PaddlePaddle 3.3.1,
tests/fixtures/paddle/profiler/record_profiler.py), what is recorded (eager ops, compiled graphs with
their ops, user spans, profile steps) and how it nests, the Chrome trace, the summary tables and
step_info. Nothing here depends on how long anything takes: only on which events exist, their
counts, and their nesting (an enclosing span starts before and ends after what it encloses).
"""
from __future__ import annotations

import json
import pathlib
import re
import threading
import warnings

import numpy as np
import pytest

import runtime as paddle
import runtime.nn.functional as F
import runtime.profiler as profiler
import sot
from runtime.executor import interpreter
from runtime.ops import dispatch

REF = json.loads((pathlib.Path(__file__).parent / "fixtures" / "paddle" / "profiler" / "scheduler_states.json")
                 .read_text())
State = profiler.ProfilerState


def work(x, w):
    return F.relu(paddle.matmul(x, w) + 1.0)


def profiled(steps, body, **options):
    """Run `body(step)` for each step under a Profiler that keeps its results (no files); the Profiler."""
    options.setdefault("on_trace_ready", lambda prof: None)
    prof = profiler.Profiler(targets=[profiler.ProfilerTarget.CPU], **options)
    prof.start()
    for i in range(steps):
        body(i)
        prof.step()
    prof.stop()
    return prof


def encloses(outer, inner):
    return outer.tid == inner.tid and outer.start <= inner.start and inner.end <= outer.end


def table_rows(text, title):
    """{name: calls} of one summary table (all its thread sections)."""
    block = text.split(title, 1)[1].split("\n\n", 1)[0]
    rows = {}
    for line in block.splitlines():
        m = re.match(r"^(\s*\S[^ ]*(?: \S+)*?)\s{2,}(\d+)\s{2,}[\d.]+ / ", line)
        if m:
            rows[m.group(1)] = rows.get(m.group(1), 0) + int(m.group(2))
    return rows


@pytest.mark.parametrize("case", REF["make_scheduler"], ids=lambda c: str(c["kwargs"]))
def test_make_scheduler_states_follow_paddles(case):
    scheduler = profiler.make_scheduler(**case["kwargs"])
    assert [scheduler(i).name for i in range(len(case["states"]))] == case["states"]


@pytest.mark.parametrize("case", REF["range"], ids=lambda c: f"{c['start']}-{c['end']}")
def test_a_start_end_scheduler_steps_and_hands_over_traces_as_paddles(case):
    seen = []
    prof = profiler.Profiler(scheduler=(case["start"], case["end"]), on_trace_ready=lambda p: seen.append("trace_ready"))
    prof.start()
    for _ in range(8):
        seen.append(prof.current_state.name)
        paddle.matmul(paddle.ones([2, 2]), paddle.ones([2, 2]))
        prof.step()
    prof.stop()
    assert seen == case["states"]


def test_enums_have_paddles_values():
    for enum_name, ref in (("ProfilerState", REF["states"]), ("ProfilerTarget", REF["targets"]),
                           ("SortedKeys", REF["sorted_keys"])):
        assert {k: v.value for k, v in getattr(profiler, enum_name).__members__.items()} == ref


@pytest.mark.parametrize("kwargs", [dict(closed=-1, ready=0, record=1), dict(closed=0, ready=0, record=0),
                                    dict(closed=0, ready=0, record=1, repeat=-1)])
def test_bad_scheduler_arguments_raise_as_paddles(kwargs):
    with pytest.raises(AssertionError, match="Invalid profiler scheduler arguments"):
        profiler.make_scheduler(**kwargs)


def test_bad_profiler_arguments_raise():
    with pytest.raises(AssertionError, match="end > start"):
        profiler.Profiler(scheduler=(5, 2))
    with pytest.raises(TypeError, match="scheduler"):
        profiler.Profiler(scheduler="steps")


def test_recorded_events_nest_and_results_are_unchanged():
    x, w = paddle.randn([3, 4]), paddle.randn([4, 4])
    want = work(x, w).numpy()
    got = []

    def body(step):
        with profiler.RecordEvent("outer"):
            inner = profiler.RecordEvent("inner")
            inner.begin()
            got.append(work(x, w).numpy())
            inner.end()

    prof = profiled(2, body)
    for g in got:
        np.testing.assert_array_equal(g, want)
    events = prof.profiler_result.get_data()
    by = {}
    for e in events:
        by.setdefault(e.name, []).append(e)
    assert len(by["outer"]) == len(by["inner"]) == 2
    assert [len(by[op]) for op in ("matmul", "add", "relu")] == [2, 2, 2]
    assert {e.type for e in by["matmul"]} == {profiler.TracerEventType.Operator}
    for outer, inner in zip(by["outer"], by["inner"]):
        assert encloses(outer, inner)
        step = next(s for s in events if s.type is profiler.TracerEventType.ProfileStep and encloses(s, outer))
        assert step.name in ("ProfileStep#0", "ProfileStep#1")
        assert sum(encloses(inner, e) for e in events if e.type is profiler.TracerEventType.Operator) == 3


def test_record_event_as_a_decorator_and_outside_a_profiler():
    @profiler.RecordEvent("decorated")
    def f(x):
        return x * 2

    f(paddle.ones([2]))   # no profiler: nothing recorded, nothing raised
    profiler.RecordEvent("never begun").end()
    prof = profiled(1, lambda i: f(paddle.ones([2])))
    assert [e.name for e in prof.profiler_result.events if e.type is profiler.TracerEventType.PythonUserDefined] \
        == ["decorated"]


def test_observers_are_installed_only_while_recording():
    assert dispatch._kernel_observer is None and interpreter._run_observer is None
    installed = []

    def body(step):
        installed.append((dispatch._kernel_observer is not None, interpreter._run_observer is not None))
        paddle.ones([2]) + 1.0

    profiled(5, body, scheduler=profiler.make_scheduler(closed=1, ready=1, record=1, repeat=1))
    assert installed == [(False, False), (False, False), (True, True), (False, False), (False, False)]
    assert dispatch._kernel_observer is None and interpreter._run_observer is None


def test_a_compiled_graph_is_one_event_holding_its_ops():
    x, w = paddle.randn([3, 4]), paddle.randn([4, 4])
    compiled = sot.to_static(work)
    compiled(x, w)   # translated before the profile
    got = []
    prof = profiled(2, lambda i: got.append(compiled(x, w).numpy()))
    for g in got:
        np.testing.assert_array_equal(g, work(x, w).numpy())
    events = prof.profiler_result.events
    graphs = [e for e in events if e.type is profiler.TracerEventType.Forward]
    assert len(graphs) == 2 and len({g.name for g in graphs}) == 1 and "work" in graphs[0].name
    ops = [e for e in events if e.graph == graphs[0].name]
    assert ops and all(e.type is profiler.TracerEventType.Operator for e in ops)
    assert all(any(encloses(g, op) for g in graphs) for op in ops)
    assert "matmul" in {op.name for op in ops}


def test_a_compiled_backward_is_a_backward_event():
    w = paddle.randn([4, 4])
    w.stop_gradient = False
    x = paddle.randn([3, 4])
    compiled = sot.to_static(work)
    compiled(x, w).sum().backward()
    w.clear_gradient()
    eager_w = w.detach()
    eager_w.stop_gradient = False
    work(x, eager_w).sum().backward()

    def body(step):
        w.clear_gradient()
        compiled(x, w).sum().backward()

    prof = profiled(1, body)
    np.testing.assert_allclose(w.grad.numpy(), eager_w.grad.numpy(), rtol=1e-6, atol=1e-6)
    kinds = {e.type for e in prof.profiler_result.events if e.name.startswith("SIR_")}
    assert kinds == {profiler.TracerEventType.Forward, profiler.TracerEventType.Backward}


def test_summary_lists_the_ops_that_ran_with_their_counts(capsys):
    x, w = paddle.randn([3, 4]), paddle.randn([4, 4])
    compiled = sot.to_static(work)
    compiled(x, w)

    def body(step):
        with profiler.RecordEvent("block"):
            work(x, w)
            compiled(x, w)

    prof = profiled(3, body)
    prof.summary(op_detail=True, time_unit="us")
    text = capsys.readouterr().out
    assert "Time unit: us" in text
    ops = table_rows(text, "Operator Summary")
    in_graph = [e.name for e in prof.profiler_result.events if e.graph]
    assert ops["matmul"] == 3 + in_graph.count("matmul") and in_graph.count("matmul") == 3
    assert ops["relu"] == 3 and table_rows(text, "UserDefined Summary") == {"block": 3}
    graphs = table_rows(text, "Graph Summary")
    graph_name = next(e.name for e in prof.profiler_result.events if e.type is profiler.TracerEventType.Forward)
    assert graphs[graph_name] == 3 and graphs["  matmul"] == 3
    assert re.search(r"\n\s*ProfileStep\s+4\s", text.split("Overview Summary", 1)[1])   # steps 0-2, and stop()'s
    for key in profiler.SortedKeys:
        prof.summary(sorted_by=key)
        assert table_rows(capsys.readouterr().out, "Operator Summary") == ops
    prof.summary(op_detail=False, thread_sep=True, views=[profiler.SummaryView.ModelView])
    text = capsys.readouterr().out
    assert "Operator Summary" not in text and "  matmul" not in text and f"Thread: MainThread" in text


def test_thread_sep_gives_each_thread_its_section(capsys):
    def in_thread():
        with profiler.RecordEvent("worker"):
            paddle.ones([2]) * 3.0

    def body(step):
        t = threading.Thread(target=in_thread, name="loader")
        t.start()
        t.join()
        paddle.ones([2]) + 1.0

    prof = profiled(1, body)
    worker = next(e for e in prof.profiler_result.events if e.name == "worker")
    assert worker.tid != threading.get_native_id()
    prof.summary(thread_sep=True)
    text = capsys.readouterr().out
    assert "Thread: MainThread" in text and f"({worker.tid})" in text


def test_the_exported_chrome_trace_loads_and_has_the_events(tmp_path):
    x, w = paddle.randn([3, 4]), paddle.randn([4, 4])
    prof = profiled(2, lambda i: work(x, w), on_trace_ready=profiler.export_chrome_tracing(str(tmp_path / "logs"), "w"))
    (written,) = (tmp_path / "logs").iterdir()
    assert written.name.startswith("w_time_") and written.name.endswith(".paddle_trace.json")
    trace = json.loads(written.read_text())
    complete = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert [e["name"] for e in complete if e["cat"] == "Operator"].count("matmul") == 2
    assert all(isinstance(e["ts"], float) and e["dur"] >= 0 and e["tid"] for e in complete)
    assert any(e["ph"] == "M" and e["name"] == "thread_name" for e in trace["traceEvents"])
    prof.export(str(tmp_path / "again.json"), format="json")
    loaded = profiler.load_profiler_result(str(tmp_path / "again.json"))
    assert [(e.name, e.type, e.tid, e.graph) for e in loaded.events] == \
        [(e.name, e.type, e.tid, e.graph) for e in prof.profiler_result.events]
    with pytest.raises(ValueError, match="only 'json'"):
        prof.export(str(tmp_path / "x.pb"), format="pb")
    with pytest.raises(ValueError, match="time_unit"):
        prof.summary(time_unit="minutes")


def test_default_on_trace_ready_writes_under_profiler_log(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    prof = profiler.Profiler()
    with prof:
        paddle.ones([2]) + 1.0
    assert [p.suffix for p in (tmp_path / "profiler_log").iterdir()] == [".json"]


def test_leaving_record_for_closed_warns_and_keeps_no_trace():
    states = [State.RECORD, State.CLOSED, State.CLOSED]
    ready = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        prof = profiled(2, lambda i: None, scheduler=lambda step: states[step], on_trace_ready=ready.append)
    assert ready == [] and prof.profiler_result is None
    assert any("RECORD->CLOSED" in str(w.message) for w in caught)
    with pytest.raises(RuntimeError, match="no recording"):
        prof.export("unused.json")


def test_step_info_reports_batch_cost_reader_cost_and_ips():
    prof = profiler.Profiler(timer_only=True)
    prof.start()
    for _ in range(3):
        with profiler.RecordEvent("read", profiler.TracerEventType.Dataloader):
            paddle.ones([2])
        prof.step(num_samples=4)
    info = prof.step_info(unit="images")
    assert re.fullmatch(r" reader_cost: \d+\.\d{5} s batch_cost: \d+\.\d{5} s ips: \d+\.\d{3} images/s", info)
    assert prof.step_info() == ""   # nothing since the last call
    prof.step()
    assert re.fullmatch(r" batch_cost: \d+\.\d{5} s ips: \d+\.\d{3} steps/s", prof.step_info())
    prof.stop()
    assert prof.profiler_result is None and dispatch._kernel_observer is None


def test_a_dataloader_loop_reports_its_reader_cost_and_loading_events():
    data = np.arange(12, dtype="float32").reshape(6, 2)
    loader = paddle.io.DataLoader(paddle.io.TensorDataset([paddle.to_tensor(data)]), batch_size=2)
    batches = []
    with profiler.Profiler(on_trace_ready=lambda p: None) as prof:
        for (batch,) in loader:
            batches.append(batch.numpy())
            prof.step(num_samples=2)
        info = prof.step_info()
    np.testing.assert_array_equal(np.concatenate(batches), data)
    assert re.fullmatch(r" reader_cost: \d+\.\d{5} s batch_cost: \d+\.\d{5} s ips: \d+\.\d{3} samples/s", info)
    loading = [e for e in prof.profiler_result.events if e.type is profiler.TracerEventType.Dataloader]
    assert [e.name for e in loading] == ["DataLoader"] * 3


def test_timer_only_summary_prints_nothing(capsys):
    with profiler.Profiler(timer_only=True) as prof:
        paddle.ones([2]) + 1.0
        prof.step()
    prof.summary()
    assert capsys.readouterr().out == ""


def test_one_profiler_records_at_a_time():
    first = profiler.Profiler(on_trace_ready=lambda p: None)
    first.start()
    try:
        with pytest.raises(RuntimeError, match="already recording"):
            profiler.Profiler(on_trace_ready=lambda p: None).start()
    finally:
        first.stop()
    assert dispatch._kernel_observer is None
