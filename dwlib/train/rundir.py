"""A run's directory: the files a training run leaves, written and read here and nowhere else.

- ``config.json``: the flat :class:`~dwlib.train.config.TrainConfig`, written first, without
  where the run was (:data:`WHERE`: its output and cache directories, paths of one machine).
  Runs written before hold those two fields too; every reader ignores them.
- ``metrics.jsonl``: the curve, one line per training step (``step``, ``loss``) and one per
  evaluation (``step``, ``eval_loss``, and ``select_loss`` on the validation split where the
  run has one); the only copy of it. Strict JSON: a non-finite value is written as ``null`` with
  a flag, ``{"step": 7, "loss": null, "nonfinite": "nan"}``. Files written before also hold each
  step's learning rate (``lr``), which the schedule determines: read the same, never rewritten.
- ``result.json``: the run's summary (:data:`SUMMARY_KEYS`, and a group run's ``select_loss``
  and ``trainer``), written when the run ends, with the SHA-256 of ``metrics.jsonl``
  (``metrics_sha256``) and of its own fields but the timings (``result_sha256``, :func:`seal`).
  A finished run whose ``metrics.jsonl`` or ``result.json`` no longer has its digest is not a
  result (:func:`digest_problem`). Results written before the digests existed (the stored
  sweeps' runs) have neither and are read as before, unchecked for edits.
- ``sweep_meta.json``: written by a sweep: its name, the hardware, the git commit, the target
  budget, wall time, and for a group run its group.
- ``checkpoints/`` and ``.lock``: the training process's (:mod:`dwlib.train.checkpoint`).

A trainer writes through :func:`write_config`, :func:`metric_line`, :func:`summary` and
:func:`write_result`; a sweep commits a whole run with :func:`write_run`; the trainer checks a
stored result with :func:`result_problem`, a sweep's records read a run with :func:`read_run`.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from pathlib import Path

import numpy as np

from dwlib.errors import StateError
from dwlib.store import write_json, write_lines, write_text

CONFIG, METRICS, RESULT, SWEEP_META = "config.json", "metrics.jsonl", "result.json", "sweep_meta.json"
CHECKPOINTS = "checkpoints"  # a directory
RUN_FILES = (".lock", CONFIG, METRICS, RESULT)  # what a training process writes as files
WHERE = ("out_dir", "cache_dir")  # config fields that say where a run was, not what it was: not stored
NONFINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}
TRAIN_TAIL = 20  # a summary's training loss: the mean of the last this many steps' losses


def first_line(err: BaseException) -> str:
    return (str(err).strip().splitlines() or [""])[0][:200]


def read_json(path: Path) -> dict | None:
    """A JSON object file's content, None when the file is absent; StateError (one line) when it is
    not a JSON object."""
    if not path.exists():
        return None
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise StateError(f"{path} cannot be read ({type(err).__name__}: {first_line(err)}): "
                         "restore it, or delete the run directory to start again") from None
    if not isinstance(obj, dict):
        raise StateError(f"{path} holds a {type(obj).__name__}, not a JSON object: restore it, "
                         "or delete the run directory to start again")
    return obj


# ---------------------------------------------------------------------------------------------
# config.json


def config_fields(fields: dict) -> dict:
    """The flat config as ``config.json`` stores it: without :data:`WHERE`."""
    return {k: v for k, v in fields.items() if k not in WHERE}


def write_config(run_dir: Path, fields: dict) -> None:
    write_text(run_dir / CONFIG, json.dumps(config_fields(fields), indent=2, allow_nan=False) + "\n")


# ---------------------------------------------------------------------------------------------
# metrics.jsonl: strict JSON lines


def metric_line(rec: dict) -> str:
    """One record as a strict JSON line: a non-finite loss becomes null with a ``nonfinite`` flag;
    any other non-finite number becomes null."""
    for name in ("loss", "eval_loss"):
        if name in rec and not math.isfinite(rec[name]):
            rec = {**rec, name: None, "nonfinite": str(rec[name])}  # 'nan', 'inf' or '-inf'
    rec = {k: None if isinstance(v, float) and not math.isfinite(v) else v for k, v in rec.items()}
    return json.dumps(rec, allow_nan=False)


def curve_lines(losses: list, evals: list[dict]) -> list[str]:
    """The lines of a curve in the order a run writes them: the evaluation at step 0 (if any),
    then each step's loss (``losses[k - 1]`` for step k) followed by its evaluation (if any)."""
    by_step = {e["step"]: e for e in evals}
    lines = [metric_line(dict(by_step[0]))] if 0 in by_step else []
    for k, value in enumerate(losses, start=1):
        lines.append(metric_line({"step": k, "loss": value}))
        if k in by_step:
            lines.append(metric_line(dict(by_step[k])))
    return lines


