"""A run's checkpoints, and the run directory as one training process holds it (:class:`RunDir`).

The files themselves (``config.json``, ``metrics.jsonl``, ``result.json``) are written and read
by :mod:`dwlib.train.rundir`. Here: ``checkpoints/``, orbax checkpoints of parameters, optimiser
state and step, with what the run was computed from (seed, corpus fingerprint, devices) and the
SHA-256 of ``metrics.jsonl`` up to their step; each holds ``dwlib_files.json``, the SHA-256 of
every file orbax wrote for it, checked before orbax reads it. And ``.lock``, held by the process
training the run (:func:`dwlib.store.exclusive`).

Crash consistency: the metrics a checkpoint covers are flushed and fsynced *before* the
checkpoint is written, so a process killed at any moment leaves metrics that reach at least its
newest checkpoint. A run started again restores the newest checkpoint whose metrics are whole
(one loss per step from 1 on, an evaluation wherever the schedule has one) and that orbax can
read, cuts ``metrics.jsonl`` back to it, and computes the rest again, identically. When it has
to pass over a checkpoint (metrics short or torn, checkpoint unreadable) it deletes that
checkpoint and says so in one line on stderr; with none usable it starts again from step 0 (the
run is deterministic: only time is lost). A checkpoint computed from another corpus or on
another number of devices is refused (:class:`~dwlib.errors.StateError`), never mixed in
(checkpoints written before these were recorded are checked for the seed only).

Edits: a checkpoint whose metrics lines were edited since it was written (a loss changed in
place, still a well-formed line) is passed over like one whose lines are torn: its parameters
are sound, but the curve before it is not the one it computed, and the curve cannot be
recomputed without training again, so the run resumes from an older checkpoint whose lines are
intact (or from step 0) and writes those steps' lines again, exactly as they first were.
Checkpoints written before the digests existed have none and are read as before.

A group of runs trained together by a sweep keeps its own checkpoint (:class:`GroupCheckpoint`):
the stacked state of its runs with their curves so far, in a folder of the sweep's, deleted once
the group's runs are committed.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import logging
import os
import shutil
import stat
import sys
from pathlib import Path

import jax
import orbax.checkpoint as ocp

from dwlib.errors import StateError, require
from dwlib.store import is_temporary, write_lines, write_text
# Sideways, within train: the one write probe of every output directory, and its file's name (told
# apart from a foreign file in a directory that holds no run yet).
from dwlib.train.process import PROBE_PREFIX, check_writable
from dwlib.train.rundir import (CONFIG, DIGEST, METRICS, first_line, lines_digest, metric_line, metrics_digest,
                                metrics_gap, parse_metric, read_lines, schedule, sealed, write_config, write_result)

def check_out_dir(out_dir: str | os.PathLike) -> Path:
    """The output directory as an absolute path; InputError unless it can be created and written
    (:func:`dwlib.train.process.check_writable`: a probe file, removed at once). Nothing else is
    created here."""
    require(str(out_dir).strip() != "", "the output directory must be a non-empty path")
    path = Path(out_dir).expanduser().absolute()
    return check_writable(path, "output directory", directory=True)


# ---------------------------------------------------------------------------------------------
# The run directory


def check_run_dir(path: Path) -> None:
    """StateError unless ``path`` is absent, a dwlib run (has ``config.json``) or holds nothing
    but what dwlib writes before ``config.json``: the ``.lock``, a write probe, the temporary file
    of ``config.json`` itself (another process creating the run, or one killed while writing it).
    A directory of other files is never taken over."""
    if path.is_dir() and not (path / CONFIG).exists():
        others = sorted(p.name for p in path.iterdir() if p.name != ".lock" and not p.name.startswith(PROBE_PREFIX)
                        and not is_temporary(p.name, CONFIG))
        if others:
            raise StateError(f"output directory {str(path)!r} is not empty ({', '.join(others[:3])}"
                             f"{', ...' if len(others) > 3 else ''}) and holds no dwlib run (no config.json): "
                             "use a new or empty directory")


@contextlib.contextmanager
def _orbax_quiet():
    """Hold orbax's log records (the ``absl`` logger) for the duration of one orbax call: on a
    failed write its threads log a traceback per array (hundreds of lines on a full disk), and on
    resume it logs a torn metadata file it then reads anyway; the run's own one-line error or note
    says what matters. Only that logger's ``disabled`` flag is touched, and it is put back."""
    logger = logging.getLogger("absl")
    was, logger.disabled = logger.disabled, True
    try:
        yield
    finally:
        logger.disabled = was


