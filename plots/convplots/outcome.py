"""What became of each output of plot.py: drawn (and where), skipped (and why) or failed."""

import os
import sys
import traceback


def attempt(fn, *args):
    """fn(*args) -> (res, info); returns (res, info, None), or (None, None, traceback) when it raised."""
    try:
        res, info = fn(*args)
        return res, info, None
    except Exception:  # keep going: the other figures and the report still get written
        return None, None, traceback.format_exc()


def announce(name, out, parts, info, error, failed):
    """Prints the files of figure `name` (parts), or why it was skipped (info), or its failure's
    traceback (error, whose name then goes into failed)."""
    if error:
        print(error, file=sys.stderr, end="")
        failed.append(name)
        print(f"plot.py: {name}: FAILED (traceback above)")
    elif parts:
        for p in parts:
            print(f"wrote {os.path.join(out, p)}")
    else:
        print(f"skipped {name}: {info}")


def write_report(name, fn, failed):
    """Writes a report with fn() (its path printed); a failure's name goes into failed."""
    _, _, error = attempt(lambda: (print(f"wrote {fn()}"), None))
    if error:
        print(error, file=sys.stderr, end="")
        failed.append(name)
