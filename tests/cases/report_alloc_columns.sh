#!/usr/bin/env bash
# report_alloc_columns: `faultline report --by alloc`'s per-site columns (issue 13, "wanted
# alongside") on tests/planted/alloc_heavy, whose sites are known by construction (N = 200,000):
#   churn_one   allocated N objects, 76 N bytes;
#   batch_fill  allocated 100 * floor(N / 1000) objects of 64 bytes;
#   make_array  1 object of 8 MiB, every page written: objects_faulted 1, its faults = the row's
#               faults (no local limit: all first touches), faults_per_mib = faults / 8.
# Every row's allocated, alloc_bytes, objects_faulted and site_faults equal the sites file's
# records (read here with Python, by the header's sizes); faults_per_mib = site_faults / MiB;
# rows without a site (<unallocated>) have empty fields; table, CSV and JSON agree.
. "$(dirname "$0")/../lib.sh"
need_faultline
need_planted alloc_heavy

N=200000
expect_record heavy -M 256 -- "$PLANTED/alloc_heavy" "$N"
for fmt in csv json table; do
	"$FAULTLINE" report "$WORK/heavy" --by alloc --top 0 --ranges 0 --format "$fmt" >"$WORK/alloc.$fmt" 2>"$WORK/alloc.$fmt.err" ||
		fail "report --by alloc --format $fmt: $(cat "$WORK/alloc.$fmt.err")"
done
"$FAULTLINE" report --help | grep -q 'faults/MiB \[faults_per_mib\]' || fail "report --help does not explain faults/MiB"

"$PY" - "$WORK" "$N" <<'PYEOF' || fail "the --by alloc columns are wrong"
import csv, glob, json, os, struct, sys
work, n = sys.argv[1], int(sys.argv[2])
from checks import check, errors

sites = []
for path in glob.glob(os.path.join(work, "heavy", "*", "sites")):
    data = open(path, "rb").read()
    hsize, rsize = struct.unpack_from("<II", data, 16)
    for off in range(hsize, len(data), rsize):
        stack, flags, key, allocs, frees, nbytes, peak, live, faulted, faults = struct.unpack_from("<IIQQQQQQQQ", data, off)
        sites.append(dict(allocs=allocs, bytes=nbytes, faulted=faulted, faults=faults))
check(len(sites) >= 3, "the sites file has %d sites" % len(sites))

rows = list(csv.DictReader(open(os.path.join(work, "alloc.csv"))))
by = {r["function"]: r for r in rows}
for name in ("churn_one", "batch_fill", "make_array"):
    check(name in by, "a %s row" % name)
if errors:
    sys.exit(1)
ints = lambda r, k: int(r[k])
churn, batch, array = by["churn_one"], by["batch_fill"], by["make_array"]
check((ints(churn, "allocated"), ints(churn, "alloc_bytes")) == (n, 76 * n),
      "churn_one allocated %s objects, %s bytes (want %d, %d)" % (churn["allocated"], churn["alloc_bytes"], n, 76 * n))
want = 100 * (n // 1000)
check((ints(batch, "allocated"), ints(batch, "alloc_bytes")) == (want, 64 * want),
      "batch_fill allocated %s objects, %s bytes (want %d, %d)" % (batch["allocated"], batch["alloc_bytes"], want, 64 * want))
check((ints(array, "allocated"), ints(array, "alloc_bytes"), ints(array, "objects_faulted")) == (1, 8 << 20, 1),
      "make_array: %s object, %s bytes, %s faulted (want 1, 8 MiB, 1)" % (array["allocated"], array["alloc_bytes"], array["objects_faulted"]))
check(ints(array, "site_faults") == ints(array, "faults") >= 2048,
      "make_array: site_faults %s = the row's faults %s >= 2048" % (array["site_faults"], array["faults"]))
check(abs(float(array["faults_per_mib"]) - ints(array, "site_faults") / 8) < 0.001,
      "make_array: faults_per_mib %s = site_faults / 8" % array["faults_per_mib"])

# Every row with sites: its numbers are sums of sites file records; per MiB is faults / MiB.
multiset = sorted((s["allocs"], s["bytes"], s["faulted"], s["faults"]) for s in sites)
for r in rows:
    if r["allocated"] == "":
        check(r["alloc_bytes"] == r["objects_faulted"] == r["site_faults"] == r["faults_per_mib"] == "",
              "row %s without sites: empty columns" % r["function"])
        continue
    got = (ints(r, "allocated"), ints(r, "alloc_bytes"), ints(r, "objects_faulted"), ints(r, "site_faults"))
    if got in multiset:
        multiset.remove(got)
    else:
        check(False, "row %s %r is not one sites record" % (r["function"], got))
    mib = ints(r, "alloc_bytes") / 1048576
    if mib:
        check(abs(float(r["faults_per_mib"]) - round(ints(r, "site_faults") / mib, 3)) < 0.0011,
              "row %s: faults_per_mib %s = %d / %.3f" % (r["function"], r["faults_per_mib"], ints(r, "site_faults"), mib))

# JSON carries the same values; the table the same columns.
js = json.load(open(os.path.join(work, "alloc.json")))
keys = ("allocated", "alloc_bytes", "objects_faulted", "site_faults")
for r, j in zip(rows, js):
    want = tuple(None if r[k] == "" else int(r[k]) for k in keys)
    check(tuple(j[k] for k in keys) == want, "JSON row %s: %r" % (r["function"], want))
head = next(l for l in open(os.path.join(work, "alloc.table")) if l.startswith("# ") and "faults/MiB" in l)
cols = head[2:].split()
check(cols[cols.index("allocs"):cols.index("faults/MiB") + 1] ==
      ["allocs", "allocated", "alloc-MiB", "obj-faulted", "site-faults", "faults/MiB"], "table columns: %s" % cols)
for line in open(os.path.join(work, "alloc.table")):
    t = line.split()
    if "make_array" in t:
        at = cols.index("allocs")
        want = ["1", "1", "8.0", "1", "{:,}".format(int(array["site_faults"])), "%.1f" % (int(array["site_faults"]) / 8)]
        check(t[at:at + 6] == want, "table row make_array: %s (want %s)" % (t[at:at + 6], want))
sys.exit(1 if errors else 0)
PYEOF
echo "ok report --by alloc per-site columns"
