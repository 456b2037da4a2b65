"""The windows a run reads from a corpus's splits: training batches, as a pure function of
(seed, step), and the held-out windows its evaluations read.

- :func:`train_batch` draws contiguous windows of the training split, the same for batch ``s``
  whether or not the run was interrupted before it, in one of :data:`SAMPLINGS`.
- :func:`eval_batches` returns a fixed set of evenly spaced held-out windows, the same for
  every run; :func:`whole_split` every window of a split, so that each token is predicted once.
"""

from __future__ import annotations

import functools

import numpy as np

from dwlib.errors import require

SAMPLINGS = ("random", "disjoint")


def train_batch(tokens: np.ndarray, step: int, batch_size: int, seq_len: int, seed: int,
                sampling: str = "random") -> np.ndarray:
    """(batch_size, seq_len + 1) contiguous windows of the training tokens; a pure function of
    (seed, step).

    ``"random"``: windows that start anywhere, drawn afresh at every step (two windows may
    overlap, so a token can be trained on twice before the split is used up). ``"disjoint"``:
    the split cut into consecutive windows, one token of overlap (each token is a target once),
    taken in an order drawn from the seed; a run trains on no token twice until it has passed
    over the whole split, and pass ``e`` takes its own order, drawn from (seed, e).
    """
    if sampling == "random":
        rng = np.random.default_rng((seed, step))
        starts = rng.integers(0, len(tokens) - seq_len, size=batch_size)
    else:
        require(sampling == "disjoint", f"sampling must be one of {', '.join(SAMPLINGS)}, got {sampling!r}")
        n = (len(tokens) - 1) // seq_len  # windows in one pass
        require(n >= batch_size, f"disjoint sampling needs at least one batch of windows: the split holds {n} "
                                 f"windows of {seq_len} tokens, fewer than batch_size = {batch_size}")
        per_pass = n // batch_size  # whole batches in one pass (the last few windows wait for the next)
        order = _pass_order(n, seed, step // per_pass)
        i = (step % per_pass) * batch_size
        starts = order[i:i + batch_size].astype(np.int64) * seq_len
    return np.asarray(tokens[starts[:, None] + np.arange(seq_len + 1)], dtype=np.int32)


@functools.lru_cache(maxsize=4)
def _pass_order(n_windows: int, seed: int, pass_index: int) -> np.ndarray:
    """The order of the windows in one pass of disjoint sampling (cached: every step of a pass reads it)."""
    return np.random.default_rng((seed, pass_index, n_windows)).permutation(n_windows)


def whole_split(tokens: np.ndarray, batch_size: int, seq_len: int) -> list[np.ndarray]:
    """Every window of the split, consecutive with one token of overlap, so that each token after
    the first is predicted exactly once (a last stretch shorter than ``seq_len`` is left out): a
    (n, batch_size, seq_len + 1) array of whole batches, then a (1, rest, seq_len + 1) array with
    the windows left over, if any. The loss over the split is the mean of both, weighted by their
    windows (:func:`whole_split_mean`)."""
    n = (len(tokens) - 1) // seq_len
    require(n >= 1, f"a split of {len(tokens)} tokens holds no window of {seq_len + 1}")
    starts = np.arange(n, dtype=np.int64) * seq_len
    windows = np.asarray(tokens[starts[:, None] + np.arange(seq_len + 1)], dtype=np.int32)
    full = (n // batch_size) * batch_size
    parts = [windows[:full].reshape(-1, batch_size, seq_len + 1)] if full else []
    return parts + ([windows[full:][None]] if full < n else [])


def whole_split_mean(parts: list[np.ndarray], means) -> float:
    """The per-token mean loss of a split from the mean loss of each part of :func:`whole_split`."""
    sizes = [p.shape[0] * p.shape[1] for p in parts]
    return float(sum(float(m) * k for m, k in zip(means, sizes)) / sum(sizes))


def eval_batches(tokens: np.ndarray, n_batches: int, batch_size: int, seq_len: int) -> np.ndarray:
    """(n_batches, batch_size, seq_len + 1) fixed windows, evenly spaced over the held-out tokens."""
    starts = np.linspace(0, len(tokens) - seq_len - 1, n_batches * batch_size).astype(np.int64)
    windows = np.asarray(tokens[starts[:, None] + np.arange(seq_len + 1)], dtype=np.int32)
    return windows.reshape(n_batches, batch_size, seq_len + 1)
