"""Copy the book's front-end libraries from node_modules into book/_vendor.

The rendered book must work with no network: MathJax, Vega, Vega-Lite, vega-embed (Altair
charts) and the ipywidgets HTML manager (saved widget state) are served from the book's own
static files. They come from the npm packages pinned in package.json; nothing third-party is
committed. Run after `npm ci`; `make setup` does both.

Checks that the Vega-Lite bundle is the version Altair writes its specs for, so a chart
never silently renders with a mismatched library.
"""

from __future__ import annotations

import json
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
    "@jupyter-widgets/html-manager": ("dist", "html-manager"),
}
SKIP_SUFFIXES = (".map", "embed-amd.js", "libembed-amd.js", ".LICENSE.txt")


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
    manifest = {p: version(p) for p in (*FILES, *TREES)}
    (tmp / "versions.json").write_text(json.dumps(manifest, indent=2) + "\n")
    shutil.rmtree(DEST, ignore_errors=True)
    tmp.rename(DEST)  # whole or nothing: a failed copy leaves the previous folder intact
    print("vendor_assets: " + ", ".join(f"{k} {v}" for k, v in manifest.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
