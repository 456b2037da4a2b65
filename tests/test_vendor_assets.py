"""scripts/vendor_assets.py's fonts: the stylesheet it writes from the font packages, the files it
copies beside it, and the fallback's code points (the ones the first font's faces leave out).
Run on a stand-in node_modules made here, so no npm install is needed."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("vendor_assets", ROOT / "scripts" / "vendor_assets.py")
vendor_assets = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(vendor_assets)

FACE = """/* sans-latin-400-normal */
@font-face {{
  font-family: 'Sans';
  font-weight: 400;
  src: url(./files/{name}) format('woff2');
  unicode-range: {range};
}}
"""


def _package(root: Path, name: str, files: dict[str, str], sheets: dict[str, str]) -> None:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "package.json").write_text('{"version": "1.2.3"}')
    (folder / "LICENSE").write_text("a licence")
    for file, content in files.items():
        (folder / file).parent.mkdir(parents=True, exist_ok=True)
        (folder / file).write_text(content)
    for sheet, css in sheets.items():
        (folder / sheet).write_text(css)


@pytest.fixture
def node(tmp_path, monkeypatch):
    """A node_modules with one font package of two faces and the fallback package."""
    root = tmp_path / "node_modules"
    _package(root, "@fontsource/sans", {"files/sans-a.woff2": "A", "files/sans-b.woff2": "B"},
             {"400.css": FACE.format(name="sans-a.woff2", range="U+0000-00FF,U+0131"),
              "700.css": FACE.format(name="sans-b.woff2", range="U+0100-0130")})
    _package(root, "fallback-fonts", {"ttf/Fallback.ttf": "F"}, {})
    monkeypatch.setattr(vendor_assets, "NODE", root)
    monkeypatch.setattr(vendor_assets, "FONTS", {"@fontsource/sans": ["400.css", "700.css"]})
    monkeypatch.setattr(vendor_assets, "FALLBACKS", {"@fontsource/sans": ("Fallback", {400: "ttf/Fallback.ttf"})})
    monkeypatch.setattr(vendor_assets, "FALLBACK_PACKAGE", "fallback-fonts")
    return root


def test_code_points_and_their_complement():
    ranges = vendor_assets.code_points("U+0000-00FF, U+0131,U+0100-0130")
    assert ranges == [(0x0, 0xFF), (0x131, 0x131), (0x100, 0x130)]
    assert vendor_assets.complement(ranges) == "U+0132-10FFFF"
    assert vendor_assets.complement([(0x41, 0x41)]) == "U+0000-0040,U+0042-10FFFF"
    assert vendor_assets.complement([(0x0, vendor_assets.LAST_CODE_POINT)]) == ""


def test_fonts_are_copied_with_a_stylesheet_that_names_them(node, tmp_path):
    dest = tmp_path / "vendor"
    dest.mkdir()
    vendor_assets.copy_fonts(dest)
    css = (dest / "fonts.css").read_text()
    named = re.findall(r"url\(([^)]+)\)", css)
    assert named == ["fonts/sans/sans-a.woff2", "fonts/sans/sans-b.woff2",
                     "fonts/fallback-fonts/Fallback.ttf"]
    assert all((dest / url).is_file() for url in named)
    assert (dest / "fonts" / "sans" / "LICENSE").is_file() and (dest / "fonts" / "fallback-fonts" / "LICENSE").is_file()
    # the fallback serves exactly what the package's faces leave out
    fallback = css[css.index("font-family: 'Fallback'"):]
    assert "unicode-range: U+0132-10FFFF;" in fallback
    assert "/* @fontsource/sans 1.2.3: 400.css */" in css


def test_a_stylesheet_naming_another_file_is_refused(node, tmp_path):
    (node / "@fontsource/sans/700.css").write_text(
        FACE.format(name="sans-b.woff2", range="U+0100") + "@font-face { src: url(../elsewhere.woff2); }")
    dest = tmp_path / "vendor"
    dest.mkdir()
    with pytest.raises(ValueError, match="700.css names a file outside files/"):
        vendor_assets.copy_fonts(dest)
