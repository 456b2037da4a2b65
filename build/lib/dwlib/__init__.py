"""dwlib: the executable companion to "The Depth-to-Width Interplay in Self-Attention".

Levine, Wies, Sharir, Bata and Shashua, NeurIPS 2020. The package is built in layers; each
imports only the layers above it in this list (``tests/test_layers.py`` checks it):

Base: :mod:`dwlib.errors` (the one exception for bad input), :mod:`dwlib.fmt` (numbers as
text), :mod:`dwlib.store` (packaged data, files written whole), :mod:`dwlib.env` (backend,
devices, versions).

:mod:`dwlib.core`, the paper's mathematics: pure functions, no I/O, no UI.

- ``attention``  multi-head attention, the computation every model here shares (eqs. 1, 3)
- ``analysed``   the analysed network of eq. (3) and the Transformer layer of eqs. (1)-(2)
- ``bounds``     the depth threshold L_th = log3(d_x), the bounds of eqs. (7)-(8), Corollaries 1-2
- ``seprank``    separation ranks of grid-tensor matrices, exactly over GF(p)
- ``fit``        the authors' fit: optimal depth and width for a budget, practical shapes, verdicts
- ``collapse``   rank collapse of pure attention (beyond the paper)
- ``sizes``      N = 12 L d_x^2, widths for a budget, heads

:mod:`dwlib.train`, training the decoder of section 5: ``model`` (the plain Flax NNX decoder),
``fast`` and ``fast_attention`` (the opt-in fast path, tested against the plain model), ``data``,
``optim``, ``step`` (the jitted, sharded step), ``loop``, ``checkpoint``, ``config``, ``process``.

:mod:`dwlib.experiments`: ``presets``, ``sweep`` and ``records`` (depth x width sweeps at matched
budgets), ``transition`` and ``transition_fit`` (where the deeper network starts to win, and the
fit over depth), ``seprank_sweep``, ``catalogue`` (GPT-3, the 1T projection, real models),
``induction`` and ``context`` (what depth buys beyond this paper).

:mod:`dwlib.viz`: every chart and widget (``render`` is the offline renderer).

:mod:`dwlib.book` (one module per chapter: its numbers and tables) and :mod:`dwlib.cli` (the
``dwlib`` command line) sit on top.

``import dwlib`` imports none of the layers.
"""

from dwlib.errors import InputError

__version__ = "0.1.0"
__all__ = ["InputError", "__version__"]
