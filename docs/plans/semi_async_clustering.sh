#!/usr/bin/env bash
# The clustering article's semi-async plan: the writer schedules clustering inline
# (hoodie.clustering.schedule.inline=true, async off) and a separate job executes the plans:
#   HoodieClusteringJob --mode execute --base-path TABLE
# Usage: docs/plans/semi_async_clustering.sh WORK_DIR
source "$(dirname "$0")/common.sh"
table=$(write_table schedule_inline)
"$LB" inspect "$table" --json > "$work/before.json"   # plans scheduled by the writer, pending
while "$LB" service --mode execute --base-path "$table" \
    --hoodie-conf hoodie.clustering.plan.strategy.sort.columns=service,ts; do :; done 2> "$work/last.err" || true
grep -q "no pending clustering plan" "$work/last.err"  # stopped because every plan ran, not on an error
"$LB" inspect "$table" --json > "$work/after.json"
