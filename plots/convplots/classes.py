"""What a precision class counts as: read from the CSV, never derived again.

The rule is decided once, in C++ (bench/tolerance.hpp: anchor_class, ceiling_class) and written
into every row a sweep writes (columns `anchor_class`: the cuDNN rows a row is held against,
and `ceiling_class`: the measured class peak, peak_tflops, its pct_peak divides by). The figures and the report
read those columns (io.load puts them on every row).

For CSVs older than the two columns only, LEGACY_COUNTS_AS restates the same rule, here and
nowhere else in python: fp16acc (half accumulation) counts as fp16; every other class is its
own. It is never applied to a row that has the columns.
"""

LEGACY_COUNTS_AS = {"fp16acc": "fp16"}
COLUMNS = ("anchor_class", "ceiling_class")


def legacy_class(precision):
    """The anchor and ceiling class of a row from a CSV older than the columns."""
    return LEGACY_COUNTS_AS.get(precision, precision)


def fill(row):
    """Sets row["anchor_class"] and row["ceiling_class"]: the CSV's values, or for a CSV that
    lacks them the legacy rule; row["_class_from"] says which ("csv" or "legacy rule")."""
    have = all(row.get(c) for c in COLUMNS)
    for c in COLUMNS:
        if not row.get(c):
            row[c] = legacy_class(row.get("precision", ""))
    row["_class_from"] = "csv" if have else "legacy rule"
