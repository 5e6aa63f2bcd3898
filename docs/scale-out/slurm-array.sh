#!/usr/bin/env bash
# Slurm array job: one shard of a swex benchmark run per array task.
#
#   sbatch --array=0-7 docs/scale-out/slurm-array.sh          # 8 shards
#   # when all tasks are done:
#   swex merge results/shards/*/*/*.jsonl --bench bench.jsonl -o 'results/{explorer}/top{k}.jsonl'
#
# Every task reads the same benchmark file and snapshots (a shared file system), and writes its own
# files (`{shard}` in --output), so tasks never write to the same file. A task that dies is
# rerun with the same command: --resume runs only its missing rows.
#SBATCH --job-name=swex-bench
#SBATCH --cpus-per-task=4
#SBATCH --mem=8G
#SBATCH --time=04:00:00
#SBATCH --output=logs/swex-bench-%A-%a.log
set -euo pipefail

SHARDS=${SLURM_ARRAY_TASK_COUNT:?run as an array job: sbatch --array=0-N}
SHARD=${SLURM_ARRAY_TASK_ID:?run as an array job}
BENCH=${BENCH:-bench.jsonl}
REPOS=${REPOS:-repos}
EXPLORERS=${EXPLORERS:-bm25-ref,tfidf-ref,oracle,random}
TOPK=${TOPK:-5,10,20}
SWEX=${SWEX:-swex}

# The engine's index cache (for explorers that use the engine's indexes) may be shared: entries
# are content-addressed and written atomically.
export SWEX_CACHE_DIR=${SWEX_CACHE_DIR:-$HOME/.cache/swex}

"$SWEX" bench \
  --bench "$BENCH" --repos "$REPOS" \
  --explorers "$EXPLORERS" --top-k "$TOPK" \
  --workers "${SLURM_CPUS_PER_TASK:-1}" \
  --shard "$SHARD/$SHARDS" \
  --output 'results/shards/{shard}/{explorer}/top{k}.jsonl' \
  --resume --plain
