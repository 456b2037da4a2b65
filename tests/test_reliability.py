"""Issue 39, tried as a hostile user would: each case ends in a correct result, or in one line
(exit status 2) with nothing half-written. The resume of a run with the other implementation,
orbax's log lines on resume, misleading messages, the environment JAX reads at import, and
paths and files of the wrong kind (property-based where the input space is open)."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dwlib import cli
from dwlib.errors import StateError
from dwlib.train.config import TrainConfig
from dwlib.train.loop import train

TEXT = ("Mr. Speaker, the state of the union is strong; we have paid our debts, kept our word, "
        "and built roads, schools and ports from sea to shining sea. ")
TINY = dict(depth=1, width=32, heads=2, vocab_size=300, seq_len=32, batch_size=8, steps=8, lr=3e-3,
            eval_interval=4, eval_batches=2, checkpoint_interval=4)
SETTINGS = settings(max_examples=40, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """A corpus and its cache, and a run stopped after its checkpoint at step 4."""
    root = tmp_path_factory.mktemp("reliability")
    (root / "corpus.txt").write_text("\n\n".join(TEXT * 4 for _ in range(40)))
    assert train(config(root, "stopped"), progress=False, verbose=False, stop_after=4)["status"] == "stopped"
    return root


def config(root: Path, name: str, **kw) -> TrainConfig:
    return TrainConfig.from_dict({**TINY, "corpus": str(root / "corpus.txt"), "cache_dir": str(root / "cache"),
                                  "out_dir": str(root / name), **kw})


def copy_of(root: Path, name: str) -> Path:
    subprocess.run(["cp", "-r", str(root / "stopped"), str(root / name)], check=True)
    return root / name


def _status(argv, capsys) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of ``dwlib argv`` in this process."""
    try:
        status = cli.main(argv)
    except SystemExit as stop:  # argparse's own refusals
        status = stop.code
    return status, *capsys.readouterr()


# --- a run resumed with the other --ops --------------------------------------------------------


def test_a_run_resumed_with_the_other_ops_is_refused(world):
    run = copy_of(world, "other-ops")
    before = (run / "config.json").read_text()
    with pytest.raises(StateError, match="trained with --ops plain up to its checkpoint at step 4.*--ops fast"):
        train(config(world, "other-ops", ops="fast"), progress=False, verbose=False)
    assert (run / "config.json").read_text() == before  # still names the implementation that trained it
    done = train(config(world, "other-ops"), progress=False, verbose=False)  # with its own ops it resumes
    assert done["status"] == "completed" and done["steps_done"] == 8


def test_a_run_without_a_checkpoint_starts_again_with_either_ops(world):
    train(config(world, "no-checkpoint"), progress=False, verbose=False, stop_after=2)
    done = train(config(world, "no-checkpoint", ops="fast"), progress=False, verbose=False)
    assert done["status"] == "completed"
    assert '"ops": "fast"' in (world / "no-checkpoint" / "config.json").read_text()


def test_orbax_log_lines_do_not_leak_on_resume(world, capfd):
    """A torn ``_CHECKPOINT_METADATA`` (orbax reads the checkpoint all the same) logged three lines
    through absl: WARNING or ERROR with the file's content."""
    run = copy_of(world, "absl")
    (run / "checkpoints" / "4" / "_CHECKPOINT_METADATA").write_text("x\n")
    logging.getLogger("absl").addHandler(handler := logging.StreamHandler(sys.stderr))
    try:
        capfd.readouterr()
        assert train(config(world, "absl"), progress=False, verbose=False)["status"] == "completed"
    finally:
        logging.getLogger("absl").removeHandler(handler)
    err = capfd.readouterr().err
    assert "absl" not in err and "Metadata file" not in err, err


# --- messages that named the wrong problem -----------------------------------------------------


@pytest.mark.parametrize("argv, message", [
    (["advise", "175e9", "--intercept", "-1e308"], "log_width_intercept must be a number from -50"),
    (["advise", "175e9", "--slope", "-inf"], "slope"),
    (["sweep", "--shard", "-1/2", "--dry-run"], "shard i/n needs 0 <= i < n, got '-1/2'"),
    (["bounds", "--width", "9" * 5000, "--heads", "2", "--depth", "1"], "(5,000 digits) is too large"),
    (["train", "--width", "9" * 5000], "(5,000 digits) is too large"),
    (["sweep", "--cost", "--share", "5e-324", "--json"], "--share must be from 1e-6 to 1"),
])
def test_each_message_names_the_problem(argv, message, capsys, refused):
    status, out, err = _status(argv, capsys)
    refused(status, err, message, out)
    assert "expected one argument" not in err and len(err) < 300


