#!/usr/bin/env bash
# rt_real_sqlite: the sqlite3 shell on an in-memory database: a table filled with a recursive CTE,
# an index, aggregate and grouped queries. Runs natively, recorded without -L, and recorded with
# -L = a quarter of the unlimited run's peak resident bytes (real_program in lib.sh): output
# identical to the native run, exit 0, evictions > 0, check_stats invariants.
# Default 300,000 rows (~40 MB); FAULTLINE_TEST_LONG=1: 600,000 rows.
. "$(dirname "$0")/../lib.sh"
need_cmd sqlite3
if [ "$LONG" = 1 ]; then rows=600000; else rows=300000; fi

cat >"$WORK/queries.sql" <<SQL
CREATE TABLE t(id INTEGER PRIMARY KEY, k INTEGER, v TEXT);
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < $rows)
INSERT INTO t SELECT x, (x * 7919) % 1000, printf('%08d-%s-%s', x, hex(x * x), hex(x * 7)) FROM c;
CREATE INDEX t_k ON t(k, v);
SELECT count(*), sum(k), sum(length(v)), max(v) FROM t;
SELECT k, count(*), min(v), max(v) FROM t GROUP BY k ORDER BY count(*) DESC, k LIMIT 5;
SELECT sum(id) FROM t WHERE k BETWEEN 100 AND 200;
SELECT count(DISTINCT substr(v, 10, 3)) FROM t;
SELECT id, v FROM t ORDER BY v DESC LIMIT 3;
SQL

real_program sqlite 2048 sqlite3 -bail :memory: ".read $WORK/queries.sql"
