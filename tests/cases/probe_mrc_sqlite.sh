#!/usr/bin/env bash
# probe_mrc_sqlite: issue 15's accuracy check of the one-run miss-ratio curve on a real program, at
# record --mrc's default settings. The sqlite3 shell fills an in-memory table of 100,000 rows,
# indexes and queries it (peak ~15 MiB; make bench row P1-sqlite runs the same). One
# `record --mrc` run gives the peak P and `faultline mrc --at P/8 --at P/4 --at P/2`; a real
# `record -L` at each size gives the measured refaults (clock, the default policy). The default
# cost budget (runtime/probe.c) takes the sample from 1 page in 2 down to its floor of ~32 pages
# here (3.5x a plain record's time instead of ~15x), so at each size the prediction must be within
# 10 % of the measurement or, where the printed band is wider than that, the band must hold it
# (2026-11-29: +13 % and +13 % at P/4 and P/2 inside bands of [7.8 k, 609 k] and [4.2 k, 20.6 k]).
# P/8 (~1.9 MiB) sits on a cliff of sqlite3's curve (13 k refaults at 3.8 MiB, 44 k at 1.9) where
# the sparse sample is off by half (21.8 k predicted): there the band must hold the measurement
# and the prediction must not be below the one at P/4. Under `make test-long` (FAULTLINE_TEST_LONG=1)
# a second recording without the budget (--mrc-budget 0: every sampled reuse seen, ~45x a plain
# record, about 45 s here) checks the model itself: within
# 10 % at P/4 (+0.7 % on 2026-11-29), 25 % at P/2 (+5.4 %; the clock's own refaults there vary
# from 8.5 k to 10.0 k between runs: +23 % against 8,543 in one CI run) and 50 % on the cliff at
# P/8 (-7.0 %).
# Also: the runs exit 0 with the native output, and meta.json records the default sampling
# (mrc_rate_denominator 2, at most mrc_max_pages 2048 pages, mrc_gap_pages 32, mrc_budget 4000).
. "$(dirname "$0")/../lib.sh"
need_faultline
need_cmd sqlite3

"$ROOT/bench/sqlite_workload.sh" 100000 mrc >"$WORK/q.sql" || fail "bench/sqlite_workload.sh failed"
cmd=(sqlite3 -bail :memory: ".read $WORK/q.sql")
run_native sql "${cmd[@]}"
expect_record sql-mrc -M 1G --mrc -- "${cmd[@]}"
same_output sql-mrc sql
check_stats sql-mrc --max $((1024 * MIB)) --procs 1
check_eq "meta mrc_rate_denominator" "$(meta_of sql-mrc mrc_rate_denominator)" 2
check_eq "meta mrc_gap_pages" "$(meta_of sql-mrc mrc_gap_pages)" 32
check_eq "meta mrc_max_pages" "$(meta_of sql-mrc mrc_max_pages)" 2048
check_eq "meta mrc_budget" "$(meta_of sql-mrc mrc_budget)" 4000

peak=$(stat_of sql-mrc peak_resident_bytes)
sizes=() at=()
for d in 8 4 2; do
	s=$(( (peak / d + 4095) / 4096 * 4096 ))
	sizes+=("$s") at+=(--at "${s}B")
done
"$FAULTLINE" mrc "$WORK/sql-mrc" --format csv "${at[@]}" >"$WORK/mrc.csv" 2>"$WORK/mrc.err" || fail "mrc exited $?: $(cat "$WORK/mrc.err")"
if [ "$LONG" = 1 ]; then # the same without the budget: every sampled reuse seen, the model's own accuracy
	expect_record sql-full -M 1G --mrc --mrc-budget 0 -- "${cmd[@]}"
	same_output sql-full sql
	"$FAULTLINE" mrc "$WORK/sql-full" --format csv "${at[@]}" >"$WORK/full.csv" 2>"$WORK/full.err" ||
		fail "mrc (full) exited $?: $(cat "$WORK/full.err")"
fi
for k in 0 1 2; do
	s=${sizes[$k]}
	expect_record "sql-L$k" -M 1G -L "${s}B" -- "${cmd[@]}"
	same_output "sql-L$k" sql
	measured=$(stat_of "sql-L$k" faults_refault)
	row=$(awk -F, -v s="$s" '$1 == s' "$WORK/mrc.csv")
	[ -n "$row" ] || fail "mrc --at ${s}B gave no row: $(cat "$WORK/mrc.csv")"
	next_row=$(awk -F, -v s="${sizes[$((k < 2 ? k + 1 : k))]}" '$1 == s' "$WORK/mrc.csv")
	if [ "$LONG" = 1 ]; then
		full=$(awk -F, -v s="$s" '$1 == s { print $2 }' "$WORK/full.csv")
		tolerance=$(echo "50 10 25" | cut -d' ' -f$((k + 1)))
		"$PY" -c 'import sys; p, m, t = float(sys.argv[1] or "nan"), int(sys.argv[2]), int(sys.argv[3]) / 100
sys.exit(0 if m > 0 and abs(p - m) <= t * m else 1)' "$full" "$measured" "$tolerance" ||
			fail "--mrc-budget 0 at 1/$((8 >> k)) of the peak: predicted ${full:-none}, measured $measured (beyond $tolerance %)"
		echo "ok --mrc-budget 0 at 1/$((8 >> k)) of the peak: predicted $full, measured $measured"
	fi
	if [ "$k" -gt 0 ]; then
		"$PY" -m mrc_band "$WORK/mrc.csv" 0 "1/$((8 >> k)) of the peak=$s:$measured" || fail "mrc prediction check failed"
		continue
	fi
	"$PY" - "$row" "$measured" "$next_row" <<'EOF' || fail "mrc prediction check failed"
import sys
from checks import check, errors
size, pred, lo, hi = (float(x) for x in sys.argv[1].split(','))
measured, next_pred = int(sys.argv[2]), float(sys.argv[3].split(',')[1])
check(measured > 0 and lo <= measured <= hi and pred >= next_pred,
      "1/8 of the peak (the cliff): predicted %.0f [%.0f, %.0f], measured %d: inside the band, not below the "
      "prediction at twice the size (%.0f)" % (pred, lo, hi, measured, next_pred))
sys.exit(1 if errors else 0)
EOF
done