# A committed checkpoint's own file: the SHA-256 of each file orbax wrote for it, written by the lead
# process right after orbax commits the checkpoint. A checkpoint is checked against it before orbax
# reads it: orbax fails on the first damaged array while TensorStore's reads of the others still
# complete into the event loop orbax has closed, each reported as an unraisable exception (a
# traceback on stderr). A checkpoint without it (written before it existed, or a process killed
# between orbax's commit and this file) is handed to orbax unchecked.
FILE_DIGESTS = "dwlib_files.json"


def _file_digests(step_dir: Path) -> dict[str, str]:
    """``{path relative to step_dir: SHA-256}`` of every regular file under ``step_dir`` but
    :data:`FILE_DIGESTS` itself and orbax's ``_CHECKPOINT_METADATA`` (its own bookkeeping, which
    it reads even torn: such a checkpoint is used as before)."""
    out = {}
    for root, _, files in os.walk(step_dir):
        for name in files:
            path = Path(root) / name
            rel = path.relative_to(step_dir).as_posix()
            if rel not in (FILE_DIGESTS, _STEP_METADATA):
                with open(path, "rb") as f:  # read in blocks: an array's file may be large
                    out[rel] = hashlib.file_digest(f, "sha256").hexdigest()
    return dict(sorted(out.items()))


def _files_problem(step_dir: Path) -> str | None:
    """Why the files of a checkpoint are not those written when it was committed (one named), or
    None (also when it has no :data:`FILE_DIGESTS`: unchecked)."""
    if not (step_dir / FILE_DIGESTS).exists():
        return None
    try:
        want = json.loads((step_dir / FILE_DIGESTS).read_text(encoding="utf-8"))
        got = _file_digests(step_dir)
    except (OSError, ValueError) as err:
        return f"{type(err).__name__}: {first_line(err)[:120]}"
    if not isinstance(want, dict):
        return f"{FILE_DIGESTS} is not a JSON object"
    for rel in sorted(set(want) | set(got)):
        if rel not in got:
            return f"{rel} is missing"
        if want.get(rel) != got[rel]:
            return f"{rel} is not the file written" if rel in want else f"{rel} was not written with it"
    return None


# Written into a checkpoint before orbax renames it into place: a step directory without it is one
# that orbax had begun to delete, file by file, when its process was stopped.
_STEP_METADATA = "_CHECKPOINT_METADATA"


def _finish_deleting(folder: Path) -> None:
    """Remove the step directories of ``folder`` that orbax was deleting (an old checkpoint past
    ``max_to_keep``) when the process was stopped: orbax would list them as checkpoints and warn
    that their metadata is missing. A committed checkpoint is left alone unless something in it is
    neither a file nor a folder (orbax would block on a FIFO as it lists the checkpoints): that
    one is removed, and the run goes on from an older one. Whatever else stands
    where a checkpoint goes (``<step>`` or orbax's ``<step>.orbax-checkpoint-tmp...``: a file, a
    FIFO that orbax would wait on for good, a symbolic link, removed as a link) is removed too."""
    if not folder.is_dir():
        return
    for step in folder.iterdir():
        if not step.name.split(".")[0].isdigit():
            continue
        if step.is_symlink() or not step.is_dir():  # a file, FIFO or link where a checkpoint goes: never one of ours
            step.unlink(missing_ok=True)
            print(f"dwlib: run {folder.parent}: removed {folder.name}/{step.name}, which was not a checkpoint's "
                  "folder (a file, FIFO or symbolic link)", file=sys.stderr, flush=True)
        elif step.name.isdigit() and not (step / _STEP_METADATA).exists():
            shutil.rmtree(step, ignore_errors=True)
        elif (odd := _not_plain(step)) is not None:  # orbax would wait on a FIFO for good as it lists the steps
            shutil.rmtree(step, ignore_errors=True)
            print(f"dwlib: run {folder.parent}: removed {folder.name}/{step.name}, which held {odd}, not a file or "
                  "folder", file=sys.stderr, flush=True)


