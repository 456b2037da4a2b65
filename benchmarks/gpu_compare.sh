#!/bin/bash
# The GPU comparison as run on a lent machine: writes under $OUT (default ./gpu-out) the rows
# (gpu_compare.jsonl), the log, dwlib's profile (XPlane), XLA's optimised step (text) and
# PyTorch's compiled-kernel cache (so a second call on a fresh machine skips recompiling).
set -o pipefail
OUT=${OUT:-$PWD/gpu-out}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD TORCHINDUCTOR_CACHE_DIR=/tmp/inductor-cache
[ -f .devcache/inductor-cache.tgz ] && tar xzf .devcache/inductor-cache.tgz -C /tmp
export XLA_FLAGS="$EXTRA_XLA_FLAGS --xla_dump_to=/tmp/xla-dump --xla_dump_hlo_as_text --xla_dump_hlo_module_re=.*train_chunk.*"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,memory.total --format=csv | tee "$OUT/device.txt"
python3 -c "import jax, flax, optax, torch; print('jax', jax.__version__, 'flax', flax.__version__, 'optax', optax.__version__, 'torch', torch.__version__)" | tee -a "$OUT/device.txt"
(cd benchmarks && timeout "${BUDGET:-420}" python3 gpu_compare.py "$@" --out "$OUT") 2>&1 | tee "$OUT/log.txt"
[ -n "$SKIP_EXTRAS" ] && exit 0
x=$(find /tmp/dwlib-jax-trace-* -name '*.xplane.pb' 2>/dev/null | head -1); [ -n "$x" ] && gzip -c "$x" > "$OUT/dwlib.xplane.pb.gz"
[ -d /tmp/xla-dump ] && tar czf "$OUT/xla-dump.tgz" -C /tmp/xla-dump $(cd /tmp/xla-dump && ls | grep -E 'after_optimizations(\.txt|-buffer-assignment)' | head -8)
tar czf "$OUT/inductor-cache.tgz" -C /tmp inductor-cache 2>/dev/null
ls -la "$OUT"
