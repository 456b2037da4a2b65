"""Every chapter in a real JupyterLab, offline: opened, then Run All, then every control moved.

Starts JupyterLab from the project's environment on a copy of the book's notebooks and drives
it with Playwright and Debian's Chromium (never a downloaded browser). Per chapter:

- opened from disk, before it runs (JupyterLab treats it as untrusted): the Colab install cell
  is collapsed, MyST markdown is rendered by jupyterlab-myst (no raw ``{role}`` text), every
  chart is drawn from its saved output, every explorer shows its saved snapshot, and the prose
  shows its numbers: the visible text of the rendered markdown holds no glued name, and every
  number it quotes is the saved glue output formatted as the book formats it;
- Run All: every cell runs, no error output, every chart is drawn again, the prose's numbers are
  evaluated again in the kernel and read the same (no glued name; each number that nbval checks
  equals the saved one), every explorer is a live widget, and moving each of its controls
  changes its panel;
- throughout: no request leaves localhost, no page error, no console error.

`make live` runs it in a network namespace with only loopback where it can (root and iproute2:
``DWLIB_LIVE_NETNS=1``): then the server and the kernels are offline too, and
:func:`test_no_network_beyond_loopback` proves it. Elsewhere that test is skipped and only the
page's requests are watched.

Needs Chromium (``CHROMIUM``, default /usr/bin/chromium); `make live` runs it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlparse

import pytest
from conftest import LOCAL_HOSTS  # tests/conftest.py, which also holds the `browser` fixture
from myst_nb.core.variables import format_plain_text  # how the book formats a glued value
from playwright.sync_api import expect

from dwlib.book import prose

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted(p.name for p in (ROOT / "book").glob("*.ipynb"))
TOKEN = "dwbook-live-test"
RUN_ALL_TIMEOUT_S = 600


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """A JupyterLab server on a copy of the notebooks; yields its base URL."""
    work = tmp_path_factory.mktemp("live")
    notebooks, config = work / "book", work / "config"
    notebooks.mkdir()
    for name in NOTEBOOKS:
        shutil.copy(ROOT / "book" / name, notebooks / name)
    # Settings for this server only: render every cell (no windowing, so that every output is
    # in the page), and no "Jupyter news" announcement (it would ask the network).
    settings = config / "lab" / "user-settings"
    (settings / "@jupyterlab" / "notebook-extension").mkdir(parents=True)
    (settings / "@jupyterlab" / "notebook-extension" / "tracker.jupyterlab-settings").write_text(
        json.dumps({"windowingMode": "none"}))
    (config / "labconfig").mkdir()
    (config / "labconfig" / "page_config.json").write_text(json.dumps(
        {"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}}))
    port = _free_port()
    # Its own data directory too: no notebook-signature database, so the copies open untrusted
    # even where someone has run `jupyter trust` on the book.
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(config), JUPYTER_RUNTIME_DIR=str(work / "runtime"),
               JUPYTER_DATA_DIR=str(work / "data"), JUPYTER_PLATFORM_DIRS="1")
    cmd = [str(Path(sys.executable).with_name("jupyter")), "lab", "--no-browser",
           "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", f"--IdentityProvider.token={TOKEN}",
           f"--ServerApp.root_dir={notebooks}", "--LabApp.extension_manager=readonly",
           "--LabApp.expose_app_in_browser=True", f"--LabApp.user_settings_dir={settings}",
           f"--LabApp.workspaces_dir={work / 'workspaces'}", "--ServerApp.allow_root=True"]
    log = open(work / "server.log", "w")
    server = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=notebooks)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(f"{url}/api/status?token={TOKEN}", timeout=2)
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"JupyterLab did not start: {(work / 'server.log').read_text()[-2000:]}")
                time.sleep(0.5)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


def test_no_network_beyond_loopback():
    """Under `make live` as root, nothing in this process tree can reach past localhost."""
    if os.environ.get("DWLIB_LIVE_NETNS") != "1":
        pytest.skip("not in a network namespace of its own (needs root and iproute2): only the page's requests are checked")
    with open("/proc/net/dev") as f:
        interfaces = {line.split(":")[0].strip() for line in f.readlines()[2:]}
    assert interfaces == {"lo"}, interfaces
    with pytest.raises(OSError):  # no route: fails at once, no timeout needed
        socket.create_connection(("192.0.2.1", 80), timeout=5)  # TEST-NET-1, never a real host


# jupyterlab-myst renders one notebook at a time, and knows no figure made by a code cell's
# metadata: a link to an equation displayed in another chapter, or to a figure (the book's
# {ref} links by name, resolved by the book's build), is reported on the console as a target not
# found, and shown as its text. That message, for those targets only, is not a problem, provided
# the text shown is the link's own: each such link must show its title ("(7)", "the threshold
# map"), never its target's name ("eq-7", "fig-threshold-models").
REF = re.compile(r"\{ref\}`([^`<]*?)\s*<((?:eq|fig)-[\w-]+)>`")
OTHER_CHAPTER = re.compile(r"(Cross reference target was not found: (eq-\d+|fig-[\w-]+)\s*)+$")


def _watch(page, problems: list) -> None:
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}")
            if m.type in ("error", "warning") and not OTHER_CHAPTER.match(m.text) else None)

    def on_request(req):
        u = urlparse(req.url)
        if u.scheme not in ("data", "blob", "about") and u.hostname not in LOCAL_HOSTS:
            problems.append(f"request leaves localhost: {req.url}")

    page.on("request", on_request)
    page.on("websocket", lambda ws: on_request(ws))


# The notebook panel's model, read in the page through the app JupyterLab exposes. For a
# markdown cell, what a reader sees: the visible text of its rendered input (the widget
# jupyterlab-myst renders into the input area, not the hidden editor beside it), and the text of
# each inline expression it shows (jupyterlab-myst writes a text/plain result as a bare <span>;
# the bare spans inside a formula or a code block are not counted).
_CELLS_JS = """() => {
  const nb = window.jupyterapp.shell.currentWidget.content;
  return nb.widgets.map(cell => {
    const shown = cell.model.type === 'markdown' && cell.rendered && cell.inputArea.renderedInput
      ? cell.inputArea.renderedInput.node : null;
    return {
      type: cell.model.type,
      count: cell.model.type === 'code' ? cell.model.executionCount : null,
      outputs: cell.model.type === 'code' ? cell.model.outputs.toJSON().map(o => ({
        type: o.output_type, mimes: Object.keys(o.data || {}), ename: o.ename || null,
        evalue: o.evalue || null})) : [],
      inputHidden: cell.inputHidden,
      trusted: cell.model.trusted,
      text: shown ? shown.innerText : null,
      values: shown ? [...shown.querySelectorAll('span')].filter(s => !s.attributes.length
        && !s.children.length && !s.closest('.katex, math, pre, code')).map(s => s.innerText) : null,
    };
  });
}"""

# Per chart, the items of its data marks (Vega's role-mark groups: not axes, legends or titles).
_CHARTS_JS = """() => [...window.jupyterapp.shell.currentWidget.node.querySelectorAll('.jp-RenderedVegaLite')].map(c =>
  c.querySelectorAll('svg.marks g.role-mark > path, svg.marks g.role-mark > line,'
    + ' svg.marks g.role-mark > text, svg.marks g.role-mark > rect').length)"""
# What jupyterlab-myst writes as a bare <span>: an inline expression's result, and the text of a
# role it does not know (the book's {figref}).
BARE_SPAN = re.compile(r"\{(eval|figref)\}`([^`]*)`")
# A MyST role left as text: what a plain Markdown renderer shows of {glue:text}`x` ("{glue:text}x").
RAW_ROLE = re.compile(r"\{(glue(:\w+)?|cite(:\w+)?|eq|doc|ref|numref|math|sub|sup)\}")


def _open(page, lab: str, name: str):
    """Open ``name`` alone in a fresh workspace; return a locator for its notebook panel."""
    workspace = name.removesuffix(".ipynb").replace("_", "-")
    page.goto(f"{lab}/lab/workspaces/{workspace}/tree/{name}?reset&token={TOKEN}")
    page.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell.currentWidget"
                           " && window.jupyterapp.shell.currentWidget.context"
                           " && window.jupyterapp.shell.currentWidget.context.isReady", timeout=120_000)
    page.wait_for_function("() => window.jupyterapp.shell.currentWidget.sessionContext.session"
                           " && window.jupyterapp.shell.currentWidget.sessionContext.session.kernel"
                           " && window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.status"
                           " === 'idle'", timeout=120_000)
    return page.locator("#" + page.evaluate("() => window.jupyterapp.shell.currentWidget.id"))


def _expected(name: str) -> dict:
    """What the saved notebook holds: its chart and widget outputs, its glued names, and per
    markdown cell the texts its inline expressions must show, computed from the saved glue
    outputs as the book's ``{glue:text}`` formatted them (myst-nb's own formatter), with those
    glued by a cell nbval does not compare (a timing, say) apart."""
    nb = json.loads((ROOT / "book" / name).read_text())
    charts = widgets = 0
    for cell in nb["cells"]:
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if "application/vnd.jupyter.widget-view+json" in data:  # an explorer: JupyterLab draws the
                widgets += 1  # widget, not the chart the same output carries for the static book
            else:
                charts += "application/vnd.vegalite.v5+json" in data
    glued = prose.glue_outputs(nb)
    unchecked = {n for n, (i, _) in glued.items()
                 if {"nbval-ignore-output", "nbval-skip"} & set(nb["cells"][i]["metadata"].get("tags", []))}
    values, eq_refs = {}, {}
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "markdown":
            continue
        eq_refs[i] = REF.findall("".join(cell["source"]))
        values[i] = []
        for role, body in BARE_SPAN.findall("".join(cell["source"])):
            if role == "eval":
                name, spec = prose.parse(body) or (body, "")
                values[i].append((name, format_plain_text(glued[name][1], spec or "s") if name in glued else None))
            else:  # a role jupyterlab-myst does not know: it shows the role's text
                values[i].append((None, body))
    return {"charts": charts, "widgets": widgets, "names": sorted(glued), "unchecked": unchecked,
            "values": values, "eq_refs": eq_refs}


def _prose_problems(cells: list, expected: dict, when: str) -> list:
    """Where the visible prose of a chapter shows a glued name instead of its value, or a number
    other than the saved one (only those nbval checks, after Run All)."""
    names = re.compile(r"(?<![\w])(" + "|".join(map(re.escape, expected["names"])) + r")(?![\w])")
    found = []
    for i, cell in enumerate(cells):
        if cell["type"] != "markdown":
            continue
        if cell["text"] is None:
            found.append(f"cell {i}: not rendered")
            continue
        found += [f"cell {i}: the link to {target} shows {cell['text'][:160]!r}, not its title {title!r}"
                  for title, target in expected["eq_refs"].get(i, [])
                  if title not in cell["text"] or re.search(rf"\b{target}\b", cell["text"])]
        shown = [m.group(0) for m in names.finditer(cell["text"])] if expected["names"] else []
        if shown:
            found.append(f"cell {i} shows glued names {shown}: {cell['text'][:160]!r}")
        want = expected["values"].get(i, [])
        if len(cell["values"]) != len(want):
            found.append(f"cell {i}: {len(cell['values'])} numbers shown, {len(want)} quoted: {cell['values']}")
            continue
        found += [f"cell {i}: {name or 'a role'} shows {got!r}, the saved output gives {text!r}"
                  for (name, text), got in zip(want, cell["values"])
                  if got != text and not (when == "after Run All" and name in expected["unchecked"])]
    return [f"{when}: {p}" for p in found]


def _wait_charts(page, n: int) -> list:
    page.wait_for_function(f"() => ({_CHARTS_JS})().filter(k => k > 0).length >= {n}", timeout=60_000)
    return page.evaluate(_CHARTS_JS)


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_chapter_live(lab, browser, name):
    expected = _expected(name)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    problems: list = []
    _watch(page, problems)
    try:
        panel = _open(page, lab, name)
        # Before it runs (untrusted): Colab cell collapsed, MyST rendered with its numbers,
        # charts from saved outputs, snapshots.
        page.wait_for_function(f"() => ({_CELLS_JS})().every(c => c.type !== 'markdown' || c.text)",
                               timeout=60_000)
        cells = page.evaluate(_CELLS_JS)
        if not (cells[0]["type"] == "code" and cells[0]["inputHidden"]):
            problems.append("the Colab install cell (the first) is not collapsed")
        raw = [c["text"][:80] for c in cells if c["type"] == "markdown" and RAW_ROLE.search(c["text"])]
        assert not raw, f"MyST roles not rendered in JupyterLab: {raw}"
        problems += _prose_problems(cells, expected, "before Run All")
        if expected["charts"]:
            drawn = _wait_charts(page, expected["charts"])
            assert len(drawn) == expected["charts"] and all(drawn), f"charts before running: {drawn}"
        # every explorer shows its snapshot (untrusted)
        expect(panel.locator(".dw-explorer-snapshot")).to_have_count(expected["widgets"], timeout=60_000)

        # Run All, then wait until every code cell has run and the kernel is idle.
        started = time.monotonic()
        page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
        # A markdown cell with inline expressions is marked trusted once jupyterlab-myst has stored
        # the kernel's results for it.
        page.wait_for_function(f"() => ({_CELLS_JS})().every(c => c.type !== 'code' || c.count !== null)"
                               " && window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.status"
                               " === 'idle'", timeout=RUN_ALL_TIMEOUT_S * 1000, polling=500)
        evaluated = [i for i, v in expected["values"].items() if any(name for name, _ in v)]
        page.wait_for_function(f"() => {{ const c = ({_CELLS_JS})(); return {json.dumps(evaluated)}"
                               ".every(i => c[i].trusted && c[i].text); }", timeout=60_000, polling=500)
        print(f"{name}: Run All {time.monotonic() - started:.1f} s")
        cells = page.evaluate(_CELLS_JS)
        errors = [f"{o['ename']}: {o['evalue']}" for c in cells for o in c["outputs"] if o["type"] == "error"]
        assert not errors, f"error outputs after Run All: {errors}"
        problems += _prose_problems(cells, expected, "after Run All")
        if expected["charts"]:
            drawn = _wait_charts(page, expected["charts"])
            assert len(drawn) == expected["charts"] and all(drawn), f"charts after Run All: {drawn}"
        _move_every_control(page, panel, expected["widgets"])
        assert not problems, "\n".join(problems)
    finally:
        page.evaluate("() => window.jupyterapp && window.jupyterapp.commands.execute('kernelmenu:shutdown')"
                      ".catch(() => null)")
        page.close()


def _move_every_control(page, panel, n_widgets: int) -> None:
    """Each ipywidgets control in turn: one keyboard step up a slider (or another option of a
    dropdown) must change the panel, and one step back must change it again. Stepping back keeps the explorer near its saved values, so that
    each control is tried on its own (one control can make another moot, as a depth above the
    threshold does to Corollary 1's shallow depth). A step back need not restore the saved
    value exactly: a log slider snaps to its grid."""
    explorers = panel.locator(".jp-OutputArea-output .widget-vbox")
    expect(explorers).to_have_count(n_widgets, timeout=60_000)  # live widgets now, no snapshots
    expect(panel.locator(".dw-explorer-snapshot")).to_have_count(0)
    for i in range(n_widgets):
        box = explorers.nth(i)
        shown = box.locator(".widget-html-content").last
        handles, menus = box.locator(".noUi-handle"), box.locator(".widget-dropdown select")
        assert handles.count() + menus.count() >= 1, "an explorer without controls"

        def changes(act) -> None:
            before = shown.inner_html()
            act()
            page.wait_for_function("([el, old]) => el.innerHTML !== old",
                                   arg=[shown.element_handle(), before], timeout=30_000)

        for j in range(handles.count()):
            handles.nth(j).focus()
            changes(lambda: handles.nth(j).press("ArrowRight"))
            changes(lambda: handles.nth(j).press("ArrowLeft"))
        for j in range(menus.count()):
            menu = menus.nth(j)
            saved = menu.input_value()
            other = next(v for v in menu.locator("option").evaluate_all("os => os.map(o => o.value)") if v != saved)
            changes(lambda: menu.select_option(other))
            changes(lambda: menu.select_option(saved))