def parse_metric(line: str) -> dict | None:
    """A metrics line as a record (non-finite values restored as floats), or None if it is not one."""
    try:
        rec = json.loads(line, parse_constant=lambda name: NONFINITE.get(name.lower().replace("infinity", "inf")))
    except ValueError:
        return None
    if not isinstance(rec, dict) or type(rec.get("step")) is not int or rec["step"] < 0:
        return None
    name = "loss" if "loss" in rec else "eval_loss" if "eval_loss" in rec else None
    value = rec.get(name)
    if value is None and rec.get("nonfinite") in NONFINITE:
        rec[name] = NONFINITE[rec["nonfinite"]]
    elif name is None or not isinstance(value, (int, float)) or isinstance(value, bool):
        return None
    return rec


def read_metrics(run_dir: str | os.PathLike) -> tuple[list[float], list[dict]]:
    """``(train_losses, evals)`` of a run directory: the loss of each step in order (a non-finite
    one as a float nan or inf), and the evaluations as ``{"step", "eval_loss"}``. ValueError
    naming the line when a line is not a metrics record."""
    losses, evals = [], []
    for i, line in enumerate((Path(run_dir) / METRICS).read_text(encoding="utf-8").splitlines()):
        rec = parse_metric(line)
        if rec is None:
            raise ValueError(f"line {i + 1} of {Path(run_dir) / METRICS} is not a metrics record")
        (losses.append(rec["loss"]) if "loss" in rec else evals.append(rec))
    return losses, evals


def read_lines(path: Path) -> list[str]:
    """The lines of a text file (bytes that are not UTF-8 kept as surrogates), [] when absent."""
    try:
        return path.read_text(encoding="utf-8", errors="surrogateescape").splitlines()
    except FileNotFoundError:
        return []


def schedule(step: int, steps: int, eval_interval: int) -> list[tuple[str, int]]:
    """The records a run writes up to ``step``, in order: ("eval", 0), ("loss", 1), ...; an
    evaluation every ``eval_interval`` steps and at the last step (none with an interval of 0)."""
    out = [("eval", 0)] if eval_interval else []
    for k in range(1, step + 1):
        out.append(("loss", k))
        if eval_interval and (k % eval_interval == 0 or k == steps):
            out.append(("eval", k))
    return out


def metrics_gap(records: list, step: int, steps: int, eval_interval: int) -> str | None:
    """Why ``records`` (parsed lines, None for an unreadable one) do not hold the curve up to
    ``step`` exactly, or None when they do."""
    want = schedule(step, steps, eval_interval)
    for i, expected in enumerate(want):
        if i >= len(records):
            return f"ends after {len(records)} lines, short of step {step}"
        rec = records[i]
        if rec is None:
            return f"line {i + 1} is not a metrics record"
        got = ("loss" if "loss" in rec else "eval", rec["step"])
        if got != expected:
            return f"line {i + 1} holds the {got[0]} of step {got[1]} where the {expected[0]} of step " \
                   f"{expected[1]} is due"
        if not math.isfinite(rec.get("loss", rec.get("eval_loss"))):
            return f"line {i + 1} holds a non-finite value"
    if len(records) > len(want) and records[len(want)] is not None and records[len(want)]["step"] <= step:
        return f"line {len(want) + 1} holds a second record of step {records[len(want)]['step']}"
    return None


