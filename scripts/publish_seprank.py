"""Run the separation-rank chapter's whole sweep and publish it as dwlib/data/seprank.json.

    .venv/bin/python scripts/publish_seprank.py

About ten minutes on two CPU cores; the chapter (book/seprank_measurements.ipynb) reads the file.
Re-execute the notebook afterwards. `dwlib seprank --sweep --out PATH` writes the same result elsewhere.
"""

from __future__ import annotations

from dwlib.experiments import seprank_sweep
from dwlib.store import packaged_path

if __name__ == "__main__":
    result = seprank_sweep.sweep()
    path = seprank_sweep.write_sweep(result, packaged_path(seprank_sweep.DATA_FILE))
    print(f"sweep: {result['timing']['sweep_seconds']} s; written to {path}")
