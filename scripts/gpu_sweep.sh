#!/usr/bin/env bash
# The GPU sweep of Figure 2's pairs (preset gpu-pairs), for a lent device machine: one command,
# resumable across machines, never training a finished run twice.
#
# Before the call, on this machine (the device reaches no registry, so the corpus travels as a pack):
#   .venv/bin/dwlib pack --corpus english-mix --validation-split --splits train,valid,select \
#       --out .devcache/english-mix.dwpack          # 13.4 MiB; .devcache/ is ignored by git
#   earlier sessions' runs: unpack their archive into results/ (tar -xzf ... -C results) and commit
#   results/gpu-pairs; committed or not, the folder travels with the working tree, so its finished
#   runs are not trained again.
# The call (run tool; timeout_s leaves 90 s for the pack, the imports and the archive; 480 s of
# training hold the largest group, about 343 s by the estimate in the preset, with room):
#   run(command="DWLIB_GPU_SECONDS=480 bash scripts/gpu_sweep.sh",
#       carry=[".devcache/english-mix.dwpack", "results/gpu-pairs"], timeout_s=570)
#   ("results/gpu-pairs" in carry also brings runs unpacked but ignored or not yet there: a path
#   that is absent here is reported in not_carried and is harmless.)
# After it: tar -xzf <files_at>/gpu-pairs-results.tar.gz -C results; then
#   .venv/bin/python scripts/publish_sweep.py results/gpu-pairs; commit results/gpu-pairs and
#   dwlib/data/sweeps/gpu-pairs.jsonl. The archive holds every finished run of the folder (those
#   carried in too: unpacking them again changes nothing) and no checkpoint.
#
# What it does, from the repository root, with the machine's python3 (jax, flax, optax, orbax,
# tokenizers, tqdm, numpy; `python3 -m dwlib sweep` imports nothing else):
#   1. installs the pack as the corpus cache (dwlib install-pack), prints the devices and the plan's cost;
#   2. trains one group of runs at a time (dwlib sweep --limit 1: each call commits its group's runs
#      whole, by rename) until the sweep is done, a call fails, or less of DWLIB_GPU_SECONDS is left
#      than the longest group of this call took (at least DWLIB_GPU_MIN_GROUP seconds): groups come
#      budget by budget from the smallest, so the next is rarely shorter, and a group started without
#      the time to finish would be lost; each call runs under `timeout`, which sends SIGTERM
#      when the budget is spent: dwlib ends with status 143 (dwlib/interrupts.py), the group in flight
#      is lost and every committed group stays (a stale temporary is removed by the next sweep);
#   3. writes results/gpu-pairs (runs, sweep.json; no checkpoints, locks or temporaries) as ONE
#      archive, $OUT/gpu-pairs-results.tar.gz (at most 16 MiB: past that, only the runs finished by
#      this call), and the log, $OUT/gpu-sweep.log.
# Settings (environment): DWLIB_GPU_SECONDS (training budget in seconds, default 420),
# DWLIB_GPU_MIN_GROUP (default 45), DWLIB_GPU_PACK (default .devcache/english-mix.dwpack),
# DWLIB_GPU_PRESET (default gpu-pairs), DWLIB_GPU_SHARDS (the shards this call trains, one after
# another, space-separated i/n as for `dwlib sweep --shard`; default 0/1, the whole sweep),
# DWLIB_GPU_PARALLEL (1: every shard at once, one process each, for shapes too small to keep the
# device busy alone; default 0), DWLIB_GPU_PARITY ('<preset> --shard i/n': benchmarks/device_parity.py
# beside the training, its comparison in $OUT/parity.json and parity.log; default none).
# Another preset, the larger sizes of cpu-pairs for instance (its shapes are shards of 15, depth by
# depth, budgets from the smallest: 4/15, 9/15 and 14/15 are 1.6M's), with that preset's own pack:
#   DWLIB_GPU_PRESET=cpu-pairs DWLIB_GPU_SHARDS="4/15 9/15 14/15" DWLIB_GPU_PACK=.devcache/linux-doc.dwpack
# (a float32 preset: JAX_DEFAULT_MATMUL_PRECISION=highest in the environment keeps its products
# in full float32, as on a CPU, rather than the GPU's TF32 default).
# Exit status: 0 when the archive was written (the sweep done or cut short), 2 for bad settings or a
# missing pack, 1 when no archive could be written.
set -uo pipefail

preset=${DWLIB_GPU_PRESET:-gpu-pairs}
shards=${DWLIB_GPU_SHARDS:-0/1}
parallel=${DWLIB_GPU_PARALLEL:-0}
parity=${DWLIB_GPU_PARITY:-}
results=results/$preset
budget=${DWLIB_GPU_SECONDS:-420}
min_group=${DWLIB_GPU_MIN_GROUP:-45}
pack=${DWLIB_GPU_PACK:-.devcache/english-mix.dwpack}
max_bytes=$((16 * 1024 * 1024))