def metrics_problem(run_dir: Path, step: int, steps: int, eval_interval: int) -> str | None:
    """Why ``run_dir/metrics.jsonl`` does not hold the curve up to ``step`` exactly, or None."""
    if not (run_dir / METRICS).exists():
        return f"{METRICS} is missing"
    gap = metrics_gap([parse_metric(line) for line in read_lines(run_dir / METRICS)], step, steps, eval_interval)
    return None if gap is None else f"{METRICS} {gap}"


# ---------------------------------------------------------------------------------------------
# result.json: the summary and its digests

SUMMARY_KEYS = ("status", "diverged_step", "steps_done", "eval_loss", "train_loss", "parameters", "tokens_seen",
                "tokens_per_s", "seconds_this_session", "devices", "corpus")
DIGEST = "metrics_sha256"  # result.json's field: the SHA-256 of metrics.jsonl's bytes when the run ended
SEAL = "result_sha256"  # result.json's field: the SHA-256 of its other fields but the timings (canonical JSON)
TIMINGS = ("tokens_per_s", "seconds_this_session")  # a summary's measured times: outside its seal


def train_loss(losses: list) -> float | None:
    """A summary's training loss: the mean of the last :data:`TRAIN_TAIL` finite step losses."""
    finite = [v for v in losses if math.isfinite(v)]
    return float(np.mean(finite[-TRAIN_TAIL:])) if finite else None


def summary(*, status: str, diverged_step: int | None, steps_done: int, eval_loss: float | None,
            train_loss: float | None, parameters: dict, tokens_seen: int, tokens_per_s: float | None,
            seconds: float, devices: dict, corpus: dict, **more) -> dict:
    """A run's summary (``result.json`` before its digests), its fields in the stored order;
    ``more``: a group run's ``select_loss`` (after ``eval_loss``) and ``trainer`` (last)."""
    select = {"select_loss": more.pop("select_loss")} if "select_loss" in more else {}
    return {"status": status, "diverged_step": diverged_step, "steps_done": steps_done, "eval_loss": eval_loss,
            **select, "train_loss": train_loss, "parameters": parameters, "tokens_seen": tokens_seen,
            "tokens_per_s": tokens_per_s, "seconds_this_session": seconds, "devices": devices, "corpus": corpus,
            **more}


def metrics_digest(run_dir: str | os.PathLike) -> str:
    """The SHA-256 (hex) of ``run_dir/metrics.jsonl``'s bytes; OSError when it cannot be read."""
    return hashlib.sha256((Path(run_dir) / METRICS).read_bytes()).hexdigest()


def lines_digest(lines: list[str]) -> str:
    """The SHA-256 of the file these lines were read from (:func:`read_lines`), when each ended in
    a newline."""
    return hashlib.sha256("".join(line + "\n" for line in lines).encode("utf-8", "surrogateescape")).hexdigest()


def seal(result: dict) -> str:
    """The SHA-256 of a summary's fields (JSON, sorted keys) but its timings (``TIMINGS``:
    they differ from session to session, so that two runs computing the same thing have the same
    summary and seal but for them) and ``result_sha256`` itself: stored in it, it tells an edited
    value (a loss, a count, a fingerprint) from the one written."""
    rest = {k: v for k, v in result.items() if k != SEAL and k not in TIMINGS}
    return hashlib.sha256(json.dumps(rest, sort_keys=True).encode("ascii")).hexdigest()  # NaN: an edit, hashed


def sealed(result: dict, run_dir: str | os.PathLike) -> dict:
    """``result`` with the digest of ``run_dir/metrics.jsonl`` and its own seal added (in place)."""
    result[DIGEST] = metrics_digest(run_dir)
    result[SEAL] = seal(result)
    return result


def write_result(run_dir: Path, result: dict) -> None:
    """``result.json`` (strict JSON); ``result`` as :func:`sealed` left it."""
    write_text(run_dir / RESULT, json.dumps(result, indent=2, allow_nan=False) + "\n")


def write_sweep_meta(run_dir: Path, meta: dict) -> None:
    write_json(run_dir / SWEEP_META, meta)


