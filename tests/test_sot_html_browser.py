"""The HTML report rendered by headless Chromium: the DOM after the index's sort script ran, sorted from
the address (`#sort=TABLE:[-]COLUMN`) the way a header click leaves it. Skipped where `chromium` (Debian
package `chromium`) is not installed.
"""
import shutil
import subprocess

import pytest

from test_sot_html import first_column, parse, site  # noqa: F401  (site is a fixture: the report of a known script)

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="needs headless Chromium (/usr/bin/chromium, "
                                                          "Debian package chromium) to render the page")


def rendered(page, fragment, profile):
    """The DOM of `page#fragment` after its scripts ran, parsed."""
    done = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                           "--disable-component-update", "--disable-sync", "--no-first-run",
                           f"--user-data-dir={profile}", "--dump-dom", f"{page.as_uri()}{fragment}"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return parse(done.stdout)


@pytest.mark.parametrize("fragment, order, sorted_by", [
    ("", ["app.py", "mathlib.py"], None),                        # as written: by path
    ("#sort=files:-pct", ["mathlib.py", "app.py"], ("pct", "descending")),
    ("#sort=files:functions", ["mathlib.py", "app.py"], ("functions", "ascending")),
    ("#sort=files:-functions", ["app.py", "mathlib.py"], ("functions", "descending")),
    ("#sort=files:nonsense", ["app.py", "mathlib.py"], None),     # an unknown column leaves the table
])
def test_the_files_table_sorts_from_the_address(site, tmp_path, fragment, order, sorted_by):  # noqa: F811
    html_dir = site[0]
    page = rendered(html_dir / "index.html", fragment, tmp_path / "profile")
    files = page.one("table", id="files")
    assert first_column(files) == order
    marked = [(th.attrs["data-sort"], th.attrs["aria-sort"]) for th in files.all("th") if "aria-sort" in th.attrs]
    assert marked == ([sorted_by] if sorted_by else [])


def test_the_functions_table_sorts_numerically(site, tmp_path):  # noqa: F811
    html_dir, report = site[:2]
    page = rendered(html_dir / "index.html", "#sort=functions:-recompiles", tmp_path / "profile")
    rows = page.one("table", id="functions").one("tbody").all("tr")
    recompiles = [int(tr.all("td")[5].text) for tr in rows]
    assert recompiles == sorted((f.recompiles for f in report.functions), reverse=True)
    assert rows[0].all("td")[0].text == "scaled"


def test_a_file_page_renders_its_source_rows(site, tmp_path):  # noqa: F811
    html_dir, _, app, _ = site
    page = rendered(html_dir / "file0.html", "", tmp_path / "profile")
    rows = [tr for tr in page.all("tr") if tr.attrs.get("id", "").startswith("L")]
    assert len(rows) == len(app.read_text().splitlines())
    assert any("[SOT-B003]" in tr.text for tr in rows if "break" in tr.attrs.get("class", ""))
