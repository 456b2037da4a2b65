"""The book's foundation: command line, environment report, offline charts, widgets, glue."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import altair as alt
import pandas as pd
import pytest

from dwlib import book, env

from dwlib.viz import render as plots

from dwlib.viz import widgets
from dwlib.cli import main

ROOT = Path(__file__).resolve().parents[1]


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "dwlib", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)


def test_env_report_describes_this_machine():
    rep = env.report()
    import jax

    assert rep["backend"] == jax.default_backend()
    assert rep["device_count"] == len(jax.devices()) >= 1
    assert rep["versions"]["jax"] == jax.__version__
    text = env.format_report(rep)
    assert text.splitlines()[0].startswith("backend")
    assert f"jax {jax.__version__}" in text


def test_cli_env_json(capsys):
    assert main(["env", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {"backend", "device_count", "versions"} <= set(out)


def test_cli_bad_subcommand_is_one_line_and_exit_2():
    r = run_cli("no-such-command")
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "invalid choice" in r.stderr


def _chart():
    return alt.Chart(pd.DataFrame({"x": [1, 2, 3], "y": [1, 4, 9]})).mark_line().encode(x="x", y="y")


def test_renderer_is_offline_first_and_deterministic():
    plots.enable()
    first = _chart()._repr_mimebundle_()
    second = _chart()._repr_mimebundle_()
    first = first[0] if isinstance(first, tuple) else first
    second = second[0] if isinstance(second, tuple) else second
    html1, html2 = first["text/html"], second["text/html"]
    # numbered ids, not random ones: a fresh kernel reproduces the same output
    n1 = int(re.search(r'id="dw-chart-(\d+)"', html1).group(1))
    n2 = int(re.search(r'id="dw-chart-(\d+)"', html2).group(1))
    assert n2 == n1 + 1
    assert html1.replace(f"dw-chart-{n1}", "X") == html2.replace(f"dw-chart-{n2}", "X")
    # the page's own vegaEmbed draws; nothing is ever fetched (no URL, no script loading)
    assert 'if (typeof vegaEmbed !== "undefined") { draw(); return; }' in html1
    script = html1.split("})({", 1)[0]  # the code around the spec (the spec's $schema is only an id)
    assert "http" not in script and "createElement" not in script and ".src" not in script
    assert "require" not in html1  # no require.js branch (it would fetch vega from a CDN)
    plots.enable(live=True)
    assert alt.renderers.active == "default"
    plots.enable()
    assert alt.renderers.active == plots.RENDERER


def test_threshold_chart_has_a_bound_slider_and_validates():
    chart = plots.threshold_chart([{"name": "BERT-large", "depth": 24, "width": 1024}])
    spec = chart.to_dict()  # validates against the Vega-Lite schema
    params = [p for p in spec.get("params", []) if "bind" in p]
    assert params and params[0]["bind"]["input"] == "range"
    assert "BERT-large" in json.dumps(spec)


def test_explorer_renders_at_once_and_on_change():
    calls = []

    def render(a, b):
        calls.append((a, b))
        return f"<p>{a * b}</p>"

    a, b = widgets.int_slider("a", 2, 0, 10), widgets.int_slider("b", 3, 0, 10)
    box = widgets.explorer(render, a=a, b=b)
    panel = box.children[1]
    assert panel.value == "<p>6</p>" and calls == [(2, 3)]
    b.value = 5
    assert panel.value == "<p>10</p>"


def test_threshold_explorer_panel_states_threshold_and_regime():
    box = widgets.threshold_explorer(width=1000, depth=7)
    html = box.children[1].value
    assert "6.29" in html and "depth-inefficient" in html  # log3(1000) = 6.2877 < 7
    assert "1,093" in html  # C = (3^7 - 1) / 2


def test_glue_returns_nothing_so_cells_print_nothing():
    assert book.glue("x", 1.5) is None


def test_npm_pins_match_what_altair_writes():
    pins = json.loads((ROOT / "package.json").read_text())["dependencies"]
    assert pins["vega-lite"] == alt.VEGALITE_VERSION
    assert pins["vega-embed"].split(".")[0] == alt.VEGAEMBED_VERSION.split(".")[0]
    assert pins["vega"].split(".")[0] == alt.VEGA_VERSION.split(".")[0]


@pytest.mark.parametrize("nb", sorted((ROOT / "book").rglob("*.ipynb")), ids=lambda p: p.name)
def test_notebooks_run_on_colab_as_they_are(nb):
    """First cell: guarded Colab install, hidden in the book, skipped by nbval; TPU runtime asked."""
    import nbformat

    notebook = nbformat.read(nb, as_version=4)
    first = notebook.cells[0]
    assert first.cell_type == "code"
    assert 'if "google.colab" in sys.modules:' in first.source
    assert {"remove-cell", "nbval-skip"} <= set(first.metadata.get("tags", []))
    assert notebook.metadata.get("accelerator") == "TPU"
    # committed with outputs: nbval compares them
    assert any(c.get("outputs") for c in notebook.cells if c.cell_type == "code")


def test_colab_install_cells_point_at_the_configured_repository():
    import nbformat
    import yaml

    url = yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]["url"]
    assert book.COLAB_INSTALL == f"dwlib @ git+{url}"
    for nb in sorted((ROOT / "book").rglob("*.ipynb")):
        first = nbformat.read(nb, as_version=4).cells[0].source
        assert f'"{book.COLAB_INSTALL}"' in first, nb.name


def test_files_are_written_whole_and_leave_no_temporary_behind(tmp_path, monkeypatch):
    import json as _json

    from dwlib import store as files

    path = files.write_json(tmp_path / "a.json", {"x": [1, 2]}, indent=None)
    assert path.read_text() == '{"x": [1, 2]}\n'
    files.write_lines(tmp_path / "b.jsonl", ["1", "2"])
    assert (tmp_path / "b.jsonl").read_text() == "1\n2\n"
    files.write_text(tmp_path / "a.json", "old")

    def broken_dumps(*a, **k):
        raise TypeError("not serialisable")

    monkeypatch.setattr(_json, "dumps", broken_dumps)
    try:
        files.write_json(tmp_path / "a.json", object())
    except TypeError:
        pass
    assert (tmp_path / "a.json").read_text() == "old"  # the target is untouched
    monkeypatch.undo()

    def failing_replace(src, dst):
        raise OSError("disk gone")

    monkeypatch.setattr(files.os, "replace", failing_replace)
    try:
        files.write_text(tmp_path / "a.json", "new")
    except OSError:
        pass
    assert (tmp_path / "a.json").read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "b.jsonl"]  # no temporary left