def _not_plain(folder: Path) -> str | None:
    """The first entry under ``folder`` that is neither a regular file nor a folder (a FIFO, a
    socket, a device, a symbolic link), relative to ``folder``'s parent; None when there is none."""
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            mode = os.lstat(os.path.join(root, name)).st_mode
            if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                return os.path.relpath(os.path.join(root, name), folder.parent)
    return None


def _check_space(path: Path, step: int, state: dict) -> None:
    """OSError (ENOSPC, one line) when the disk has less room than the checkpoint's arrays take
    (orbax writes them uncompressed, with metadata on top), before orbax is handed the checkpoint:
    orbax's threads would each fail on their own and leave their reports to the logs (hundreds of
    lines) and to the event loop it closes. A disk that fills while orbax writes still ends in the
    one-line error of the save."""
    need = sum(leaf.nbytes for leaf in jax.tree.leaves(state))
    free = shutil.disk_usage(path).free
    if free < need:
        raise OSError(errno.ENOSPC, f"no space left on device for the checkpoint at step {step} in {path} "
                                    f"(its arrays take {need:,} bytes, {free:,} are free)")


def _save(manager, folder: Path, step: int, state: dict, meta: dict, lead: bool, *, where: Path,
          force: bool = False) -> None:
    """Save ``state`` (arrays, orbax) and ``meta`` (JSON) as the checkpoint at ``step`` in
    ``folder``, then its :data:`FILE_DIGESTS` (by the lead process). The disk's room is checked
    first (:func:`_check_space`); on a failure the half-written checkpoint is removed and the error
    goes on, a full disk as one line (ENOSPC) naming ``where`` (the run's or the group's folder)."""
    if lead:
        folder.mkdir(parents=True, exist_ok=True)
        _check_space(where, step, state)
    try:
        with _orbax_quiet():
            manager.save(step, args=ocp.args.Composite(state=ocp.args.StandardSave(state),
                                                       meta=ocp.args.JsonSave(meta)), force=force)
    except Exception as err:
        if lead:
            for tmp in folder.glob(f"{step}.orbax-checkpoint-tmp*"):
                shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(err, OSError) or "No space left" not in str(err):
            raise
        raise OSError(errno.ENOSPC, f"no space left on device for the checkpoint at step {step} "
                                    f"in {where}") from None
    if lead:
        write_text(folder / str(step) / FILE_DIGESTS, json.dumps(_file_digests(folder / str(step)), indent=1) + "\n")


