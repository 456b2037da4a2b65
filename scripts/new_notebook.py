"""Write a chapter notebook from a list of (kind, source[, tags]) cells, with the book's
standard first cells (Colab install, set-up) and Colab metadata (TPU runtime).

Used when a chapter is first drafted; after that the .ipynb is the source (edit it, then
`make execute` to refresh its outputs).
"""

from __future__ import annotations

import nbformat

from dwlib.book import COLAB_INSTALL

COLAB_CELL = f'''# On Colab only: install dwlib (and its dependencies) from the book's repository.
import sys
if "google.colab" in sys.modules:
    %pip install -q "{COLAB_INSTALL}"'''

SETUP_CELL = '''import dwlib.book
print(dwlib.book.setup())'''


def notebook(cells) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.metadata.update({
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "language_info": {"name": "python"},
        "accelerator": "TPU",
        "colab": {"provenance": [], "gpuType": "V28"},
    })
    out = [nbformat.v4.new_code_cell(COLAB_CELL, metadata={"tags": ["remove-cell", "nbval-skip"]})]
    for cell in cells:
        kind, source, *rest = cell
        tags = rest[0] if rest else []
        if kind == "md":
            out.append(nbformat.v4.new_markdown_cell(source))
        elif kind == "setup":
            out.append(nbformat.v4.new_code_cell(SETUP_CELL, metadata={"tags": ["nbval-ignore-output"]}))
        else:
            out.append(nbformat.v4.new_code_cell(source, metadata={"tags": tags} if tags else {}))
    nb.cells = out
    return nb


def write(path, cells) -> None:
    nbformat.write(notebook(cells), path)
