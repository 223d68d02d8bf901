#!/usr/bin/env bash
# rt_real_sqlite: the sqlite3 shell on an in-memory database: a table filled with a recursive CTE,
# an index, aggregate and grouped queries. Runs natively, recorded without -L, and recorded with
# -L = a quarter of the unlimited run's peak resident bytes (real_program in lib.sh): output
# identical to the native run, exit 0, evictions > 0, check_stats invariants.
# Default 300,000 rows (~40 MB); FAULTLINE_TEST_LONG=1: 600,000 rows.
. "$(dirname "$0")/../lib.sh"
need_cmd sqlite3
if [ "$LONG" = 1 ]; then rows=600000; else rows=300000; fi

"$ROOT/bench/sqlite_workload.sh" "$rows" all >"$WORK/queries.sql" || fail "bench/sqlite_workload.sh failed"

real_program sqlite 2048 sqlite3 -bail :memory: ".read $WORK/queries.sql"