fail() { echo "gpu_sweep: error: $1" >&2; exit "${2:-2}"; }
[[ -n "${OUT:-}" && -d "${OUT:-}" ]] || fail "OUT must name an existing folder (the device machine sets it)"
[[ $budget =~ ^[0-9]+$ && $budget -ge 1 ]] || fail "DWLIB_GPU_SECONDS must be a whole number of seconds, got '$budget'"
[[ $min_group =~ ^[0-9]+$ ]] || fail "DWLIB_GPU_MIN_GROUP must be a whole number of seconds, got '$min_group'"
[[ -f $pack ]] || fail "no pack at $pack (make it here with: dwlib pack --corpus english-mix --validation-split --splits train,valid,select --out $pack)"
[[ -f dwlib/__main__.py ]] || fail "run it from the repository root"
[[ $preset =~ ^[a-z0-9-]+$ ]] || fail "DWLIB_GPU_PRESET must be a preset's name, got '$preset'"
for shard in $shards; do [[ $shard =~ ^[0-9]+/[0-9]+$ ]] || fail "DWLIB_GPU_SHARDS must hold i/n shards, got '$shards'"; done
[[ $parallel == 0 || $parallel == 1 ]] || fail "DWLIB_GPU_PARALLEL must be 0 or 1, got '$parallel'"
[[ -z $parity || $parity =~ ^[a-z0-9-]+\ --shard\ [0-9]+/[0-9]+$ ]] || \
    fail "DWLIB_GPU_PARITY must read '<preset> --shard i/n', got '$parity'"
# Processes sharing one device take its memory as they need it, not three quarters each up front.
[[ $parallel == 1 || -n $parity ]] && export XLA_PYTHON_CLIENT_PREALLOCATE=${XLA_PYTHON_CLIENT_PREALLOCATE:-false}

log=$OUT/gpu-sweep.log
start=$SECONDS
marker=$(mktemp)  # runs committed after this file are this call's
say() { echo "gpu_sweep: $*" | tee -a "$log" >&2; }
dwlib() { python3 -m dwlib "$@" 2>&1 | tee -a "$log"; return "${PIPESTATUS[0]}"; }

say "start $(date -u +%FT%TZ); budget ${budget} s; $(git rev-parse HEAD 2>/dev/null || echo 'no git checkout here')"
dwlib install-pack "$pack" || fail "the pack could not be installed (see $log)"
dwlib env || true
dwlib sweep --preset "$preset" --cost || true
say "shards: $shards (parallel: $parallel); parity: ${parity:-none}; JAX_DEFAULT_MATMUL_PRECISION=${JAX_DEFAULT_MATMUL_PRECISION:-unset}"

# One shard's groups, one `dwlib sweep --limit 1` at a time, until the shard is done, a call fails, or
# less of the budget is left than the longest group of this shard took. Prints its closing status.
train_shard() {
  local shard=$1 longest=0 left need out began rc  # a later group (budget-major: larger) takes at least as long
  while :; do
    left=$((budget - (SECONDS - start)))
    need=$((longest > min_group ? longest : min_group))
    if ((left < need)); then echo "stopped: ${left} s of the budget left, shard $shard's longest group took ${longest} s"; return 1; fi
    out=$(mktemp)
    began=$SECONDS
    timeout --signal=TERM --kill-after=20 "$left" python3 -m dwlib sweep --preset "$preset" --shard "$shard" \
        --no-progress --limit 1 >"$out" 2>&1
    rc=$?
    ((SECONDS - began > longest)) && longest=$((SECONDS - began))
    sed "s|^|[$shard] |" "$out" | tee -a "$log" >&2
    if ((rc != 0)); then echo "stopped: dwlib sweep ended with status $rc (shard $shard)"; rm -f "$out"; return 1; fi
    if ! grep -q "left (limit)" "$out"; then rm -f "$out"; echo "shard $shard done"; return 0; fi
    rm -f "$out"
  done
}

if [[ -n $parity ]]; then  # the device check beside the training: it writes only under $OUT
  # shellcheck disable=SC2086
  python3 benchmarks/device_parity.py --preset $parity --json "$OUT/parity.json" >"$OUT/parity.log" 2>&1 &
  parity_pid=$!
fi
status=""
if [[ $parallel == 1 ]]; then  # every shard at once, each in its own process, sharing the device
  pids=() notes=()
  for shard in $shards; do
    note=$(mktemp); notes+=("$note")
    train_shard "$shard" >"$note" &
    pids+=($!)
  done
  for i in "${!pids[@]}"; do wait "${pids[$i]}"; status+="$(cat "${notes[$i]}"); "; rm -f "${notes[$i]}"; done
else
  for shard in $shards; do
    note=$(train_shard "$shard") || { status+="$note"; break; }
    status+="$note; "
  done
fi
if [[ -n $parity ]]; then wait "$parity_pid"; say "parity check ended with status $? (see parity.log)"; fi
say "$status after $((SECONDS - start)) s"

archive=$OUT/$preset-results.tar.gz
[[ -d $results ]] || fail "no $results was written (see $log)" 1
excludes=(--exclude=checkpoints --exclude='.*.lock' --exclude='.*.group' --exclude='.*.claim')
tar -czf "$archive" "${excludes[@]}" -C results "$preset" || fail "the archive could not be written" 1
if (($(stat -c %s "$archive") > max_bytes)); then
    say "the whole folder packs past 16 MiB; the archive holds only the runs finished by this call"
    mapfile -t new < <(cd results && find "$preset/runs" -mindepth 2 -maxdepth 2 -name result.json \
        -newer "$marker" -printf '%h\n')
    tar -czf "$archive" "${excludes[@]}" -C results "$preset/sweep.json" "${new[@]}" || fail "the archive could not be written" 1
fi
rm -f "$marker"
say "archive $archive: $(stat -c %s "$archive") bytes, $(find "$results/runs" -mindepth 2 -maxdepth 2 -name result.json | wc -l) finished runs in $results"
