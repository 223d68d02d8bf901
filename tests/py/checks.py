"""checks.py: what the tests' Python checks share (tests/lib.sh puts this folder on PYTHONPATH).

check(ok, what) prints "ok WHAT" or "FAIL: WHAT" and keeps each failure in `errors`; a check
script ends with sys.exit(1 if errors else 0). Import the list, never rebind it."""

errors = []


def check(ok, what):
    print(("ok " if ok else "FAIL: ") + what)
    if not ok:
        errors.append(what)
    return ok
