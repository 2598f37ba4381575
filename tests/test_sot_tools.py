"""The `sot` command against a script with known graphs, recompiles and fallbacks (exact counts).

KNOWN runs `clean` 3 times (one graph: tanh and a multiply), `scaled` with n = 1, 2, 3, 3 (three
graphs, two recompiles, each after a miss on `n`), and `checked(x, False)` twice (the frame raises
its own ValueError: one SOT-R001 fallback, two eager runs). `sot run` executes it in a subprocess
once per module; the formats, thresholds and cache views read that report. Graph breaks are
made by the translator's resume functions (not in this report yet), so the break-handling paths
are checked on a copy of the report with one break added by hand.
"""
import json
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import pytest

from sot.tools import formats, gate
from sot.tools.cli import main
from sot.tools.report import SCHEMA, Report, load

KNOWN = textwrap.dedent('''\
    import sys

    import numpy as np

    import runtime as paddle
    import sot


    @sot.to_static
    def clean(x):
        return paddle.tanh(x) * 2


    @sot.to_static
    def scaled(x, n):
        return x * n if n > 0 else x  # n decides a Python branch: translated per value


    @sot.to_static
    def checked(x, ok):
        if not ok:
            raise ValueError("not ok")
        return x - 1


    def main():
        x = paddle.to_tensor(np.ones((2, 3), "float32"))
        for _ in range(3):
            clean(x)
        for n in (1, 2, 3, 3):
            scaled(x, n)
        for _ in range(2):
            try:
                checked(x, False)
            except ValueError:
                pass
        if "--fail" in sys.argv:
            raise RuntimeError("the script fails")
        if "--exit" in sys.argv:
            sys.exit(3)


    main()
''')
RAISE_LINE = 22  # `raise ValueError("not ok")` in KNOWN


def sot_cli(*args, cwd=None):
    """The `sot` command in a fresh interpreter (as CI runs it)."""
    return subprocess.run([sys.executable, "-m", "sot.tools.cli", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def known(tmp_path_factory):
    """(folder, script path, report path) of one `sot run` of KNOWN."""
    folder = tmp_path_factory.mktemp("known")
    script = folder / "known.py"
    script.write_text(KNOWN)
    out = folder / "report.json"
    done = sot_cli("run", "--report", out, script)
    assert done.returncode == 0, done.stderr
    return folder, script, out


def by_name(report):
    """Functions by qualname; one a break made as `qualname <- the function whose break made it` (a resume
    function keeps the user's qualname)."""
    return {f.qualname if f.resume_of is None else f"{f.qualname} <- {f.resume_of}": f for f in report.functions}


def with_a_break(path, tmp_path):
    """The known report with one graph break in `clean` (code SOT-B003 at its return line)."""
    data = json.loads(path.read_text())
    clean = next(f for f in data["functions"] if f["qualname"] == "clean")
    clean["breaks"].append({"code": "SOT-B003", "kind": "UNSPS", "reason": "print", "file": clean["file"],
                            "line": clean["line"] + 2, "source": "return paddle.tanh(x) * 2"})
    out = tmp_path / "broken.json"
    out.write_text(json.dumps(data))
    return out


# ----- the recorded data -----

def test_the_report_has_the_known_counts(known):
    _, script, out = known
    data = json.loads(out.read_text())
    assert data["schema"] == SCHEMA == "sot-report/1"
    f = by_name(load(out))
    assert set(f) == {"clean", "scaled", "checked"}
    assert all(fn.file == str(script) for fn in f.values())
    clean, scaled, checked = f["clean"], f["scaled"], f["checked"]
    assert [len(clean.graphs), clean.graphs[0].ops, clean.graphs[0].runs, clean.runs] == [1, 2, 3, 3]
    assert (clean.ops_captured, clean.eager_runs, clean.recompiles, clean.captured_ratio) == (6, 0, 0, 1.0)
    assert "tanh" in clean.graphs[0].sir and clean.translate_seconds > 0
    assert [g.runs for g in scaled.graphs] == [1, 1, 2] and scaled.recompiles == 2 and scaled.translations == 3
    assert [e.id for e in scaled.cache.entries] == [2, 1, 0]  # lookup order: most recent hit first
    first, second = scaled.cache.misses
    assert [(m.entry, m.expected, m.actual) for m in first] == [(0, "f_locals['n'] == 1", "2 (int)")]
    assert [(m.entry, m.actual) for m in second] == [(1, "3 (int)"), (0, "3 (int)")]
    (fallback,) = checked.fallbacks
    assert (fallback.code, fallback.kind, fallback.line, fallback.source) == \
        ("SOT-R001", "RAISE", RAISE_LINE, 'raise ValueError("not ok")')
    assert (checked.graphs, checked.eager_runs, [e.kind for e in checked.cache.entries]) == ([], 2, ["eager"])
    totals = load(out).totals
    assert {k: totals[k] for k in ("functions", "graphs", "breaks", "fallbacks", "recompiles")} == \
        {"functions": 3, "graphs": 4, "breaks": 0, "fallbacks": 1, "recompiles": 2}
    assert totals["captured_ratio"] == pytest.approx(10 / 12)


def test_sot_report_in_process_saves_and_loads_the_same_data(tmp_path):
    import numpy as np

    import runtime as paddle
    import sot
    from sot_helpers import jit_of

    def twice(x, k):
        return x * k + 1

    jit = jit_of(twice)
    x = paddle.to_tensor(np.ones(3, "float32"))
    for k in (2, 2, 5):
        np.testing.assert_array_equal(jit(x, k).numpy(), twice(x, k).numpy())
    report = sot.report()
    (mine,) = [f for f in report.functions if f.qualname.endswith("twice") and f.file == __file__]
    assert (len(mine.graphs), mine.recompiles, mine.runs, [g.ops for g in mine.graphs]) == (2, 1, 3, [2, 2])
    loaded = load(report.save(tmp_path / "r.json"))
    assert loaded == report


def test_load_rejects_a_file_of_another_schema(tmp_path):
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"schema": "sot-report/0", "functions": []}))
    with pytest.raises(ValueError, match="not a sot-report/1 report.*sot-report/0"):
        load(other)
    assert main(["report", str(other)]) == 2


