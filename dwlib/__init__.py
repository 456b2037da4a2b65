"""dwlib: the executable companion to "The Depth-to-Width Interplay in Self-Attention".

Levine, Wies, Sharir, Bata and Shashua, NeurIPS 2020. One module per concept of the paper:

Theory and bounds (sections 2-4):

- :mod:`dwlib.core.attention`   multi-head attention, the one computation every model here shares (eqs. 1, 3)
- :mod:`dwlib.core.analysed`    the analysed network of eq. (3) and the Transformer layer of eqs. (1)-(2)
- :mod:`dwlib.core.bounds`      the depth threshold L_th = log3(d_x), the bounds of eqs. (7)-(8), Corollaries 1-2
- :mod:`dwlib.core.seprank`     measured separation ranks: grid-tensor matrices and their exact ranks

Experiments (section 5) and guidelines:

- :mod:`dwlib.train.model`       the decoder-only Transformer trained in the experiments (Flax NNX)
- :mod:`dwlib.train.data`        corpora, the byte-level BPE tokenizer and training windows
- :mod:`dwlib.train.loop`       the sharded trainer with checkpoints and ``dwlib train``
- :mod:`dwlib.experiments.sweep`       depth x width sweeps at matched budgets, presets, ``dwlib sweep``
- :mod:`dwlib.experiments.transition`  the budget where a deeper network starts to win, and its fit over depth
- :mod:`dwlib.core.fit`  the optimal depth and width for a budget, verdicts, ``dwlib advise``
- :mod:`dwlib.experiments.context`     rank collapse and induction heads: what depth buys beyond this paper

The book's helpers:

- :mod:`dwlib.book`        set-up and glue for every chapter
- :mod:`dwlib.env`         a short report of the backend, devices and versions a notebook runs on
- :mod:`dwlib.viz.render`       Altair charts that render offline in the book and live in a kernel
- :mod:`dwlib.viz.widgets`     ipywidgets helpers for live kernels (JupyterLab, Colab)
- :mod:`dwlib.cli`         the ``dwlib`` command line

Heavy modules (jax, flax) are imported only by the modules that need them, so that
``import dwlib`` stays cheap.
"""

from dwlib.errors import InputError

__version__ = "0.1.0"
__all__ = ["InputError", "__version__"]
