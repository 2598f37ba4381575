"""`sot report --format html` read back as a DOM: the index's file rows and totals, the file pages' marks
and the reasons written next to their lines, the recompile marks with the guard that failed, and the
compile timeline's order, against a script of two files whose report is known.

APP runs `scaled` with n = 1, 2, 3, 3 (three translations, two recompiles after misses on `n`), `noisy`
twice (a print breaks its graph: SOT-B003), `checked` twice (it raises: SOT-R001, run eagerly; its
decorator spans three lines), the generator `counting` twice (SOT-G001: generators run eagerly), a
function nested in `main` (its own nested `inner` and LIB's `halve` inlined into its graph) and
`double` from LIB (the second file) twice.
"""
import html
import json
import os
import subprocess
import sys
import textwrap
from html.parser import HTMLParser
from pathlib import Path

import pytest

import sot
from sot.tools.cli import main
from sot.tools.formats import readable, title
from sot.tools.htmlreport import function_headers, write_html
from sot.tools.report import Cache, Entry, FunctionReport, Graph, MissedGuard, Report, load

LIB = textwrap.dedent('''\
    import runtime as paddle
    import sot


    @sot.to_static
    def double(x):
        return paddle.tanh(x) * 2


    def halve(x):
        return x / 2
''')

APP = textwrap.dedent('''\
    import sys

    import numpy as np

    import runtime as paddle
    import sot
    from mathlib import double, halve


    @sot.to_static
    def scaled(x, n):
        return x * n if n > 0 else x


    @sot.to_static
    def noisy(x):
        y = paddle.tanh(x) * 2
        print("mid", y.shape, file=sys.stdout)
        return y + 1


    @sot.to_static(
        cache_size_limit=4,
    )
    def checked(x, ok):
        if not ok:
            raise ValueError("not ok")
        return x - 1


    @sot.to_static
    def counting(x):
        yield x + 1


    def main():
        @sot.to_static
        def nested(x):
            def inner(y):
                return halve(y) * 3

            return inner(x) - 2

        x = paddle.to_tensor(np.ones((2, 3), "float32"))
        for n in (1, 2, 3, 3):
            scaled(x, n)
        for _ in range(2):
            noisy(x)
            double(x)
            nested(x)
            list(counting(x))
            try:
                checked(x, False)
            except ValueError:
                pass


    main()
''')


def line_of(text, source=APP):
    """The 1-based number of the line of `source` that is `text` once stripped."""
    return [s.strip() for s in source.splitlines()].index(text) + 1


CAPTURED = [line_of(s) for s in ("def scaled(x, n):", "return x * n if n > 0 else x", "def noisy(x):",
                                 "y = paddle.tanh(x) * 2", "return y + 1", "def nested(x):", "def inner(y):",
                                 "return inner(x) - 2")]
INLINED = [line_of("return halve(y) * 3")]  # in no translated code object: its ops ran in nested's graph
CAPTURED += [line_of("def scaled(x, n):") - 1, line_of("def noisy(x):") - 1, line_of("def nested(x):") - 1]
EAGER = [line_of(s) for s in ("@sot.to_static(", "cache_size_limit=4,", ")", "def checked(x, ok):", "if not ok:",
                              "return x - 1", "def counting(x):", "yield x + 1")]
BREAKS = {line_of('print("mid", y.shape, file=sys.stdout)'): "SOT-B003",
          line_of('raise ValueError("not ok")'): "SOT-R001",
          line_of("def counting(x):") - 1: "SOT-G001"}  # a generator's fallback is at its first line


class Node:
    """An element of the parsed page: tag, attributes, children, text."""

    def __init__(self, tag, attrs):
        self.tag, self.attrs, self.children, self.parts = tag, dict(attrs), [], []

    @property
    def text(self):
        return "".join(p if isinstance(p, str) else p.text for p in self.parts)

    def all(self, tag=None, **attrs):
        """Descendants with `tag` whose attributes have the given values (`cls` for class, one word of it)."""
        found = []
        for child in self.children:
            ok = tag in (None, child.tag)
            for k, v in attrs.items():
                if k == "cls":
                    ok = ok and v in (child.attrs.get("class") or "").split()
                else:
                    ok = ok and child.attrs.get(k) == v
            if ok:
                found.append(child)
            found += child.all(tag, **attrs)
        return found

    def one(self, tag=None, **attrs):
        (node,) = self.all(tag, **attrs)
        return node


