# Shared by the clustering article's plans: a small log table written by `layoutbench run`.
# LAYOUTBENCH names the command (default: layoutbench on PATH); $1 is an empty work folder.
set -euo pipefail
LB=${LAYOUTBENCH:-layoutbench}
work=${1:?usage: $0 WORK_DIR}
mkdir -p "$work"

# write_table MODE: six batches through Option 2 with the engine's own clustering MODE, no
# harness maintenance; prints the table's path.
write_table() {
  cat > "$work/scenario.yaml" <<YAML
name: article_plan
description: the clustering article's test plan, scaled down
workload: {seed: 7, num_batches: 6, batch_records: 1500, partition_granularity: day, num_partitions: 2}
engines:
  # sizes scaled down ~150x; Hudi's fixed ~431 KB footer bloom filter per file is not, so it is off here
  - {name: option2, kind: clustering, config: {mode: $1, inline_max_commits: 3, sort_columns: [service, ts],
                                               bloom_filter: false}}
sizing: {small_file_limit_mb: 0.6, target_file_mb: 0.8, max_file_mb: 0.8, row_group_rows: 1000, cleaner_commits_retained: 2}
maintenance: {mode: none, final: false}
queries: {warm_runs: 1, checkpoint_every: 6}
isolation: {enabled: false}
spark: {master: "local[2]"}
YAML
  local run_dir
  run_dir=$("$LB" run "$work/scenario.yaml" --out "$work/results" | tail -n 1)
  echo "$run_dir/tables/option2"
}
