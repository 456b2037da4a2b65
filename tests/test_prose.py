"""The numbers in the chapters' prose (dwlib.book.prose, dwlib.book.glue_all, and
scripts/execute_notebooks.py, which stores them): each check fails on the notebook it is for."""

from __future__ import annotations

import copy
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from IPython.core.formatters import PlainTextFormatter

from dwlib.book import GLUED, Glued, NotGlued, Text, glue_all, prose

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "execute_notebooks.py"


def _glue_output(name: str, text: str) -> dict:
    return {"output_type": "display_data", "data": {prose.SCRAPBOOK: text},
            "metadata": {"scrapbook": {"name": name, "mime_prefix": "application/papermill.record/"}}}


def _stored(*pairs) -> list:
    return [{"expression": e, "result": {"status": "ok", "data": {"text/plain": t}, "metadata": {}}} for e, t in pairs]


def _notebook() -> dict:
    """A chapter in small: a glue cell, then prose quoting its two values, correctly stored."""
    return {"cells": [
        {"cell_type": "code", "metadata": {}, "source": "glued = glue_all(...)", "outputs": [
            _glue_output("depth", "20.744"), _glue_output("verdict", "'too deep'")]},
        {"cell_type": "markdown", "source": 'about {eval}`glued["depth:.1f"]` layers, {eval}`glued["verdict"]`',
         "metadata": {"user_expressions": _stored(('glued["depth:.1f"]', "20.7"), ('glued["verdict"]', "too deep"))}},
    ]}


def test_a_correct_notebook_has_no_problems():
    assert prose.problems(_notebook()) == []
    assert prose.expected(_notebook()) == [(1, 'glued["depth:.1f"]', "20.7"), (1, 'glued["verdict"]', "too deep")]


@pytest.mark.parametrize("change, message", [
    (lambda nb: nb["cells"][1].update(source="{glue:text}`depth:.1f`"), "is a glue role"),
    (lambda nb: nb["cells"][1]["metadata"]["user_expressions"][0]["result"]["data"].update({"text/plain": "20.8"}),
     "its glued value gives '20.7'"),
    (lambda nb: nb["cells"][1]["metadata"].pop("user_expressions"), "no stored result"),
    (lambda nb: nb["cells"][1]["metadata"]["user_expressions"][0].update(
        result={"status": "error", "ename": "NameError", "evalue": "glued", "traceback": []}), "is an error"),
    (lambda nb: nb["cells"][1].update(source='{eval}`glued["verdict"]`'), "no longer has"),
    (lambda nb: nb["cells"][1].update(source="{eval}`1 + 1`"), 'not of the form glued["name:spec"]'),
    (lambda nb: nb["cells"][0]["outputs"].pop(0), "glued by no cell"),
    (lambda nb: nb["cells"].reverse(), "glued only later"),
])
def test_each_problem_is_found(change, message):
    nb = copy.deepcopy(_notebook())
    change(nb)
    found = prose.problems(nb)
    assert any(message in p for p in found), found


def test_format_value_follows_the_spec_type_as_myst_nb_does():
    assert prose.format_value(20.744, ".1f") == "20.7" and prose.format_value(13440, ",") == "13,440"
    assert prose.format_value(13440.0, ",.0f") == "13,440" and prose.format_value(0.5, ".0%") == "50%"
    assert prose.format_value(7.0, "d") == "7" and prose.format_value("6, 12", "") == "6, 12"
    assert prose.format_value(3, ".2f") == "3.00" and prose.format_value(True, "") == "True"


def test_shown_drops_quotes_as_jupyterlab_myst_does():
    assert prose.shown("'too deep'") == "too deep" and prose.shown('"it\'s"') == "it's"
    assert prose.shown("20.7") == "20.7" and prose.shown("'a' and 'b'") == "a' and 'b"


def test_glued_gives_the_text_the_prose_shows():
    glued = glue_all({"t_depth": 94.7512345678912, "t_width": 30000, "t_names": "6, 12"})
    assert glued is GLUED and "t_depth" in glued
    assert glued["t_depth:.1f"] == "94.8" and glued["t_width:,"] == "30,000" and glued["t_names"] == "6, 12"
    assert glued.values["t_depth"] == 94.75123457  # kept to ten digits, as saved
    # IPython's text/plain (what the kernel sends jupyterlab-myst) is the text, without quotes
    assert PlainTextFormatter()(glued["t_names"]) == "6, 12" and isinstance(glued["t_names"], Text)
    with pytest.raises(NotGlued, match="'t_nothing' is not glued yet in this kernel"):
        Glued()["t_nothing:.1f"]


def test_glue_saves_the_value_not_its_text(monkeypatch):
    """The glue output nbval compares is the value (a text quoted, a real to ten digits), as
    myst-nb's {glue:text} expects it; only ``glued[...]`` is the formatted text."""
    import dwlib.book

    saved = {}
    monkeypatch.setattr(dwlib.book, "_myst_glue", lambda name, value, display: saved.update({name: value}))
    glue_all({"t_list": "6, 12", "t_real": 2 / 3})
    assert type(saved["t_list"]) is str and PlainTextFormatter()(saved["t_list"]) == "'6, 12'"
    assert saved["t_real"] == 0.6666666667


def _script():
    spec = importlib.util.spec_from_file_location("execute_notebooks", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _chapter(tmp_path, prose_source: str) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [
        nbformat.v4.new_markdown_cell("# A chapter"),
        nbformat.v4.new_code_cell("from dwlib.book import glue_all\n\nglued = glue_all({'x_ratio': 2 / 3, 'x_n': 12})"),
        nbformat.v4.new_markdown_cell(prose_source),
        nbformat.v4.new_code_cell("glued = glue_all({'x_later': 1})"),
    ]
    nb.cells[0].metadata["user_expressions"] = _stored(("stale", "1"))
    path = tmp_path / "chapter.ipynb"
    nbformat.write(nb, path)
    return path


def test_execute_stores_what_the_kernel_evaluates_when_the_run_reaches_the_cell(tmp_path):
    path = _chapter(tmp_path, 'ratio {eval}`glued["x_ratio:.2f"]` of {eval}`glued["x_n"]`, again {eval}`glued["x_n"]`')
    assert _script().main([str(path)]) == 0
    nb = json.loads(path.read_text())
    assert "user_expressions" not in nb["cells"][0]["metadata"]  # no expressions: nothing stored
    assert nb["cells"][2]["metadata"]["user_expressions"] == _stored(
        ('glued["x_ratio:.2f"]', "0.67"), ('glued["x_n"]', "12"), ('glued["x_n"]', "12"))
    assert prose.problems(nb) == []
    assert nb["cells"][1]["execution_count"] == 1 and nb["cells"][3]["execution_count"] == 2  # no count used up


def test_execute_refuses_an_expression_quoted_before_its_value_exists(tmp_path):
    path = _chapter(tmp_path, 'later {eval}`glued["x_later"]`')
    before = path.read_text()
    run = subprocess.run([sys.executable, str(SCRIPT), str(path)], capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 1, run.stderr
    assert "not written" in run.stderr and "'x_later' is not glued yet" in run.stderr, run.stderr
    assert path.read_text() == before