# ----- formats -----

def test_json_format_is_the_saved_report(known, capsys):
    _, _, out = known
    assert main(["report", str(out), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads(out.read_text())


def test_text_and_markdown_name_each_function_and_reason(known, capsys):
    _, _, out = known
    assert main(["report", str(out)]) == 0
    text = capsys.readouterr().out
    assert text.startswith("sot report: 3 function(s), 4 graph(s), 0 break(s), 1 fallback(s), 2 recompile(s)")
    assert f"known.py:{RAISE_LINE}" in text and "[SOT-R001]" in text
    assert "recompiled: entry 0 failed `n == 1` (got 2 (int))" in text
    assert main(["report", str(out), "--format", "markdown"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| `")]
    assert [r.split("|")[1].strip() for r in rows[:3]] == ["`clean`", "`scaled`", "`checked`"]
    assert rows[1].split("|")[3:7] == [" 3 ", " 0 ", " 0 ", " 2 "]  # scaled: graphs, breaks, fallbacks, recompiles


def test_junit_has_one_case_per_function_failing_where_it_broke_or_fell_back(known, tmp_path):
    _, _, out = known
    xml_path = tmp_path / "sot.xml"
    assert main(["report", str(with_a_break(out, tmp_path)), "--format", "junit", "-o", str(xml_path)]) == 0
    suite = ET.parse(xml_path).getroot()
    assert (suite.tag, suite.get("tests"), suite.get("failures")) == ("testsuite", "3", "2")
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert set(cases) == {"clean", "scaled", "checked"}
    assert cases["scaled"].find("failure") is None
    assert cases["checked"].find("failure").get("type") == "SOT-R001"
    assert "break [SOT-B003]" in cases["clean"].find("failure").text


class _Rows(HTMLParser):
    """Line number -> (class, title) of each source row of a file page."""

    def __init__(self):
        super().__init__()
        self.rows = {}

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "tr" and a.get("id", "").startswith("L"):
            self.rows[int(a["id"][1:])] = (a.get("class"), a.get("title"))


def test_html_marks_lines_captured_eager_and_break(known, tmp_path):
    _, _, out = known
    folder = tmp_path / "html"
    assert main(["report", str(with_a_break(out, tmp_path)), "--format", "html", "-o", str(folder)]) == 0
    index = (folder / "index.html").read_text()
    assert index.count("<tr><td class=\"name\">") == 3 and "http" not in index and "<script src" not in index
    parser = _Rows()
    parser.feed((folder / "file0.html").read_text())
    rows = parser.rows
    assert len(rows) == len(KNOWN.splitlines())
    assert rows[1] == (None, None)  # import sys: no translated function
    assert rows[16][0] == "captured"  # return x * n
    assert rows[11][0] == "break" and "SOT-B003" in rows[11][1]  # the hand-made break in clean
    assert rows[21][0] == "eager"  # if not ok: checked runs eagerly
    assert rows[RAISE_LINE][0] == "break" and "SOT-R001" in rows[RAISE_LINE][1]


# ----- thresholds -----

@pytest.mark.parametrize("args, status", [
    (["--max-fallbacks", "1"], 0), (["--max-fallbacks", "0"], 1),
    (["--max-breaks", "0"], 0),
    (["--max-recompiles", "2"], 0), (["--max-recompiles", "1"], 1),
    (["--min-captured-ratio", "0.8"], 0), (["--min-captured-ratio", "0.9"], 1),
])
def test_thresholds_exit_non_zero_only_when_exceeded(known, args, status):
    _, _, out = known
    done = sot_cli("report", out, *args)
    assert done.returncode == status, done.stderr
    assert ("FAIL" in done.stderr) == bool(status)


def test_max_breaks_fails_a_report_with_a_break(known, tmp_path, capsys):
    _, _, out = known
    broken = with_a_break(out, tmp_path)
    assert main(["report", str(broken), "--max-breaks", "1"]) == 0
    assert main(["report", str(broken), "--max-breaks", "0"]) == 1
    assert "1 break(s) > --max-breaks 0" in capsys.readouterr().err


def test_baseline_fails_on_new_breaks_fallbacks_and_recompiles(known, tmp_path, capsys):
    _, _, out = known
    assert main(["report", str(out), "--baseline", str(out)]) == 0
    assert main(["report", str(out), "--baseline", str(with_a_break(out, tmp_path))]) == 0  # fewer breaks: fine
    assert main(["report", str(with_a_break(out, tmp_path)), "--baseline", str(out)]) == 1
    assert "clean: new break [SOT-B003]" in capsys.readouterr().err
    better = json.loads(out.read_text())
    for f in better["functions"]:
        f["fallbacks"] = []
        f["cache"]["entries"] = f["cache"]["entries"][:1]
    old = tmp_path / "better.json"
    old.write_text(json.dumps(better))
    assert main(["report", str(out), "--baseline", str(old)]) == 1
    err = capsys.readouterr().err
    assert "checked: new fallback [SOT-R001]" in err and "scaled (" in err and "2 recompile(s), baseline 0" in err


def test_gate_check_lists_every_violation(known):
    _, _, out = known
    report = load(out)
    assert gate.check(report, gate.Limits()) == []
    assert len(gate.check(report, gate.Limits(max_fallbacks=0, max_recompiles=0, min_captured_ratio=1.0))) == 3


# ----- sot run, sot cache, sot explain -----

def test_run_writes_the_report_when_the_script_fails(known, tmp_path):
    _, script, _ = known
    out = tmp_path / "failed.json"
    done = sot_cli("run", "--report", out, script, "--fail")
    assert done.returncode == 1 and "RuntimeError: the script fails" in done.stderr
    assert set(by_name(load(out))) == {"clean", "scaled", "checked"}
    done = sot_cli("run", "--report", out, script, "--exit")
    assert done.returncode == 3 and load(out).totals["graphs"] == 4


def test_run_details_stores_each_graphs_bytecode_and_program(known, tmp_path):
    _, script, plain = known
    out = tmp_path / "detailed.json"
    done = sot_cli("run", "--details", "--report", out, script)
    assert done.returncode == 0, done.stderr
    detailed = [g for f in load(out).functions for g in f.graphs if g.compiled]
    assert detailed and all("RETURN" in g.bytecode and g.program for g in detailed)
    assert all(g.bytecode is None and g.program is None for f in load(plain).functions for g in f.graphs)


@pytest.mark.parametrize("flag", ["-m", "--module"])
def test_run_a_module_writes_the_default_report_that_report_reads_by_default(known, flag):
    folder, _, _ = known
    default = folder / "sot-report.json"
    default.unlink(missing_ok=True)
    done = sot_cli("run", flag, "known", cwd=folder)
    assert done.returncode == 0, done.stderr
    assert "sot run: 3 function(s), 4 graph(s)" in done.stderr and "report written to sot-report.json" in done.stderr
    assert load(default).totals["graphs"] == 4
    summary = sot_cli("report", cwd=folder)
    assert summary.returncode == 0 and summary.stdout.startswith("sot report: 3 function(s), 4 graph(s)")


def test_cache_shows_entries_in_lookup_order_and_why_shows_the_failing_guard(known, capsys):
    _, _, out = known
    assert main(["cache", str(out), "scaled"]) == 0
    text = capsys.readouterr().out
    assert text.splitlines()[0].endswith("3/8 entries, 2 recorded miss(es)")
    assert [line.split(":")[0].strip() for line in text.splitlines() if "hit(s)" in line] == \
        ["entry 2 (graph)", "entry 1 (graph)", "entry 0 (graph)"]
    assert main(["cache", "why", "scaled", str(out)]) == 0
    why = capsys.readouterr().out
    assert "entry 0: first failing guard `n == 1`; got 2 (int)" in why
    assert main(["cache", str(out), "nothing_like_it"]) == 2


def test_explain_shows_graphs_bytecode_and_programs(known):
    _, script, _ = known
    done = sot_cli("explain", f"{script}:scaled")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.startswith("explain scaled: 3 graph(s), 0 break(s), 0 fallback(s)")
    assert out.count("StatementIR: SIR_scaled") == 3
    assert out.count("PUSH_EXC_INFO") == 3  # one generated code each (its handler re-runs a failed call eagerly)
    assert out.count("-- Program") == 3 and "multiply" in out
    done = sot_cli("explain", f"{script}:checked")
    assert "[SOT-R001]" in done.stdout and "hint: " in done.stdout


def test_formats_render_rejects_unknown_format():
    with pytest.raises(ValueError, match="render: unknown format 'pdf'"):
        formats.render(Report([]), "pdf")



def test_the_cache_limit_is_reported(capsys):
    import numpy as np

    import runtime as paddle
    import sot
    from sot.guards import CacheSizeLimitWarning
    from sot_helpers import jit_of

    def varies(x, n):
        return x * n if n > 0 else x  # n decides a Python branch: translated per value

    jit = jit_of(varies, cache_size_limit=2)
    x = paddle.to_tensor(np.ones(2, "float32"))
    with pytest.warns(CacheSizeLimitWarning):
        for n in range(4):
            np.testing.assert_array_equal(jit(x, n).numpy(), varies(x, n).numpy())
    (mine,) = [f for f in sot.report().functions if f.qualname.endswith("varies") and f.file == __file__]
    assert (mine.cache.limit, mine.cache.limit_reached, len(mine.graphs), mine.recompiles) == (2, True, 2, 1)
    assert "[SOT-L001] cache limit 2 reached" in formats.render(Report([mine]), "text")


def test_bad_command_lines_exit_2_with_a_message(capsys, tmp_path):
    assert main(["run", "--reprot", "x.json", "script.py"]) == 2
    assert "unknown option '--reprot'" in capsys.readouterr().err
    assert main(["run", "--report", str(tmp_path / "r.json"), str(tmp_path / "missing.py")]) == 2
    assert "no such script" in capsys.readouterr().err
    assert main(["explain", "no_function_given.py"]) == 2
    assert main(["frobnicate"]) == 2 and "sot run" in capsys.readouterr().err


BREAKS = textwrap.dedent('''\
    import sys

    import numpy as np

    import runtime as paddle
    import sot


    @sot.to_static
    def noisy(x):
        y = paddle.tanh(x) * 2
        print("mid", y.shape, file=sys.stdout)
        return y + 1


    x = paddle.to_tensor(np.ones((2, 3), "float32"))
    for _ in range(3):
        noisy(x)
''')
PRINT_LINE = 12  # print("mid", y.shape, file=sys.stdout) in BREAKS: a print that cannot be deferred


def test_a_graph_break_is_reported_with_its_resume_function(tmp_path, capsys):
    script = tmp_path / "breaks.py"
    script.write_text(BREAKS)
    out = tmp_path / "breaks.json"
    done = sot_cli("run", "--report", out, script)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("mid [2, 3]") == 3  # the print ran for real, once per call
    f = by_name(load(out))
    noisy = f.pop("noisy")
    ((name, resume),) = f.items()
    assert resume.resume_of == "noisy" and name == "noisy <- noisy"
    (brk,) = noisy.breaks
    assert (brk.code, brk.kind, brk.line, brk.source) == ("SOT-B003", "UNSPS", PRINT_LINE,
                                                          'print("mid", y.shape, file=sys.stdout)')
    assert [(g.ops, g.runs, g.ends_in_break) for g in noisy.graphs] == [(2, 3, True)]
    assert (noisy.eager_runs, noisy.fallbacks, resume.breaks) == (3, [], [])
    assert [(g.ops, g.runs, g.ends_in_break) for g in resume.graphs] == [(1, 3, False)]
    assert main(["report", str(out), "--max-breaks", "0"]) == 1
    assert main(["report", str(out), "--max-breaks", "1"]) == 0
    folder = tmp_path / "html"
    assert main(["report", str(out), "--format", "html", "-o", str(folder)]) == 0
    parser = _Rows()
    parser.feed((folder / "file0.html").read_text())
    assert parser.rows[PRINT_LINE][0] == "break" and "SOT-B003" in parser.rows[PRINT_LINE][1]
    assert parser.rows[PRINT_LINE + 1][0] == parser.rows[PRINT_LINE - 1][0] == "captured"


def test_guards_and_dims_are_shown_with_the_names_the_code_uses(known):
    _, _, out = known
    (scaled,) = [f for f in load(out).functions if f.qualname == "scaled"]
    assert formats.readable(scaled, "f_locals['x'] is a tensor of shape [2]") == "x is a tensor of shape [2]"
    assert formats.readable(scaled, "f_locals['self'].w.shape[0] == 3 and f_globals[\"SCALE\"] == 2") == \
        "self.w.shape[0] == 3 and SCALE == 2"
    assert formats.readable(scaled, "f_builtins['len'] is builtin len; my_f_locals['y']") == \
        "len is builtin len; my_f_locals['y']"  # only the frame's own mappings
