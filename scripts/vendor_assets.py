"""Copy the book's front-end libraries and fonts from node_modules into book/_vendor.

The rendered book must work with no network: MathJax, Vega, Vega-Lite, vega-embed (Altair
charts) and the ipywidgets HTML manager (saved widget state) are served from the book's own
static files. They come from the npm packages pinned in package.json; nothing third-party is
committed. Run after `npm ci`; `make setup` does both.

The fonts the pages and their charts are set in come with the book too (:data:`FONTS`), so that
no page lays out differently on a reader's machine with other fonts: their faces are written
into one stylesheet, fonts.css, beside the font files it names.

Checks that the Vega-Lite bundle is the version Altair writes its specs for, so a chart
never silently renders with a mismatched library.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NODE = ROOT / "node_modules"
DEST = ROOT / "book" / "_vendor"

FILES = {  # npm package -> files copied (relative to the package), destination (relative to DEST)
    "vega": [("build/vega.min.js", "vega.min.js")],
    "vega-lite": [("build/vega-lite.min.js", "vega-lite.min.js")],
    "vega-embed": [("build/vega-embed.min.js", "vega-embed.min.js")],
}
TREES = {  # whole folders: MathJax loads its components and fonts relative to itself
    "mathjax": ("es5", "mathjax"),
}
SKIP_SUFFIXES = (".map", ".LICENSE.txt")
# Fontsource packages -> the stylesheets of the faces the book uses (regular, italic, bold, bold
# italic; a weight in between is drawn with the nearest of these). Arimo has the metrics of Arial
# and Liberation Sans, Cousine those of Courier New and Liberation Mono. book/assets/dwbook.css
# names them; the charts take the page's font (book/assets/dwcharts.js).
FONTS = {
    "@fontsource/arimo": ["400.css", "400-italic.css", "700.css", "700-italic.css"],
    "@fontsource/cousine": ["400.css", "400-italic.css", "700.css", "700-italic.css"],
}
# The glyphs those lack (they stop at Latin, Greek, Cyrillic, Hebrew and Vietnamese: the text's
# ≤, ≥, ≃, ∝, arrows) come from DejaVu, shipped as well, never from the reader's machine: each
# family below is named second in its font stack (dwbook.css), and its faces are declared for
# exactly the code points that the first family's faces leave out, so that a page loads them
# only when its text has such a character. Fontsource package -> (family, {weight: file}).
FALLBACKS = {
    "@fontsource/arimo": ("DejaVu Sans", {400: "ttf/DejaVuSans.ttf", 700: "ttf/DejaVuSans-Bold.ttf"}),
    "@fontsource/cousine": ("DejaVu Sans Mono", {400: "ttf/DejaVuSansMono.ttf", 700: "ttf/DejaVuSansMono-Bold.ttf"}),
}
FALLBACK_PACKAGE = "dejavu-fonts-ttf"
FONT_URL = re.compile(r"url\(\./files/([\w.-]+)\)")
UNICODE_RANGE = re.compile(r"unicode-range:\s*([^;]+);")
LAST_CODE_POINT = 0x10FFFF


def code_points(ranges: str) -> list[tuple[int, int]]:
    """A unicode-range value ("U+0000-00FF,U+0131") as (first, last) pairs."""
    out = []
    for item in ranges.split(","):
        first, _, last = item.strip().removeprefix("U+").partition("-")
        out.append((int(first, 16), int(last or first, 16)))
    return out


def complement(ranges: list[tuple[int, int]]) -> str:
    """The code points of Unicode that none of ``ranges`` covers, as a unicode-range value."""
    gaps, start = [], 0
    for first, last in sorted(ranges):
        if first > start:
            gaps.append((start, first - 1))
        start = max(start, last + 1)
    if start <= LAST_CODE_POINT:
        gaps.append((start, LAST_CODE_POINT))
    return ",".join(f"U+{a:04X}" + (f"-{b:04X}" if b != a else "") for a, b in gaps)


def copy_fonts(dest: Path) -> None:
    """Write dest/fonts.css, the @font-face rules of :data:`FONTS` and of their
    :data:`FALLBACKS`, and copy every font file they name, with its licence, into
    dest/fonts/<package>/ (the rules' URLs rewritten to point there)."""
    rules = []
    for package, sheets in FONTS.items():
        folder = package.split("/")[-1]
        (dest / "fonts" / folder).mkdir(parents=True)
        shutil.copy2(NODE / package / "LICENSE", dest / "fonts" / folder / "LICENSE")
        covered = []
        for sheet in sheets:
            css = (NODE / package / sheet).read_text(encoding="utf-8")
            if css.count("url(") != len(FONT_URL.findall(css)):
                raise ValueError(f"{package}/{sheet} names a file outside files/: update copy_fonts")
            for name in FONT_URL.findall(css):
                shutil.copy2(NODE / package / "files" / name, dest / "fonts" / folder / name)
            covered += [r for value in UNICODE_RANGE.findall(css) for r in code_points(value)]
            rules.append(f"/* {package} {version(package)}: {sheet} */\n"
                         + FONT_URL.sub(lambda m: f"url(fonts/{folder}/{m.group(1)})", css).strip() + "\n")
        if not covered:
            raise ValueError(f"{package} declares no unicode-range: its fallback would never be used")
        family, files = FALLBACKS[package]
        folder = FALLBACK_PACKAGE
        (dest / "fonts" / folder).mkdir(exist_ok=True)
        shutil.copy2(NODE / FALLBACK_PACKAGE / "LICENSE", dest / "fonts" / folder / "LICENSE")
        for weight, path in files.items():
            name = Path(path).name
            shutil.copy2(NODE / FALLBACK_PACKAGE / path, dest / "fonts" / folder / name)
            rules.append(f"/* {FALLBACK_PACKAGE} {version(FALLBACK_PACKAGE)}: {name}, for what {package} lacks */\n"
                         f"@font-face {{\n  font-family: '{family}';\n  font-style: normal;\n"
                         f"  font-display: swap;\n  font-weight: {weight};\n"
                         f"  src: url(fonts/{folder}/{name}) format('truetype');\n"
                         f"  unicode-range: {complement(covered)};\n}}\n")
    (dest / "fonts.css").write_text("\n".join(rules), encoding="utf-8")


def version(package: str) -> str:
    return json.loads((NODE / package / "package.json").read_text())["version"]


def main() -> int:
    if not NODE.is_dir():
        print("vendor_assets: node_modules is missing; run `npm ci` first", file=sys.stderr)
        return 2
    import altair as alt

    wanted = {"vega-lite": alt.VEGALITE_VERSION}
    for package, want in wanted.items():
        have = version(package)
        if have != want:
            print(f"vendor_assets: altair {alt.__version__} writes Vega-Lite {want} specs but npm "
                  f"installed {package} {have}; align package.json", file=sys.stderr)
            return 2

    tmp = DEST.with_name("_vendor.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for package, files in FILES.items():
        for src, dst in files:
            shutil.copy2(NODE / package / src, tmp / dst)
    for package, (src, dst) in TREES.items():
        shutil.copytree(NODE / package / src, tmp / dst,
                        ignore=lambda d, names: [n for n in names if n.endswith(SKIP_SUFFIXES)])
    try:
        copy_fonts(tmp)
    except (OSError, ValueError) as err:
        print(f"vendor_assets: fonts: {err}", file=sys.stderr)
        return 2
    manifest = {p: version(p) for p in (*FILES, *TREES, *FONTS, FALLBACK_PACKAGE)}
    (tmp / "versions.json").write_text(json.dumps(manifest, indent=2) + "\n")
    shutil.rmtree(DEST, ignore_errors=True)
    tmp.rename(DEST)  # whole or nothing: a failed copy leaves the previous folder intact
    print("vendor_assets: " + ", ".join(f"{k} {v}" for k, v in manifest.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