class RunDir:
    """The files of one run as it trains (the lead process writes; on other hosts a no-op).
    Create it while holding the run's lock (:func:`dwlib.store.exclusive` on ``.lock``)."""

    def __init__(self, path: Path, config: dict, lead: bool, data: dict):
        """``data``: what the checkpoints must agree on to be resumed (seed, corpus fingerprint,
        devices); it is stored with each checkpoint."""
        self.path, self.lead, self.config, self.data = path, lead, config, data
        if lead:
            write_config(path, config)
            _finish_deleting(path / "checkpoints")
        with _orbax_quiet():  # it reads the existing checkpoints' metadata
            self.manager = ocp.CheckpointManager(path / "checkpoints", options=ocp.CheckpointManagerOptions(
                max_to_keep=2, enable_async_checkpointing=False, cleanup_tmp_directories=lead))
        self.metrics = None

    def restore(self, state: dict) -> tuple[dict, int, list[float], list[dict]]:
        """``(state, step, train_losses, evals)`` from the newest usable checkpoint (or the given
        state at step 0), with ``metrics.jsonl`` cut back to that step and opened for appending."""
        lines = read_lines(self.path / METRICS)
        records = [parse_metric(line) for line in lines]
        steps, interval = self.config["steps"], self.config["eval_interval"]
        notes, start = [], 0
        with _orbax_quiet():
            candidates = sorted(self.manager.all_steps(), reverse=True)
        for step in candidates:
            if (gap := metrics_gap(records, step, steps, interval)) is not None:
                why = "is missing" if not (self.path / "metrics.jsonl").exists() else gap
                notes.append(f"metrics.jsonl {why}, so the checkpoint at step {step} cannot be used")
            elif (restored := self._read(step, state, notes, lines[:len(schedule(step, steps, interval))])) is not None:
                state, start = restored
                break
            self._drop(step)
        if notes:
            print(f"dwlib: run {self.path}: {'; '.join(notes)}; "
                  f"{f'resuming from step {start}' if start else 'starting again from step 0'}",
                  file=sys.stderr, flush=True)
        kept = records[:len(schedule(start, steps, interval))] if start else []
        if self.lead:
            write_lines(self.path / METRICS, [metric_line(rec) for rec in kept])
            self.metrics = open(self.path / METRICS, "a", encoding="utf-8")
        return (state, start, [r["loss"] for r in kept if "loss" in r],
                [{"step": r["step"], "eval_loss": r["eval_loss"]} for r in kept if "eval_loss" in r])

    def _read(self, step: int, state: dict, notes: list, lines: list[str]) -> tuple[dict, int] | None:
        """The checkpoint at ``step`` (None, with a note, when orbax cannot read it or when
        ``lines``, the metrics lines up to ``step``, are not those it was written after); StateError
        when it was computed from other data."""
        if (odd := _not_plain(self.path / "checkpoints" / str(step))) is not None:  # orbax would wait on a FIFO
            notes.append(f"the checkpoint at step {step} cannot be read ({odd} is not a file or folder)")
            return None
        if (damaged := _files_problem(self.path / "checkpoints" / str(step))) is not None:
            notes.append(f"the checkpoint at step {step} cannot be read ({damaged})")
            return None
        abstract = jax.tree.map(ocp.utils.to_shape_dtype_struct, state)
        try:
            with _orbax_quiet():
                restored = self.manager.restore(step, args=ocp.args.Composite(
                    state=ocp.args.StandardRestore(abstract), meta=ocp.args.JsonRestore()))
            stored = dict(restored["meta"]["data"])
            require(int(restored["meta"]["step"]) == step, "its step is not its name")
        except Exception as err:  # orbax, TensorStore, JSON: a torn or overwritten file
            notes.append(f"the checkpoint at step {step} cannot be read ({type(err).__name__}: "
                         f"{first_line(err)[:120]})")
            return None
        for name, value in self.data.items():
            if name in stored and stored[name] != value and name != "next_step":
                label = "corpus fingerprint" if name == "corpus" else name
                raise StateError(f"the checkpoint at step {step} in {str(self.path)!r} was computed with "
                                 f"{label} {stored[name]}, this run has {label} {value}: resuming would mix them "
                                 f"({_HINTS.get(name, 'use another --out')})")
        if stored.get("next_step", step) != step:
            raise StateError(f"the checkpoint at step {step} in {str(self.path)!r} says it continues at "
                             f"step {stored['next_step']}: delete the run directory to start again")
        digest = restored["meta"].get(DIGEST)  # absent in checkpoints written before it was stored
        if digest is not None and digest != lines_digest(lines):
            notes.append(f"metrics.jsonl up to step {step} is not what it was when the checkpoint at step {step} "
                         "was written (a line edited), so that checkpoint cannot be used")
            return None
        return restored["state"], step

    def _drop(self, step: int) -> None:
        """Delete an unusable checkpoint (a later save of that step must not find it in place): a
        folder, or whatever stands in its place (a file, a symbolic link: the link, not its target)."""
        if self.lead:
            where = self.path / "checkpoints" / str(step)
            if where.is_symlink() or not where.is_dir():
                where.unlink(missing_ok=True)
            else:
                shutil.rmtree(where, ignore_errors=True)
        with _orbax_quiet():
            self.manager.reload()

    def log(self, rec: dict) -> None:
        if self.metrics is not None:
            self.metrics.write(metric_line(rec) + "\n")

    def sync(self) -> None:
        """Make the metrics written so far durable (flushed and fsynced)."""
        if self.metrics is not None:
            self.metrics.flush()
            os.fsync(self.metrics.fileno())

    def save(self, step: int, state: dict) -> None:
        """A checkpoint at ``step`` (once), after the metrics up to it are durable. On a failure
        (a full disk) the half-written checkpoint is removed and the error goes on."""
        if step in (self.manager.all_steps() or []):
            return
        self.sync()
        _save(self.manager, self.path / "checkpoints", step, state,
              {"step": step, "data": {**self.data, "next_step": step}, **self._digest()}, self.lead, where=self.path)

    def _digest(self) -> dict:
        """``{"metrics_sha256": ...}`` of the metrics written so far (by the lead process: the one
        that writes them), stored with a checkpoint; empty elsewhere."""
        return {DIGEST: metrics_digest(self.path)} if self.metrics is not None else {}

    def close(self, result: dict | None = None) -> None:
        """Close the metrics and checkpoints; when the run ended, write ``result.json`` (strict
        JSON), with the digest of ``metrics.jsonl`` and its seal added to ``result`` (in place:
        :func:`sealed`)."""
        if self.metrics is not None:
            self.sync()
            if result is not None:
                sealed(result, self.path)
            self.metrics.close()
            self.metrics = None
        if result is not None and self.lead:
            write_result(self.path, result)
        self.manager.close()


