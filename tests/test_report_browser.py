"""The HTML report in a real browser: Debian's chromium, headless, driven by Playwright.

`make test` installs chromium first (the Makefile's `browser` target) where it runs as root.
Without chromium this test is skipped, saying why, except under .ci/run (which sets
TRANSPILE_REQUIRE_BROWSER=1): there it fails, so that CI never passes without it.
"""
import os
import shutil
import struct
import zlib

import pytest

from transpile import convert_paths
from transpile.report import group_unconverted, render_report

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]

FILES = {
    "model.py": "import torch\nimport torch.nn as nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n"
                "        super().__init__()\n        self.fc = nn.Linear(4, 2)\n\n    def forward(self, x):\n"
                "        return self.fc(torch.cat([x, x], 1))\n",
    # the unsupported calls far down, so that following a link has to scroll
    "ops.py": "import torch\n" + "".join(f"\n\ndef helper{i}(x):\n    return x + {i}\n" for i in range(20))
              + "\n\ndef tricky(x):\n    return x, '</script>&amp;<!-- \"q\" \\u003c'\n"  # folded: built by the script
              + "".join(f"\n\ndef helper{i}(x):\n    return x + {i}\n" for i in range(21, 40))
              + "\n\ndef g(x):\n    y = torch.foo_bar(x)\n    return torch.foo_bar(torch.cat([y, y]))\n",
    "broken.py": "import torch\ndef h(:\n    return 1\n",
    "plain.py": "".join(f"x{i} = {i}\n" for i in range(30)),  # unchanged: collapsed and folded
}


def _chromium() -> str:
    path = shutil.which("chromium") or ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)
    if path is None:
        reason = ("chromium is not installed: `make browser` as root (or `apt-get install -y chromium "
                  "chromium-driver`) installs it; the report's browser test needs it")
        if os.environ.get("TRANSPILE_REQUIRE_BROWSER") == "1":
            pytest.fail(reason + " (TRANSPILE_REQUIRE_BROWSER=1: required here)", pytrace=False)
        pytest.skip(reason)
    return path


@pytest.fixture(scope="module")
def browser():
    executable = _chromium()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("the playwright package is missing: install the dev extra (pip install -e '.[dev]')", pytrace=False)
    with sync_playwright() as pw:
        # launch() gives the browser a fresh temporary profile (user data dir) of its own
        browser = pw.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def rendered(tmp_path):
    root = tmp_path / "tree"
    root.mkdir()
    for name, text in FILES.items():
        (root / name).write_text(text)
    report = convert_paths([root], write=False, cache=False, jobs=1)
    page = tmp_path / "report.html"
    page.write_text(render_report(report, {str(f.source): f.source.read_text() for f in report.files}))
    return report, page


