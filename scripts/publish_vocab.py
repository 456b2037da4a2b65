"""Run the vocabulary chapter's exact measurements and publish them as dwlib/data/vocab.json.

    .venv/bin/python scripts/publish_vocab.py

A few minutes on two CPU cores; the chapter (book/vocabulary.ipynb) reads the file. Re-execute the
notebook afterwards.
"""

from __future__ import annotations

from dwlib.experiments import vocab_sweep
from dwlib.store import packaged_path

if __name__ == "__main__":
    result = vocab_sweep.sweep()
    path = vocab_sweep.write_sweep(result, packaged_path(vocab_sweep.DATA_FILE))
    print(f"sweep: {result['sweep_seconds']} s; written to {path}")
