"""dwlib: the executable companion to "The Depth-to-Width Interplay in Self-Attention".

Levine, Wies, Sharir, Bata and Shashua, NeurIPS 2020. One module per concept of the paper:

- :mod:`dwlib.analysed`    the analysed network of eq. (3) and the Transformer layer of eqs. (1)-(2)
- :mod:`dwlib.bounds`      the depth threshold L_th = log3(d_x) and the separation-rank bounds (eqs. 7, 8)
- :mod:`dwlib.env`         a short report of the backend, devices and versions a notebook runs on
- :mod:`dwlib.plots`       Altair charts that render offline in the book and live in a kernel
- :mod:`dwlib.widgets`     ipywidgets helpers for live kernels (JupyterLab, Colab)

Heavy modules (jax, flax) are imported only by the modules that need them, so that
``import dwlib`` stays cheap.
"""

from dwlib.errors import InputError

__version__ = "0.1.0"
__all__ = ["InputError", "__version__"]
