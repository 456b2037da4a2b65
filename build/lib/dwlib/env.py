"""What a notebook is running on: backend, devices and library versions.

Every chapter prints this report at its top, so that a reader comparing numbers across
machines (CPU here, a Colab TPU, a GPU) knows what produced them. Nothing here assumes a
device count or a backend.
"""

from __future__ import annotations

import importlib.metadata
import platform
import sys

import jax

_PACKAGES = ("jax", "jaxlib", "flax", "optax", "orbax-checkpoint", "numpy", "altair", "dwlib")


def on_colab() -> bool:
    """True inside a Google Colab runtime."""
    return "google.colab" in sys.modules


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def report() -> dict:
    """Backend, devices, host count and versions, as plain data."""
    devices = jax.devices()
    kinds = sorted({d.device_kind for d in devices})
    return {
        "python": platform.python_version(),
        "platform": f"{platform.system()} {platform.machine()}",
        "colab": on_colab(),
        "backend": jax.default_backend(),
        "device_count": jax.device_count(),
        "local_device_count": jax.local_device_count(),
        "process_count": jax.process_count(),
        "device_kinds": kinds,
        "versions": {p: _version(p) for p in _PACKAGES},
    }


def format_report(rep: dict | None = None) -> str:
    """The report as a few aligned lines of text."""
    rep = report() if rep is None else rep
    versions = ", ".join(f"{k} {v}" for k, v in rep["versions"].items())
    lines = [
        ("backend", f"{rep['backend']} ({rep['device_count']} device(s): {', '.join(rep['device_kinds'])};"
                    f" {rep['process_count']} process(es))"),
        ("python", f"{rep['python']} on {rep['platform']}{' (Colab)' if rep['colab'] else ''}"),
        ("versions", versions),
    ]
    return "\n".join(f"{k:<9} {v}" for k, v in lines)