def _png_pixels(data: bytes) -> tuple[int, int, set[bytes]]:
    """Width, height and the distinct pixels of an 8-bit RGB(A) PNG (what chromium writes)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks, header = 8, [], None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            chunks.append(body)
        pos += 12 + length
    width, height, depth, color, _, _, interlace = header
    assert depth == 8 and color in (2, 6) and interlace == 0, header
    channels = 3 if color == 2 else 4
    raw, stride = zlib.decompress(b"".join(chunks)), width * channels
    previous, seen = bytearray(stride), set()
    for row in range(height):
        start = row * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):  # undo the row filter
            left = line[i - channels] if i >= channels else 0
            up, corner = previous[i], previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 255
        seen.update(bytes(line[i:i + 3]) for i in range(0, stride, channels))
        previous = line
    return width, height, seen


def test_report_in_chromium(browser, rendered, tmp_path):
    report, path = rendered
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    problems, requests = [], []
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("requestfailed", lambda r: problems.append(f"request failed: {r.url}"))
    page.on("request", lambda r: requests.append(r.url))
    page.goto(path.as_uri())
    page.wait_for_load_state("load")

    # the summary is the run's
    for status in ("converted", "unchanged", "failed", "copied"):
        assert page.inner_text(f"#summary-card [data-count={status}]") == str(report.count(status))
    assert page.inner_text("#conversion-rate strong") == f"{report.conversion_rate:.1%}"

    # one section per file, each diagnostic listed with a link whose target exists
    paths = page.eval_on_selector_all("section.file", "els => els.map(e => e.dataset.path)")
    assert paths == [str(f.source) for f in report.files]
    hrefs = page.eval_on_selector_all("a.diag-link", "els => els.map(e => e.getAttribute('href'))")
    assert len(hrefs) == len(report.diagnostics)
    assert page.evaluate("hs => hs.filter(h => !document.getElementById(h.slice(1)))", hrefs) == []

    # the index lists every file; a status box hides that status's files
    assert page.locator("table.index tr[data-status]").count() == len(report.files)
    plain_section = page.locator("section.file[data-path$='plain.py']")
    page.locator("input.status-filter[value=unchanged]").uncheck()
    assert not plain_section.is_visible() and page.locator("section.file[data-status=converted]").first.is_visible()
    page.locator("input.status-filter[value=unchanged]").check()
    assert plain_section.is_visible()

    # the unsupported API, grouped, with its count across the run
    expected = {g.name: g.count for g in group_unconverted(report)}
    assert expected.get("torch.foo_bar") == 2
    shown = page.eval_on_selector_all(
        "tr.api-group", "rows => rows.map(r => [r.dataset.api, r.querySelector('.api-count').textContent])")
    assert {name: int(count) for name, count in shown} == expected

    # following a diagnostic's link brings its line into view, targeted and badged
    far = next(d for d in report.diagnostics if d.filename.endswith("ops.py") and d.code == "MS201")
    assert far.line > 100
    link = page.locator("section.file[data-path$='ops.py'] a.diag-link", has_text=f"line {far.line}:").first
    assert page.evaluate("window.scrollY") == 0
    link.click()
    target = link.get_attribute("href")
    page.wait_for_function("h => location.hash === h", arg=target)
    line = page.locator(target)
    assert line.evaluate("e => { const r = e.getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight }")
    assert line.evaluate("e => e.matches(':target') && e.classList.contains('targeted')")
    assert "MS201" in line.locator(".badge").first.inner_text()
    assert page.evaluate("window.scrollY") > 0

    # a collapsed diff (the file that failed) opens when a link points into it
    failed = page.locator("section.file[data-status=failed] a.diag-link").first
    assert not page.locator("section.file[data-status=failed] details.diff").evaluate("d => d.open")
    failed.click()
    assert page.locator("section.file[data-status=failed] details.diff").evaluate("d => d.open")

    # the helpers no diagnostic points at are folded away until asked for
    section = page.locator("section.file[data-path$='ops.py']")
    middle = section.locator(f"#{section.get_attribute('id')}-L80")
    assert not middle.is_visible()
    section.locator("button.unfold").first.click()
    assert middle.is_visible() and not section.locator("button.unfold").first.is_visible()
    lines = FILES["ops.py"].splitlines()
    assert middle.locator("td.code.left").inner_text() == lines[79]
    tricky = lines.index("def tricky(x):") + 2  # the 1-based number of the line after it
    assert section.locator(f"#{section.get_attribute('id')}-L{tricky} td.code.right").inner_text() == lines[tricky - 1]

    # a link to a line of a collapsed, folded file opens the file and builds the line's row
    plain = page.locator("section.file[data-path$='plain.py']")
    assert plain.get_attribute("data-status") == "unchanged"
    assert not plain.locator("details.diff").evaluate("d => d.open")
    line_id = f"{plain.get_attribute('id')}-L20"
    page.evaluate("id => { location.hash = '#' + id }", line_id)
    page.wait_for_function("id => document.getElementById(id) !== null", arg=line_id)
    assert page.locator(f"#{line_id}").is_visible()
    # the row's cells are filled after the row is inserted: wait for the text (a loaded machine
    # read it empty in between), then check it
    page.wait_for_function(
        "id => { const c = document.querySelector('#' + id + ' td.code.right'); return c && c.innerText !== '' }",
        arg=line_id)
    assert page.locator(f"#{line_id} td.code.right").inner_text() == "x19 = 19"

    shot = tmp_path / "report.png"
    page.screenshot(path=str(shot), full_page=True)
    width, height, colours = _png_pixels(shot.read_bytes())
    assert shot.stat().st_size > 20_000 and width >= 1280 and height > 800
    assert len(colours) > 50  # text, code, red and green rows: not a blank page

    assert problems == []
    assert all(url.startswith(("file:", "data:")) for url in requests), requests
    page.close()


def test_report_layout_at_1400_px(browser, tmp_path):
    """The code columns of a side-by-side diff share the width (an 80-character line fits
    without wrapping at 1400 px), also when the table's first row is a folded run's one
    cell, and the unconverted APIs' "where" column stays inside the page on a large tree."""
    root = tmp_path / "tree"
    root.mkdir()
    # a long docstring the conversion keeps above its imports: the table's first row is a fold's
    head = '"""A module.\n\n' + "".join(f"Line {i} of its documentation.\n" for i in range(40)) + '"""\n'
    deep = root / "a_package_with_a_long_name" / "its_subpackage_with_a_longer_name" / "and_modules_further_down"
    deep.mkdir(parents=True)
    (root / "top.py").write_text("import torch\n")  # the paths shown are relative to the tree's top
    for n in range(15):
        name = f"a_rather_long_module_name_of_a_large_tree_number_{n:02d}.py"
        (deep / name).write_text(head + "import torch\n\ny = torch.foo_bar(1)\nz = torch.zeros(2)\n")
    report = convert_paths([root], write=False, cache=False, jobs=1)
    path = tmp_path / "report.html"
    path.write_text(render_report(report, {str(f.source): f.source.read_text() for f in report.files}))
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    widths = page.eval_on_selector_all(
        "details.diff[open] table.sbs", "ts => ts.map(t => [...t.querySelectorAll('td.code')]"
        ".filter(c => c.offsetParent !== null).map(c => c.getBoundingClientRect().width))")
    shown = [w for table in widths for w in table]
    assert shown and min(shown) > 560, widths  # 80 columns of 12.5px monospace: about 600 px
    table, card = page.locator("#unconverted-apis").evaluate(
        "t => [t.getBoundingClientRect().right, t.parentElement.getBoundingClientRect().right]")
    assert table <= card + 1, (table, card)
    assert page.evaluate("document.documentElement.scrollWidth") <= 1400
