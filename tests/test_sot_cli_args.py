"""The `sot` command line: --help and --version, where `sot run`'s options may go, and one-line
errors (exit 2) for malformed input, from main(argv) or a fresh interpreter (`python -m sot`)."""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import runtime as paddle
import sot
from sot.tools.cli import _parser, main
from sot.tools.report import Report

ARGV_SCRIPT = textwrap.dedent('''\
    import json
    import sys

    with open(sys.argv[0] + ".argv", "w") as f:
        json.dump(sys.argv[1:], f)
''')


def python_m_sot(*args, cwd):
    """`python -m sot ARGS` in a fresh interpreter (`sot run` keeps every translator: not in-process),
    importing the `sot` under test wherever `cwd` is."""
    path = os.pathsep.join([os.path.dirname(os.path.dirname(sot.__file__)), os.environ.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, "-m", "sot", *map(str, args)], cwd=cwd, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONPATH": path})


def one_line_error(err, command):
    """The single stderr line of a refused command line, checked to carry one `sot COMMAND:` prefix."""
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith(f"sot {command}: ") and f"sot {command}: sot" not in err, err
    return err


@pytest.fixture(scope="module")
def report_data(tmp_path_factory):
    """A saved report of one compiled function, as its JSON object."""
    def doubled(x):
        return x * 2

    jit = sot.to_static(doubled)
    x = paddle.to_tensor(np.ones(2, "float32"))
    np.testing.assert_array_equal(jit(x).numpy(), doubled(x).numpy())
    mine = [f for f in sot.report().functions if f.qualname.endswith("doubled") and f.file == __file__]
    path = Report(mine).save(tmp_path_factory.mktemp("report") / "r.json")
    return json.loads(path.read_text())


@pytest.mark.parametrize("command", ["run", "report", "cache", "explain", "bisect"])
def test_help_of_every_command_exits_0_and_describes_each_option(command, capsys):
    assert main([command, "--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: sot {command}")
    for action in _parser().commands[command]._actions:
        assert action.help, action
        for option in action.option_strings:
            assert option in out


def test_report_help_says_which_thresholds_are_totals_and_that_ratios_are_0_to_1(capsys):
    assert main(["report", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "total breaks over all functions" in out and "total eager fallbacks over all functions" in out
    assert "any one function recompiled" in out and "a ratio from 0 to 1" in out


def test_top_level_help_and_version_exit_0(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert all(f"sot {c}" in out for c in ("run", "report", "cache", "explain", "bisect"))
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"sot {sot.__version__}\n"


def test_python_m_sot_prints_the_version(tmp_path):
    done = python_m_sot("--version", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (0, f"sot {sot.__version__}\n")


def test_run_takes_report_after_the_script_as_sots_and_passes_the_rest(tmp_path):
    (tmp_path / "s.py").write_text(ARGV_SCRIPT)
    done = python_m_sot("run", "s.py", "--report", "r.json", "--epochs", "3", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "s.py.argv").read_text()) == ["--epochs", "3"]
    assert json.loads((tmp_path / "r.json").read_text())["schema"] == "sot-report/1"


def test_run_passes_everything_after_double_dash_to_the_script(tmp_path):
    (tmp_path / "s.py").write_text(ARGV_SCRIPT)
    done = python_m_sot("run", "--report=r.json", "s.py", "-m", "x", "--", "--report", "theirs.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "s.py.argv").read_text()) == ["-m", "x", "--report", "theirs.json"]
    assert (tmp_path / "r.json").exists() and not (tmp_path / "theirs.json").exists()


@pytest.mark.parametrize("argv, words", [
    (["run", "s.py", "--module", "x"], "put `--` before it"),
    (["run", "s.py", "--report", "a.json", "--report", "b.json"], "--report given twice"),
    (["run", "--reprot", "x.json", "s.py"], "unknown option '--reprot'"),
    (["run", "-m", "no_such_module_anywhere"], "no module named 'no_such_module_anywhere'"),
])
def test_run_refuses_misplaced_or_unknown_options_in_one_line(argv, words, tmp_path, monkeypatch, capsys):
    (tmp_path / "s.py").write_text(ARGV_SCRIPT)
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    assert words in one_line_error(capsys.readouterr().err, "run")
    assert not (tmp_path / "s.py.argv").exists()  # the script did not run


@pytest.mark.parametrize("edit, words", [
    (lambda d: d["functions"][0].pop("cache"), "functions[0]: missing key 'cache'"),
    (lambda d: d["functions"][0].update(line="12"), "functions[0].line: expected int, got str"),
    (lambda d: d["functions"][0]["cache"]["entries"][0].update(guards="x"),
     "functions[0].cache.entries[0].guards: expected a list, got str"),
    (lambda d: d.update(functions={}), "functions: expected a list, got dict"),
    (lambda d: d.pop("functions"), "missing key 'functions'"),
    (lambda d: d.update(schema="other/2"), "is not a sot-report/1 report (schema: 'other/2')"),
])
@pytest.mark.parametrize("command", ["report", "cache"])
def test_a_malformed_report_is_refused_in_one_line(command, edit, words, report_data, tmp_path, capsys):
    data = json.loads(json.dumps(report_data))
    edit(data)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    assert main([command, str(path)]) == 2
    assert words in one_line_error(capsys.readouterr().err, command)


def test_the_untouched_report_loads(report_data, tmp_path, capsys):
    path = tmp_path / "ok.json"
    path.write_text(json.dumps(report_data))
    assert main(["report", str(path)]) == 0
    assert "doubled" in capsys.readouterr().out


@pytest.mark.parametrize("fmt", ["text", "html"])
def test_an_unwritable_output_is_refused_in_one_line(fmt, report_data, tmp_path, capsys):
    path = tmp_path / "ok.json"
    path.write_text(json.dumps(report_data))
    assert main(["report", str(path), "--format", fmt, "-o", str(path / "inside_a_file")]) == 2
    assert f"cannot write {path / 'inside_a_file'}" in one_line_error(capsys.readouterr().err, "report")


def test_an_unknown_option_names_the_commands_help(report_data, tmp_path, capsys):
    path = tmp_path / "ok.json"
    path.write_text(json.dumps(report_data))
    assert main(["report", str(path), "--max-break", "1"]) == 2
    assert "unrecognized arguments: --max-break 1 (see sot report --help)" in one_line_error(capsys.readouterr().err,
                                                                                             "report")


@pytest.mark.parametrize("value", ["1.5", "90", "-0.1", "most"])
def test_min_captured_ratio_outside_0_to_1_is_refused(value, report_data, tmp_path, capsys):
    path = tmp_path / "ok.json"
    path.write_text(json.dumps(report_data))
    assert main(["report", str(path), "--min-captured-ratio", value]) == 2
    assert "expected a ratio from 0 to 1" in one_line_error(capsys.readouterr().err, "report")


def test_min_captured_ratio_1_is_accepted_and_checked(report_data, tmp_path, capsys):
    path = tmp_path / "ok.json"
    path.write_text(json.dumps(report_data))
    assert main(["report", str(path), "--min-captured-ratio", "1"]) == 0  # all of `doubled` ran compiled
    capsys.readouterr()


def test_bisect_of_a_function_taking_arguments_is_refused_in_one_line(tmp_path, capsys):
    script = tmp_path / "case.py"
    script.write_text("def needs(x, y=1):\n    return x\n")
    assert main(["bisect", f"{script}:needs"]) == 2
    assert "needs takes arguments (x)" in one_line_error(capsys.readouterr().err, "bisect")


@pytest.mark.parametrize("argv, words", [([], "sot: missing command"), (["frobnicate"], "sot: unknown command"),
                                         (["--bogus"], "sot: unrecognized arguments: --bogus (see sot --help)")])
def test_a_missing_or_unknown_command_is_refused_in_one_line(argv, words, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(words) and err.count("\n") == 1