class _Dom(HTMLParser):
    VOID = {"meta", "br", "img", "input", "link", "hr"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", [])
        self.stack = [self.root]

    def handle_starttag(self, tag, attrs):
        node = Node(tag, attrs)
        self.stack[-1].children.append(node)
        self.stack[-1].parts.append(node)
        if tag not in self.VOID:
            self.stack.append(node)

    def handle_endtag(self, tag):
        assert self.stack[-1].tag == tag, f"</{tag}> closes <{self.stack[-1].tag}>: the page is not well formed"
        self.stack.pop()

    def handle_data(self, data):
        self.stack[-1].parts.append(data)


def parse(text):
    """The parsed page `text`; every element it opens is closed in order."""
    parser = _Dom()
    parser.feed(text)
    parser.close()
    assert parser.stack == [parser.root], "unclosed elements"
    return parser.root


def dom(path):
    """The parsed page at `path`."""
    return parse(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """(html folder, report, app path, lib path) of one `sot run` of APP."""
    folder = tmp_path_factory.mktemp("site")
    (folder / "mathlib.py").write_text(LIB)
    app = folder / "app.py"
    app.write_text(APP)
    out = folder / "report.json"
    src = Path(sot.__file__).parent.parent  # the sot under test, whatever the working directory
    done = subprocess.run([sys.executable, "-m", "sot.tools.cli", "run", "--report", str(out), str(app)],
                          capture_output=True, text=True, timeout=120, cwd=folder,
                          env={**os.environ, "SOT_DISABLE": "0", "SOT_MIN_GRAPH_SIZE": "1",
                               "PYTHONPATH": os.pathsep.join([str(src), os.environ.get("PYTHONPATH", "")])})
    assert done.returncode == 0, done.stderr
    assert main(["report", str(out), "--format", "html", "-o", str(folder / "html")]) == 0
    return folder / "html", load(out), app, folder / "mathlib.py"


def page_of(html_dir, path):
    """The file page of source `path`, found through the index's link."""
    index = dom(html_dir / "index.html")
    (link,) = [a for a in index.one("table", id="files").all("a") if a.text == path.name]
    return html_dir / link.attrs["href"]


def first_column(table):
    """The first cell's text of each body row of `table`."""
    return [tr.all("td")[0].text for tr in table.one("tbody").all("tr")]


def source_rows(page):
    """Line number -> its <tr> of a file page."""
    return {int(tr.attrs["id"][1:]): tr for tr in page.all("tr") if tr.attrs.get("id", "").startswith("L")}


def test_the_index_has_one_row_per_source_file_with_its_line_counts(site):
    html_dir, report, app, lib = site
    index = dom(html_dir / "index.html")
    rows = index.one("table", id="files").one("tbody").all("tr")
    assert first_column(index.one("table", id="files")) == ["app.py", "mathlib.py"]  # by path
    cells = {tr.all("td")[0].text: [td.text for td in tr.all("td")[1:6]] for tr in rows}
    captured = CAPTURED + INLINED
    n = len(captured) + len(EAGER) + len(BREAKS)
    assert cells == {"app.py": ["6", str(len(captured)), str(len(EAGER)), str(len(BREAKS)),
                                f"{len(captured) / n:.0%}"],
                     "mathlib.py": ["1", "4", "0", "0", "100%"]}  # double's 3 lines, halve's body inlined
    bar = {span.attrs["class"]: span.attrs["style"] for span in rows[0].one("span", cls="bar").all("span")}
    assert bar == {cls: f"width:{len(lines) / n * 100:.0f}%"
                   for cls, lines in (("captured", captured), ("eager", EAGER), ("break", BREAKS))}


def test_the_index_summary_shows_the_report_totals(site):
    html_dir, report, _, _ = site
    index = dom(html_dir / "index.html")
    shown = {card.attrs["data-total"]: card.one("b").text for card in index.all("div", cls="card")}
    t = report.totals
    assert shown == {"functions": str(t["functions"]), "graphs": str(t["graphs"]), "breaks": str(t["breaks"]),
                     "fallbacks": str(t["fallbacks"]), "recompiles": str(t["recompiles"]),
                     "captured": f"{t['captured_ratio']:.0%}"}
    assert (t["functions"], t["recompiles"], t["fallbacks"]) == (7, 2, 2)


def test_the_function_table_links_each_function_to_its_timeline(site):
    html_dir, report, _, _ = site
    index = dom(html_dir / "index.html")
    rows = index.one("table", id="functions").one("tbody").all("tr")
    assert len(rows) == sum(len(node.functions()) for node in report.tree())
    for tr in rows:
        href = tr.all("a")[0].attrs["href"]
        page, _, anchor = href.partition("#")
        assert (html_dir / page).exists() and dom(html_dir / page).all(id=anchor), href
    (resume,) = [tr for tr in rows if "child" in (tr.attrs.get("class") or "")]
    (made,) = [f for f in report.functions if f.kind == "resume"]
    assert [a.text for a in resume.all("a")] == [f"\u21b3 {title(made)}", "app.py:18"]


def test_lines_are_marked_with_the_reason_next_to_them(site):
    html_dir, _, app, _ = site
    rows = source_rows(dom(page_of(html_dir, app)))
    assert len(rows) == len(APP.splitlines())
    marked = {n: tr.attrs["class"].split()[0] for n, tr in rows.items() if tr.attrs.get("class")}
    assert marked == {**dict.fromkeys(CAPTURED + INLINED, "captured"), **dict.fromkeys(EAGER, "eager"),
                      **dict.fromkeys(BREAKS, "break")}
    for line, code in BREAKS.items():
        assert f"[{code}]" in rows[line].one("td", cls="note").text
    assert "SOT-R001" not in rows[line_of("if not ok:")].one("td", cls="note").text
    assert rows[line_of("def main():")].one("td", cls="note").text == ""
    for line in INLINED:
        assert rows[line].one("td", cls="note").text == "inlined: ran inside the graph of main.<locals>.nested"


def test_a_file_whose_code_only_ran_inlined_has_its_lines_marked(site):
    html_dir, _, _, lib = site
    rows = source_rows(dom(page_of(html_dir, lib)))
    marked = {n: tr.attrs["class"] for n, tr in rows.items() if tr.attrs.get("class")}
    assert marked == dict.fromkeys([5, 6, 7, line_of("return x / 2", LIB)], "captured")
    assert "main.<locals>.nested" in rows[line_of("return x / 2", LIB)].text


def test_library_files_inlined_into_a_graph_get_no_page(tmp_path):
    import runtime

    user = tmp_path / "user.py"
    user.write_text("def f(x):\n    return x\n")
    graph = Graph(0, 2, 1, "StatementIR: ...", op_lines=[f"{user}:2", f"{runtime.__file__}:1"])
    f = FunctionReport("g", str(tmp_path / "main.py"), 1, [1, 2], None, 1, 0.0, [graph], [], [],
                       Cache(8, False, [Entry(0, "graph", 0, [])]))
    index = dom(write_html(Report([f]), tmp_path / "html"))
    assert first_column(index.one("table", id="files")) == ["main.py", "user.py"]


def test_a_recompiled_function_shows_the_guard_that_failed_on_its_def_line(site):
    html_dir, _, app, _ = site
    rows = source_rows(dom(page_of(html_dir, app)))
    recompiled = {n for n, tr in rows.items() if "recompiled" in (tr.attrs.get("class") or "").split()}
    assert recompiled == {line_of("def scaled(x, n):")}
    notes = [s.text for s in rows[line_of("def scaled(x, n):")].all("span", cls="recompiled")]
    assert notes == ["\u21bb recompiled (entry 1): `n == 1` failed, got 2 (int)",
                     "\u21bb recompiled (entry 2): `n == 2` failed, got 3 (int)"]


def test_the_timeline_lists_translations_in_order_with_the_miss_after_each(site):
    html_dir, report, app, _ = site
    rows = source_rows(dom(page_of(html_dir, app)))
    (link,) = rows[line_of("def scaled(x, n):")].all("a")
    page, _, anchor = link.attrs["href"].partition("#")
    timeline = dom(html_dir / page)
    assert timeline.one(id=anchor).text == "scaled"
    entries = timeline.all("div", cls="entry")
    assert [e.one("h3").text for e in entries] == [
        "translation 1: entry 0, graph, 0 hit(s)", "translation 2: entry 1, graph, 0 hit(s)",
        "translation 3: entry 2, graph, 1 hit(s)"]
    misses = [[li.text for li in e.all("li")] for e in entries]
    guards = [e.one("ol", cls="guards").all("li") for e in entries]
    assert [any("n ==" in g.text for g in gs) for gs in guards] == [True, True, True]
    assert misses[0][-1] == "entry 0: n == 1 failed, got 2 (int)"
    assert misses[1][-2:] == ["entry 1: n == 2 failed, got 3 (int)",
                              "entry 0: n == 1 failed, got 3 (int)"]
    assert "last translation" in entries[2].text
    (scaled,) = [f for f in report.functions if f.qualname == "scaled"]
    assert [e.one("pre", cls="sir").text for e in entries] == [g.sir for g in scaled.graphs]


def test_the_timeline_of_a_function_with_a_break_holds_its_resume_function(site):
    html_dir, report, app, _ = site
    (made,) = [f for f in report.functions if f.kind == "resume"]
    rows = source_rows(dom(page_of(html_dir, app)))
    (link,) = rows[line_of("def noisy(x):")].all("a")
    timeline = dom(html_dir / link.attrs["href"].partition("#")[0])
    assert [h.text for h in timeline.all("h2")] == ["noisy", title(made)]
    assert "after the break at" in title(made)
    (brk,) = timeline.all("li", cls="break")
    assert "[SOT-B003]" in brk.text and "line 18" in brk.text
    def_notes, break_notes = ([s.text for s in rows[n].one("td", cls="note").all("span") if not s.all("a")]
                              for n in (line_of("def noisy(x):"), line_of('print("mid", y.shape, file=sys.stdout)')))
    assert def_notes == ["noisy: captured (1 graph(s), captured 67%)"]
    # the resume function's note where it resumes, after the break's reason, not on the def line
    assert break_notes[0].startswith("break [SOT-B003] UNSPS: ") and not break_notes[0].endswith("x)")
    assert break_notes[1:] == [f"{title(made)}: captured (1 graph(s), captured 100%)"]


def test_decorator_and_def_lines_take_the_function_mark():
    source = textwrap.dedent('''\
        @a
        @b(
            1,
        )
        def f(
            x,
        ):
            """doc"""
            return x

        def g(x): return x
    ''')
    assert function_headers(source) == {1: (range(1, 8), 5), 11: (range(11, 12), 11)}
    assert function_headers("def (") == {}


def test_text_from_the_report_is_escaped(tmp_path, site):
    _, report, _, _ = site
    data = report.to_dict()
    f = next(f for f in data["functions"] if f["qualname"] == "checked")
    f["fallbacks"][0]["reason"] = "<script>alert(1)</script> & more"
    path = tmp_path / "r.json"
    path.write_text(json.dumps(data))
    assert main(["report", str(path), "--format", "html", "-o", str(tmp_path / "html")]) == 0
    for page in (tmp_path / "html").glob("*.html"):
        text = page.read_text()
        assert "<script>alert" not in text and "http" not in text and "<link" not in text
        dom(page)
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; more" in (tmp_path / "html" / "file0.html").read_text()


def test_a_report_of_nothing_writes_an_index_with_no_rows(tmp_path):
    index = dom(write_html(Report([]), tmp_path))
    assert index.one("table", id="files").one("tbody").all("tr") == []


def test_the_timeline_shows_bytecode_and_program_of_a_detailed_report(tmp_path):
    import numpy as np

    import runtime as paddle
    from sot_helpers import jit_of

    def affine_for_timeline(x):
        return paddle.tanh(x) * 2 + 1

    x = paddle.to_tensor(np.ones((2, 3), "float32"))
    jit = jit_of(affine_for_timeline)
    np.testing.assert_allclose(jit(x).numpy(), affine_for_timeline(x).numpy())
    (f,) = [f for f in sot.report(details=True).functions if f.qualname.endswith("affine_for_timeline")]
    (graph,) = f.graphs
    assert graph.bytecode and graph.program
    write_html(Report([f]), tmp_path)
    timeline = dom(tmp_path / "timeline0.html")
    shown = {d.one("summary").text: d.one("pre").text for d in timeline.all("details") if d.all("pre")}
    assert shown == {"SIR": graph.sir, "generated bytecode": graph.bytecode, "Program": graph.program}


def test_no_page_shows_the_names_generated_code_gives_a_resume_function(tmp_path):
    src = tmp_path / "m.py"
    src.write_text("def f(x):\n    y = x * 2\n    print(y)\n    return y + x.sum()\n")
    guard = "f_locals['__sot_s0_1'] is a tensor of shape [2], dtype float32"
    cache = Cache(8, False, [Entry(1, "graph", 0, [guard]), Entry(0, "graph", 0, [guard])],
                  [[MissedGuard(0, guard, guard, "tensor of shape [3]")]])
    parent = FunctionReport("f", str(src), 1, [1, 2, 3, 4], None, 1, 0.0, [], [], [], Cache(8, False), id=0)
    resume = FunctionReport("f", str(src), 1, [1, 2, 3, 4], "f", 2, 0.0, [], [], [], cache, [guard + " dim 0"],
                            kind="resume", resumes_at=3, break_at=f"{src}:3", id=1, parent=0)
    write_html(Report([parent, resume]), tmp_path / "html")
    pages = {p.name: p.read_text() for p in (tmp_path / "html").glob("*.html")}
    assert not [name for name, text in pages.items() if "__sot_" in text]
    shown = readable(resume, guard)
    assert shown != guard and html.escape(shown) in pages["timeline0.html"]
