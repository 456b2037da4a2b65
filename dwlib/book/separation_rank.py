"""The numbers and tables of the chapter "Separation rank" (book/separation_rank.ipynb)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd

from dwlib.core import analysed, seprank
from dwlib.viz.theory import partition_rank_chart

#: the functions' names in the partition chart, shorter than the table's
SHORT_NAMES = {"product of per-position factors": "product of factors",
               "local: neighbours first (convolution-like)": "local (neighbours)",
               "self-attention, eq. (3), depth 1": "self-attention, L = 1",
               "self-attention, eq. (3), depth 2": "self-attention, L = 2"}


def partition_chart(ranks: pd.DataFrame):
    """The grid-rank table of :func:`grid_ranks` as a chart (functions by their short names)."""
    return partition_rank_chart(ranks.rename(index=SHORT_NAMES))


def grid_ranks(n_positions: int = 4, width: int = 2, n_points: int = 6, seed: int = 0):
    """(table, glue values): the grid-matrix rank (float64, numpy's tolerance) of three kinds of
    function for every balanced partition, on ``n_points`` Gaussian vectors per position: a
    product of per-position factors, the local function
    (:func:`dwlib.core.analysed.neighbour_pairs_function`), and one output entry of the analysed
    network at depths 1 and 2 (Gaussian weights)."""
    points = np.random.default_rng(seed).normal(size=(n_points, width))
    partitions = seprank.balanced_partitions(n_positions)
    with jax.enable_x64(True):
        functions = {
            "product of per-position factors": lambda x: jnp.prod(jnp.sum(x, axis=-1), axis=-1),
            "local: neighbours first (convolution-like)": analysed.neighbour_pairs_function,
        }
        for depth in (1, 2):
            theta = analysed.init_params(jax.random.PRNGKey(depth), depth, width, 1, dtype=jnp.float64)
            functions[f"self-attention, eq. (3), depth {depth}"] = (
                lambda x, theta=theta: analysed.forward(theta, x)[..., 0, 0])
        index = pd.Index([seprank.partition_name(a, n_positions) for a in partitions], name="partition (A | B)")
        ranks = pd.DataFrame({
            name: [int(np.linalg.matrix_rank(seprank.partition_matrix(f, points, n_positions, a))) for a in partitions]
            for name, f in functions.items()}, index=index).T
    numbers = {"sr_grid": n_points ** (n_positions // 2),
               "sr_local_near": int(ranks.iloc[1, 0]), "sr_local_far": int(ranks.iloc[1, 1]),
               "sr_sa1": int(ranks.iloc[2, 0]), "sr_sa2": int(ranks.iloc[3, 0]),
               "sr_sa_equal": "equal" if all(ranks.iloc[k].nunique() == 1 for k in (2, 3)) else "not equal"}
    return ranks, numbers