def write_run(run_dir: Path, fields: dict, lines: list[str], result: dict, meta: dict) -> None:
    """A whole finished run into the (new, empty) directory ``run_dir``: its config, its metrics,
    its result sealed with their digest, its ``sweep_meta.json``."""
    write_config(run_dir, fields)
    write_lines(run_dir / METRICS, lines)
    write_json(run_dir / RESULT, sealed(result, run_dir))
    write_sweep_meta(run_dir, meta)


def summary_problem(result: dict, losses: list, evals: list) -> str | None:
    """Why a completed run's summary does not say what its metrics hold, or None: its held-out
    (and validation) loss must be the last evaluation's, its training loss the mean of the last
    20 steps' losses (as both trainers compute it)."""
    if result.get("status") != "completed" or not evals:
        return None
    last = evals[-1]
    checks = [("eval_loss", result.get("eval_loss"), last.get("eval_loss")),
              ("train_loss", result.get("train_loss"), train_loss(losses))]
    if "select_loss" in last or result.get("select_loss") is not None:
        checks.append(("select_loss", result.get("select_loss"), last.get("select_loss")))
    for name, stored, measured in checks:
        same = stored == measured or (isinstance(stored, float) and isinstance(measured, float)
                                      and math.isclose(stored, measured, rel_tol=1e-9, abs_tol=1e-12))
        if not same:
            return f"result.json's {name} {stored} is not the {measured} its metrics.jsonl holds"
    return None


def digest_problem(result: dict, run_dir: str | os.PathLike) -> str | None:
    """Why a completed or diverged run's ``result.json`` is not as it was written (a value edited:
    its seal differs) or ``run_dir/metrics.jsonl`` is not the file it was written with (a line
    edited, even to another well-formed line), or None. A result with neither ``result_sha256``
    nor ``metrics_sha256`` was written before results stored them (the runs behind the published
    sweeps among them): it is read as before, unchecked for edits."""
    if SEAL not in result and DIGEST not in result:
        return None
    if result.get(SEAL) != seal(result):
        return "result.json is not as it was written (its values do not give its result_sha256): it was edited " \
               "or damaged after the run ended"
    try:
        actual = metrics_digest(run_dir)
    except OSError as err:
        return f"metrics.jsonl cannot be read ({type(err).__name__}: {first_line(err)})"
    if actual != result[DIGEST]:
        return (f"metrics.jsonl is not the file its result.json was written with (SHA-256 {actual[:12]}..., "
                f"result.json records {str(result[DIGEST])[:12]}...): it was edited or damaged after the run ended")
    return None


# ---------------------------------------------------------------------------------------------
# Reading a finished run


def result_problem(run_dir: Path, done: dict, steps: int, eval_interval: int) -> str | None:
    """Why the trainer cannot take a stored summary as its run's result (incomplete, not what its
    metrics hold exactly, or its metrics edited since it was written: :func:`digest_problem`), or
    None: the check before a run is returned as finished instead of completed again."""
    missing = [k for k in SUMMARY_KEYS if k not in done]
    if missing:
        return f"result.json lacks {', '.join(missing)}"
    if done["status"] == "completed":
        if not (isinstance(done["eval_loss"], float) and math.isfinite(done["eval_loss"])):
            return "result.json has no final evaluation"
        if (problem := metrics_problem(run_dir, steps, steps, eval_interval)) is not None:
            return problem
        try:
            return summary_problem(done, *read_metrics(run_dir)) or digest_problem(done, run_dir)
        except (OSError, ValueError) as err:
            return f"its metrics cannot be read ({err})"
    if done["status"] == "diverged":
        try:
            ok = done["steps_done"] == done["diverged_step"] == len(read_metrics(run_dir)[0])
        except (OSError, ValueError) as err:
            return f"its metrics cannot be read ({err})"
        return digest_problem(done, run_dir) if ok else "result.json does not match metrics.jsonl"
    return f"result.json has an unknown status {done['status']!r}"


_RECORD_RESULT_FIELDS = ("status", "diverged_step", "steps_done", "eval_loss", "train_loss", "parameters",
                         "tokens_seen", "tokens_per_s")
