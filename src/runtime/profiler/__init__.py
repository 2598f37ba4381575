"""`paddle.profiler`: Paddle's profiler over host times of eager ops, executor runs (a compiled graph
is one event holding its ops) and user spans; Chrome-trace export, summary tables, step timing.

See profiler.py (the Profiler and its state machine), scheduler.py (make_scheduler), events.py
(what is recorded, and the observers it installs in eager dispatch and the executor only while it
records), result.py (the Chrome trace), summary.py (the tables) and timer.py (step_info).
"""
from .events import RecordEvent, TracerEventType
from .profiler import Profiler, ProfilerTarget, export_chrome_tracing
from .result import ProfilerResult, load_profiler_result
from .scheduler import ProfilerState, make_scheduler
from .summary import SortedKeys, SummaryView

__all__ = ["Profiler", "ProfilerState", "ProfilerTarget", "RecordEvent", "SortedKeys", "SummaryView",
           "TracerEventType", "make_scheduler", "export_chrome_tracing", "load_profiler_result", "ProfilerResult"]