@SETTINGS
@given(number=st.one_of(st.floats(allow_nan=True, allow_infinity=True).map(lambda v: f"-{abs(v)!r}"),
                        st.integers(1, 10 ** 30).map(lambda n: f"-{n}e{n % 400}"),
                        st.tuples(st.integers(0, 99), st.integers(0, 99)).map(lambda t: f"-{t[0]}/{t[1]}")))
def test_a_negative_number_is_a_value_never_a_missing_argument(number, capsys):
    """argparse read only -1 and -1.5 as values: -1e308, -1/2, -inf were taken for options."""
    for argv in (["advise", "175e9", "--intercept", number], ["sweep", "--shard", number, "--dry-run"]):
        status, out, err = _status(argv, capsys)
        assert "expected one argument" not in err, (argv, err)
        assert status == 0 or status == 2 and err.count("\n") == 1, (argv, status, err)


@SETTINGS
@given(digits=st.integers(4301, 20000), sign=st.sampled_from(["", "+", "-"]))
def test_an_integer_too_long_to_read_is_named_so(digits, sign, capsys):
    for argv in (["bounds", "--width", sign + "7" * digits, "--heads", "2", "--depth", "1"],
                 ["train", "--seed", sign + "7" * digits]):
        status, out, err = _status(argv, capsys)
        assert status == 2 and f"({digits:,} digits) is too large" in err and len(err) < 200, err


def test_strict_json_even_for_an_infinite_estimate(capsys):
    from dwlib.cli_format import print_json
    print_json({"minutes": float("inf"), "rows": [float("nan"), 1.5, {"x": float("-inf")}]})
    assert capsys.readouterr().out.split() == ['{', '"minutes":', 'null,', '"rows":', '[', 'null,', '1.5,', '{',
                                               '"x":', 'null', '}', ']', '}']


def test_the_variables_the_multi_host_hint_names_are_read(monkeypatch):
    """JAX reads JAX_COORDINATOR_ADDRESS but not JAX_NUM_PROCESSES or JAX_PROCESS_ID, which the
    hint suggests: dwlib passes them on."""
    from dwlib.errors import InputError
    from dwlib.train import process
    seen = {}
    monkeypatch.setattr(process.jax.distributed, "initialize", lambda **kw: seen.update(kw))
    monkeypatch.setenv("DWLIB_DISTRIBUTED", "1")
    monkeypatch.setenv("JAX_NUM_PROCESSES", "4")
    monkeypatch.setenv("JAX_PROCESS_ID", "3")
    process.init_distributed()
    assert seen == {"num_processes": 4, "process_id": 3}
    monkeypatch.setenv("JAX_PROCESS_ID", "three")
    with pytest.raises(InputError, match="JAX_PROCESS_ID must be a whole number"):
        process.init_distributed()


def test_env_reports_the_devices_train_uses():
    code = ("import json, subprocess, sys; from dwlib.train import process; process.prepare_process(); "
            "import jax; print(len(jax.devices()))")
    env = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS", "JAX_NUM_CPU_DEVICES", "DWLIB_CPU_DEVICES")}
    train_devices = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    reported = subprocess.run([sys.executable, "-m", "dwlib", "env", "--json"], capture_output=True, text=True,
                              env=env, check=True)
    import json
    assert json.loads(reported.stdout)["device_count"] == int(train_devices.stdout) > 0


# --- the environment JAX and XLA read ------------------------------------------------------------


def _dwlib(args: list[str], **env) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("JAX_NUM", "XLA_FLAGS", "DWLIB_CPU"))}
    return subprocess.run([sys.executable, "-m", "dwlib", *args], capture_output=True, timeout=300,
                          env={**base, **env})


