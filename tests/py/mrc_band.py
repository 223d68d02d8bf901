"""mrc_band.py: a `faultline mrc --format csv` prediction against measured refaults, by the rule
of record --mrc's accuracy: within 10 % of the measurement (or of `slack` refaults, for sizes
where next to nothing refaults), or, where the printed band is wider than that, the measurement
inside the band.

usage: python3 -m mrc_band CSV SLACK LABEL=SIZE_BYTES:MEASURED...
prints one "ok"/"FAIL:" line per size (checks.py); exits 1 on any failure."""
import csv
import sys

from checks import check, errors


def judge(row, measured, slack, label):
    pred, lo, hi = (float(row[k]) for k in ("predicted_refaults", "lower", "upper"))
    tolerance = max(0.10 * measured, slack)
    close = abs(pred - measured) <= tolerance
    wide = (hi - lo) / 2 > tolerance
    inside = lo <= measured <= hi
    err = 100.0 * (pred - measured) / measured if measured else 0.0
    how = "within %.0f" % tolerance if close else ("inside a band wider than that" if wide and inside else "outside")
    check(close or (wide and inside),
          "%s: predicted %.0f [%.0f, %.0f], measured %d (%+.1f %%): %s" % (label, pred, lo, hi, measured, err, how))


def main(argv):
    rows = {int(r["local_bytes"]): r for r in csv.DictReader(open(argv[1]))}
    slack = float(argv[2])
    for item in argv[3:]:
        label, spec = item.split("=", 1)
        size, measured = (int(x) for x in spec.split(":"))
        if size not in rows:
            check(False, "%s: no row for %d bytes" % (label, size))
            continue
        judge(rows[size], measured, slack, label)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