_HINTS = {"corpus": "was the corpus edited? restore it, or use another --out",
          "devices": "run on the same devices (DWLIB_CPU_DEVICES on a CPU), or use another --out",
          "seed": "use another --out"}


# ---------------------------------------------------------------------------------------------
# A group's checkpoint


class GroupCheckpoint:
    """The state of a group of runs between two chunks (:func:`dwlib.train.multi.train_group`),
    so that a group killed while it trains resumes there instead of from step 0: an orbax
    checkpoint of the stacked parameters and optimiser state, with the step, each run's curve so
    far, the seconds trained and what the state was computed from (``data``: the runs, the corpus
    fingerprint, the devices), in ``folder``. The newest is kept. A checkpoint that cannot be read
    or was computed from other data is deleted with a one-line note on stderr, and the group
    starts again from step 0 (a group is deterministic: only time is lost). Saving changes nothing
    the group computes when it falls on a chunk boundary the group has anyway; a resumed group
    gives its runs bit for bit. :meth:`remove` once the group's runs are committed."""

    def __init__(self, folder: Path, data: dict, lead: bool = True):
        self.folder, self.data, self.lead = Path(folder), json.loads(json.dumps(data)), lead
        if lead:
            _finish_deleting(self.folder)
        with _orbax_quiet():
            self.manager = ocp.CheckpointManager(self.folder, options=ocp.CheckpointManagerOptions(
                max_to_keep=1, enable_async_checkpointing=False, cleanup_tmp_directories=lead))

    def restore(self, state: dict) -> tuple[dict, list[dict] | None, float]:
        """``(state, curves, seconds)`` from the newest usable checkpoint (``state``: its
        ``params``, ``opt_state`` and ``step``), or the given initial state with no curves and no
        seconds when there is none."""
        with _orbax_quiet():
            candidates = sorted(self.manager.all_steps(), reverse=True)
        abstract = jax.tree.map(ocp.utils.to_shape_dtype_struct, {k: state[k] for k in ("params", "opt_state")})
        for step in candidates:
            where = self.folder / str(step)
            why = _not_plain(where) or _files_problem(where)
            if why is None:
                try:
                    with _orbax_quiet():
                        got = self.manager.restore(step, args=ocp.args.Composite(
                            state=ocp.args.StandardRestore(abstract), meta=ocp.args.JsonRestore()))
                    meta = got["meta"]
                    require(int(meta["step"]) == step, "its step is not its name")
                except Exception as err:  # orbax, TensorStore, JSON: a torn or overwritten file
                    why = f"{type(err).__name__}: {first_line(err)[:120]}"
                else:
                    if meta.get("data") == self.data:
                        return {**got["state"], "step": step}, meta["curves"], float(meta["seconds"])
                    why = "it was computed from other data (another corpus, devices or group of runs)"
            print(f"dwlib: group checkpoint {where}: {why}; the group starts again from step 0",
                  file=sys.stderr, flush=True)
            if self.lead:
                shutil.rmtree(where, ignore_errors=True)
            with _orbax_quiet():
                self.manager.reload()
        return state, None, 0.0

    def save(self, step: int, state: dict, curves: list[dict], seconds: float) -> None:
        """A checkpoint at ``step`` of the stacked ``state`` (``params``, ``opt_state``) with the
        curves up to it and the seconds trained so far; the older one is then deleted."""
        arrays = {k: state[k] for k in ("params", "opt_state")}
        meta = {"step": step, "data": self.data, "curves": curves, "seconds": seconds}
        _save(self.manager, self.folder, step, arrays, meta, self.lead, where=self.folder, force=True)

    def remove(self) -> None:
        """Close and delete the checkpoints (the group's runs are committed)."""
        self.manager.close()
        if self.lead:
            shutil.rmtree(self.folder, ignore_errors=True)
