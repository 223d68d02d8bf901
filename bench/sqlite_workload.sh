#!/usr/bin/env bash
# sqlite_workload.sh: prints the SQL of the sqlite3 workload that benchmarks and tests run on an
# in-memory database (sqlite3 -bail :memory: ".read FILE"): a table of ROWS rows filled by a
# recursive CTE, an index, then aggregate and grouped queries.
#
# usage: bench/sqlite_workload.sh ROWS [mrc|all]
#   mrc  three queries (make bench rows P1/P2, test probe_mrc_sqlite: the miss-ratio curve's checks)
#   all  five queries (default; make bench row 3a, test rt_real_sqlite)
set -eu
rows=${1:?usage: sqlite_workload.sh ROWS [mrc|all]}
case "$rows" in '' | *[!0-9]*) echo "sqlite_workload.sh: ROWS must be a number, not '$rows'" >&2; exit 2 ;; esac
set=${2:-all}
cat <<SQL
CREATE TABLE t(id INTEGER PRIMARY KEY, k INTEGER, v TEXT);
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < $rows)
INSERT INTO t SELECT x, (x * 7919) % 1000, printf('%08d-%s-%s', x, hex(x * x), hex(x * 7)) FROM c;
CREATE INDEX t_k ON t(k, v);
SELECT count(*), sum(k), sum(length(v)), max(v) FROM t;
SELECT k, count(*), min(v), max(v) FROM t GROUP BY k ORDER BY count(*) DESC, k LIMIT 5;
SQL
case $set in
mrc) ;;
all) echo "SELECT sum(id) FROM t WHERE k BETWEEN 100 AND 200;" ;;
*) echo "sqlite_workload.sh: unknown query set '$set' (mrc, all)" >&2; exit 2 ;;
esac
echo "SELECT count(DISTINCT substr(v, 10, 3)) FROM t;"
[ "$set" = all ] && echo "SELECT id, v FROM t ORDER BY v DESC LIMIT 3;"
exit 0