_RECORD_CONFIG_FIELDS = ("depth", "width", "heads", "seed", "steps", "eval_interval")


def read_run(run_dir: Path) -> tuple[dict, dict, dict, list, list]:
    """``(result, config, sweep_meta, losses, evals)`` of a finished run directory, checked whole
    and consistent; StateError (one line naming the run and the file) when a file is absent, torn
    or garbage, or when they do not agree: a result without its evaluations, a curve with more or
    fewer losses than the steps the result reports, a summary that is not what the curve holds,
    a ``metrics.jsonl`` or ``result.json`` edited after the run ended (:func:`digest_problem`).
    ``sweep_meta.json`` is optional ({} when absent)."""
    run_dir = Path(run_dir)
    result, cfg = json_object(run_dir, RESULT), json_object(run_dir, CONFIG)
    meta = json_object(run_dir, SWEEP_META, optional=True) or {}
    try:
        losses, evals = read_metrics(run_dir)
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        raise _bad(run_dir, METRICS, _why(e)) from None
    _check_finished(run_dir, result, cfg, losses, evals)
    return result, cfg, meta, losses, evals


def _bad(run_dir: Path, name: str, why: str) -> StateError:
    return StateError(f"run {run_dir.name}: {name} {why}")


def _why(e: Exception) -> str:
    if isinstance(e, FileNotFoundError):
        return "is missing"
    if isinstance(e, json.JSONDecodeError):
        return f"is not JSON (line {e.lineno}: {e.msg})"
    if isinstance(e, UnicodeDecodeError):
        return "is not UTF-8 text"
    if isinstance(e, KeyError):
        return f"has a line without {e}"
    return f"cannot be read ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})"


def json_object(run_dir: Path, name: str, optional: bool = False) -> dict | None:
    """A JSON object file in ``run_dir``, or StateError (one line: "run <name>: <file> ..."); None for an
    absent optional one."""
    path = run_dir / name
    if optional and not path.exists():
        return None
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise _bad(run_dir, name, _why(e)) from None
    if not isinstance(obj, dict):
        raise _bad(run_dir, name, f"holds a {type(obj).__name__}, not an object")
    return obj


def _check_finished(run_dir: Path, result: dict, cfg: dict, losses: list, evals: list) -> None:
    """StateError unless the result, the config and the curve are whole and agree."""
    for name, obj, fields in ((RESULT, result, _RECORD_RESULT_FIELDS), (CONFIG, cfg, _RECORD_CONFIG_FIELDS)):
        missing = [f for f in fields if f not in obj]
        if missing:
            raise _bad(run_dir, name, f"lacks {', '.join(missing)}")
    if not isinstance(result["parameters"], dict) or "non_embedding" not in result["parameters"]:
        raise _bad(run_dir, RESULT, "lacks parameters.non_embedding")
    status, steps = result["status"], result["steps_done"]
    if status == "completed":
        if steps != cfg["steps"]:
            raise _bad(run_dir, RESULT, f"reports {steps} steps of a {cfg['steps']}-step run as completed")
        if result["eval_loss"] is None or (cfg["eval_interval"] and not evals):
            raise _bad(run_dir, RESULT, "reports a completed run without evaluations")
        if cfg["eval_interval"] and evals[-1]["step"] != steps:
            raise _bad(run_dir, METRICS, f"ends its evaluations at step {evals[-1]['step']}, not {steps}")
    elif status == "diverged":
        if result["diverged_step"] != steps:
            raise _bad(run_dir, RESULT, f"reports divergence at step {result['diverged_step']} "
                                        f"but {steps} steps done")
    else:
        raise _bad(run_dir, RESULT, f"has an unknown status {status!r}")
    if len(losses) != steps:  # one loss per step (the diverged step's non-finite one included)
        raise _bad(run_dir, METRICS, f"holds {len(losses)} training losses for {steps} steps")
    if (problem := summary_problem(result, losses, evals) or digest_problem(result, run_dir)) is not None:
        raise StateError(f"run {run_dir.name}: {problem}")