@pytest.mark.parametrize("name, value", [
    ("JAX_NUM_CPU_DEVICES", "abc"), ("JAX_NUM_CPU_DEVICES", "0"), ("JAX_NUM_CPU_DEVICES", "1" * 5000),
    ("JAX_ENABLE_X64", "maybe"), ("XLA_FLAGS", "--xla_force_host_platform_device_count=abc"),
    ("XLA_FLAGS", "--xla_force_host_platform_device_count=100000"), ("XLA_FLAGS", "garbage"),
])
def test_a_bad_jax_or_xla_variable_is_one_line_for_every_command(name, value):
    """JAX reads its JAX_* variables as it is imported (a traceback of 29 lines for every command,
    ``bounds`` included); XLA parses XLA_FLAGS as its backend starts and aborts with its whole
    flag list (94 lines); 100000 CPU devices hang its start-up."""
    proc = _dwlib(["env"], **{name: value})
    err = proc.stderr.decode()
    assert proc.returncode == 2 and err.count("\n") == 1 and name in err and len(err) < 200, err


@SETTINGS
@given(count=st.one_of(st.integers(-5, 200).map(str), st.text(max_size=6)),
       flags=st.lists(st.sampled_from(["--xla_cpu_use_thunk_runtime=false", "--xla_dump_to=/tmp/x", "-x", "=",
                                       "--a=b=c", "--xla_force_host_platform_device_count={}", "bare"]), max_size=3),
       where=st.sampled_from(["JAX_NUM_CPU_DEVICES", "XLA_FLAGS", "DWLIB_CPU_DEVICES"]))
def test_device_counts_and_flags_from_a_generator_are_checked_before_jax_starts(count, flags, where):
    from dwlib.errors import InputError
    from dwlib.train import process
    env = {"XLA_FLAGS": " ".join(f.format(count) for f in flags)} if where == "XLA_FLAGS" else {where: count}
    try:
        process.validate_environment(env)
    except InputError as err:
        assert "\n" not in str(err) and len(str(err)) < 200
        return
    if where != "XLA_FLAGS" or any("device_count" in f for f in flags):
        assert count.strip().isdigit() and 1 <= int(count) <= process.MAX_CPU_DEVICES
    assert where != "XLA_FLAGS" or "bare" not in flags and "=" not in flags


def test_a_path_the_output_encoding_cannot_show_is_written_escaped(world):
    proc = _dwlib(["train", "--depth", "1", "--width", "16", "--heads", "2", "--seq-len", "16", "--steps", "2",
                   "--vocab-size", "300", "--eval-interval", "0", "--no-progress", "--corpus",
                   str(world / "corpus.txt"), "--cache-dir", str(world / "cache"), "--out", str(world / "é-run")],
                  PYTHONIOENCODING="ascii")
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    assert b"\\xe9-run/result.json" in proc.stdout and b"Traceback" not in proc.stderr


# --- odd paths, and files of the wrong kind ----------------------------------------------------


def _name_part():
    return st.one_of(st.text(st.characters(blacklist_characters="/\0", blacklist_categories=("Cs",)), min_size=1,
                             max_size=40),
                     st.integers(200, 300).map(lambda n: "n" * n),
                     st.binary(min_size=1, max_size=8).map(lambda b: os.fsdecode(b.replace(b"/", b"_")
                                                                                  .replace(b"\0", b"_"))))


@SETTINGS
@given(parts=st.lists(_name_part(), min_size=1, max_size=3), repeat=st.integers(1, 30))
def test_an_output_path_from_a_generator_is_usable_or_refused_in_one_line(parts, repeat, tmp_path_factory):
    """Whatever name is given, check_writable passes only where the run directory and the files
    dwlib writes in it can be created (an undecodable byte got as far as orbax, at step 200)."""
    from dwlib.errors import InputError
    from dwlib.train import process
    root = tmp_path_factory.mktemp("names")
    path = root.joinpath(*(parts * repeat)[:max(len(parts), repeat)])
    try:
        process.check_writable(path, "--out", directory=True)
    except InputError as err:
        assert "\n" not in str(err) and len(str(err)) < 400
        return
    deepest = path / "checkpoints" / ("1234567890.orbax-checkpoint-tmp-" + "9" * 20) / "state" / ("d" * 40)
    deepest.mkdir(parents=True)
    str(path).encode("utf-8")
    (path / ".config.json.123456.tmp").write_text("{}")


def test_a_symbolic_link_to_nothing_as_out_is_refused(tmp_path, capsys, refused):
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    status, out, err = _status(["train", "--steps", "2", "--out", str(tmp_path / "dangling")], capsys)
    refused(status, err, "is a symbolic link to nothing", out)
    assert not (tmp_path / "nowhere").exists()


