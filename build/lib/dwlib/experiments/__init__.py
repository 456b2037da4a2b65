"""Experiments built on training and the mathematics: sweeps, transitions, catalogues."""
