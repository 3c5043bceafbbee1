#!/usr/bin/env bash
# The clustering article's async plan: the writer does no clustering; a separate job schedules
# and executes it, with the article's plan strategy keys:
#   HoodieClusteringJob --mode scheduleAndExecute --base-path TABLE --hoodie-conf k=v ...
# (Run after the writer: our writer lock admits one writer at a time, as Hudi does without a
# lock provider.) Usage: docs/plans/async_clustering.sh WORK_DIR
source "$(dirname "$0")/common.sh"
table=$(write_table manual)
"$LB" inspect "$table" --json > "$work/before.json"
"$LB" service --mode scheduleAndExecute --base-path "$table" \
  --hoodie-conf hoodie.clustering.plan.strategy.small.file.limit=629145 \
  --hoodie-conf hoodie.clustering.plan.strategy.target.file.max.bytes=838860 \
  --hoodie-conf hoodie.clustering.plan.strategy.sort.columns=service,ts \
  --hoodie-conf hoodie.cleaner.commits.retained=2
"$LB" inspect "$table" --json > "$work/after.json"