def _wrong(path: Path, kind: str) -> None:
    if path.is_dir() and not path.is_symlink():
        subprocess.run(["rm", "-r", str(path)], check=True)
    else:
        path.unlink(missing_ok=True)
    {"a directory": path.mkdir, "a file": path.touch, "a FIFO": lambda: os.mkfifo(path),
     "a link to nothing": lambda: path.symlink_to(path.parent / "nowhere")}[kind]()


@pytest.mark.parametrize("entry, kind", [(".lock", "a directory"), ("config.json", "a directory"),
                                         ("metrics.jsonl", "a directory"), ("result.json", "a directory"),
                                         ("metrics.jsonl", "a FIFO"), ("result.json", "a link to nothing"),
                                         ("checkpoints", "a file"), ("checkpoints", "a link to nothing")])
def test_a_run_file_of_the_wrong_kind_is_one_line_and_left_alone(world, entry, kind):
    run = copy_of(world, f"kind-{entry}-{kind.replace(' ', '-')}")
    _wrong(run / entry, kind)
    before = sorted(p.name for p in run.iterdir())
    with pytest.raises(StateError, match=f"{entry} is a" if "link" not in kind else "link to nothing") as err:
        train(config(world, run.name), progress=False, verbose=False)
    assert "\n" not in str(err.value)
    assert sorted(p.name for p in run.iterdir()) == before


def test_a_lock_file_that_is_a_directory_is_a_state_error(tmp_path):
    from dwlib.store import exclusive
    (tmp_path / ".lock").mkdir()
    with pytest.raises(StateError, match="is a directory, where dwlib keeps a file"):
        with exclusive(tmp_path / ".lock", "run"):
            pass


@pytest.mark.parametrize("kind", ["a file", "a link to nothing"])
def test_a_sweeps_runs_of_the_wrong_kind_is_one_line(tmp_path, capsys, refused, kind):
    out = tmp_path / "sweep"
    out.mkdir()
    (out / "sweep.json").write_text('{"name": "mini"}\n')
    _wrong(out / "runs", kind)
    for argv in (["sweep", "--preset", "mini", "--out", str(out), "--dry-run"],
                 ["sweep", "--preset", "mini", "--out", str(out), "--limit", "0", "--no-progress"]):
        status, stdout, err = _status(argv, capsys)
        refused(status, err, "runs is a" if kind == "a file" else "link to nothing", stdout)


def test_a_corpus_folder_with_a_link_to_nothing_or_a_folder_named_txt_is_refused(tmp_path):
    from dwlib.errors import InputError
    from dwlib.train import data
    folder = tmp_path / "docs"
    folder.mkdir()
    for i in range(3):
        (folder / f"d{i}.txt").write_text(TEXT * 4)
    for odd in ("link", "folder"):
        target = folder / "odd.txt"
        _wrong(target, "a link to nothing" if odd == "link" else "a directory")
        with pytest.raises(InputError, match="odd.txt' is not a regular file"):
            data.load_corpus(str(folder), vocab_size=300, cache=tmp_path / "cache")
        _wrong(target, "a file")
        target.unlink()


def test_a_corpus_whose_name_is_not_utf8_trains(world, tmp_path):
    """A corpus file or folder named with an undecodable byte (Python's str holds a surrogate):
    its cache key hashed the name as UTF-8 and failed; now the name's own bytes (the same bytes
    for a UTF-8 name, so no cache key changes)."""
    folder = tmp_path / os.fsdecode(b"docs\xff")
    folder.mkdir()
    for i in range(30):
        (folder / f"d{i}.txt").write_text(TEXT * 4)
    for corpus in (str(folder), str(tmp_path / os.fsdecode(b"c\xfe.txt"))):
        if corpus.endswith(".txt"):
            Path(corpus).write_text((world / "corpus.txt").read_text())
        cfg = config(world, "x", corpus=corpus, steps=2, eval_interval=0, checkpoint_interval=1,
                     out_dir=str(tmp_path / f"run-{len(corpus)}"), cache_dir=str(tmp_path / "cache"))
        assert train(cfg, progress=False, verbose=False)["status"] == "completed"


