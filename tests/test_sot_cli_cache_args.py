"""`sot cache` and `sot cache why` take the same arguments, each optional and in either order: the
report (told by naming an existing file or ending in .json; default sot-report.json) and FUNCTION."""
import numpy as np
import pytest

import runtime as paddle
import sot
from sot.tools.cli import main
from sot.tools.report import Report


def grows(x):
    return x + 1


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """A folder holding r.json and sot-report.json: one report of `grows`, called on two sizes (one miss)."""
    jit = sot.to_static(grows)
    for n in (2, 3):
        x = paddle.to_tensor(np.ones(n, "float32"))
        np.testing.assert_array_equal(jit(x).numpy(), grows(x).numpy())
    mine = [f for f in sot.report().functions if f.qualname == "grows" and f.file == __file__]
    assert mine and mine[0].cache.misses
    path = tmp_path_factory.mktemp("cache_args")
    Report(mine).save(path / "r.json")
    Report(mine).save(path / "sot-report.json")
    return path


def _out(argv, capsys):
    """stdout of `sot ARGV`, which must succeed."""
    assert main(argv) == 0, capsys.readouterr().err
    return capsys.readouterr().out


@pytest.mark.parametrize("why", [[], ["why"]])
def test_either_order_and_the_default_report_give_the_same_output(why, folder, capsys, monkeypatch):
    monkeypatch.chdir(folder)
    want = _out(["cache", *why, "r.json", "grows"], capsys)
    assert "grows" in want
    assert _out(["cache", *why, "grows", "r.json"], capsys) == want
    assert _out(["cache", *why, "grows"], capsys) == want  # sot-report.json, the default
    assert _out(["cache", *why, str(folder / "r.json"), "grows"], capsys) == want


def test_a_lone_report_argument_of_why_is_the_report_not_the_function(folder, capsys):
    out = _out(["cache", "why", str(folder / "r.json")], capsys)
    assert out.startswith("grows  ") and "miss 0:" in out


@pytest.mark.parametrize("argv", [["cache", "why", "grows"], ["cache"], ["report"]])
def test_a_missing_default_report_says_how_to_write_it(argv, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no sot-report.json here (`sot run SCRIPT` writes it" in err


def test_a_missing_named_report_is_named(tmp_path, capsys):
    assert main(["cache", "why", str(tmp_path / "gone.json"), "grows"]) == 2
    assert f"cannot read {tmp_path / 'gone.json'}" in capsys.readouterr().err


def test_three_arguments_are_refused(folder, capsys):
    assert main(["cache", "why", str(folder / "r.json"), "grows", "more"]) == 2
    assert "expected: sot cache why [OUT.json] [FUNCTION]" in capsys.readouterr().err


def test_help_says_both_take_the_same_arguments_in_either_order(capsys):
    assert main(["cache", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "sot cache [OUT.json] [FUNCTION]" in out and "sot cache why [OUT.json] [FUNCTION]" in out
    assert "either order" in out and "sot-report.json" in out