@pytest.mark.parametrize("entry", ["valid.npy", "train.npy", "tokenizer.json", "meta.json"])
def test_a_cache_file_of_the_wrong_kind_is_refused_not_rebuilt_over(world, entry):
    from dwlib.train import data
    corpus = data.load_corpus(str(world / "corpus.txt"), vocab_size=300, cache=world / "cache")
    folder = world / f"cache-{entry}"
    subprocess.run(["cp", "-r", str(world / "cache"), str(folder)], check=True)
    target = folder / corpus.directory.relative_to(world / "cache") / entry
    _wrong(target, "a directory")
    with pytest.raises(StateError, match=f"{entry} is a directory, where dwlib keeps a file"):
        data.load_corpus(str(world / "corpus.txt"), vocab_size=300, cache=folder)
    assert target.is_dir()


# --- install-pack: a FIFO, a full disk, a wrong fingerprint --------------------------------------


@pytest.fixture(scope="module")
def packed(world):
    from dwlib.train import data, pack
    corpus = data.load_corpus(str(world / "corpus.txt"), vocab_size=300, cache=world / "cache")
    pack.pack_corpus(corpus, world / "c.dwpack", splits=("train", "valid"))
    return world / "c.dwpack"


def test_a_fifo_as_the_pack_is_refused_at_once(tmp_path, capsys, refused):
    fifo = tmp_path / "p.dwpack"
    os.mkfifo(fifo)  # open() on it would wait for a writer forever
    status, out, err = _status(["install-pack", str(fifo), "--cache-dir", str(tmp_path / "cache")], capsys)
    refused(status, err, "is not a regular file", out)
    assert not (tmp_path / "cache").exists()


def _tree(root: Path) -> dict:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_a_pack_that_does_not_give_its_fingerprint_leaves_the_cache_as_it_was(packed, tmp_path):
    from dwlib.errors import InputError
    from dwlib.train import pack
    cache = tmp_path / "cache"
    pack.install_pack(packed, cache)
    before = _tree(cache)
    raw = bytearray(packed.read_bytes())  # the header's fingerprint changed, the arrays intact
    at = raw.index(b'"fingerprint": "') + len(b'"fingerprint": "')
    raw[at:at + 4] = b"0000" if raw[at:at + 4] != b"0000" else b"1111"
    (tmp_path / "other.dwpack").write_bytes(bytes(raw))
    with pytest.raises(InputError, match="does not rebuild the cache"):
        pack.install_pack(tmp_path / "other.dwpack", cache)
    assert _tree(cache) == before  # meta.json included: it used to be unlinked before the writes


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a tmpfs in a user namespace")
def test_install_pack_on_a_full_disk_is_one_line_and_keeps_the_existing_cache(packed, tmp_path):
    """On a small tmpfs (mounted in a user namespace): the first install fits; with the disk
    then filled, a second one fails in one line, leaves no temporary file and the cache whole."""
    import shutil
    if shutil.which("unshare") is None or subprocess.run(["unshare", "-rm", "true"], capture_output=True).returncode:
        pytest.skip("no user namespaces here to mount a small tmpfs")
    mount = tmp_path / "small"
    mount.mkdir()
    dwlib = f"{sys.executable} -m dwlib install-pack {packed}"
    script = (f"mount -t tmpfs -o size=2m tmpfs {mount} && {dwlib} --cache-dir {mount}/a > /dev/null && "
              f"find {mount} -type f -exec md5sum {{}} + | sort > {tmp_path}/before && "
              f"(dd if=/dev/zero of={mount}/filler bs=4k 2>/dev/null; true) && "
              f"{{ {dwlib} --cache-dir {mount}/a; echo rc=$?; {dwlib} --cache-dir {mount}/b; echo rc=$?; }} && "
              f"rm {mount}/filler && find {mount} -type f -exec md5sum {{}} + | sort > {tmp_path}/after && "
              f"find {mount} -name '.*' > {tmp_path}/hidden")
    proc = subprocess.run(["unshare", "-rm", "sh", "-c", script], capture_output=True, text=True, timeout=300)
    assert proc.stdout.split() == ["rc=2", "rc=2"], (proc.stdout, proc.stderr[-3000:])
    lines = proc.stderr.splitlines()
    assert len(lines) == 2 and all("No space left on device; nothing was changed there" in x for x in lines), lines
    assert (tmp_path / "before").read_text() == (tmp_path / "after").read_text() != ""
    assert (tmp_path / "hidden").read_text() == ""  # no temporary left to keep the disk full
