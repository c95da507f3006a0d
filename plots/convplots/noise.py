"""The spread of a timing and the noise band of two, for the comparison figures. The verdicts
themselves are `convstudy compare`'s (core/noise.hpp: judge() and Timing::lo/hi), which the
report reads from `compare --json`; band() restates that rule in ratio space for the shading.

A timing is (median, lo, hi): lo/hi are the 10th and 90th percentiles of the timed repeats
(columns <metric>_p10_ms / _p90_ms) when the CSV has them, else min and max (CSVs older than
the robust spread), else the median alone; the spread always contains the median. B is
*same* as A when either median lies inside the other side's [lo, hi]; else faster or slower.
"""

SPREAD_TEXT = "[p10, p90] of its timed repeats ([min, max] in CSVs without the p10/p90 columns)"


def timing(r, metric, ok):
    """(median, lo, hi) of `metric` ("kernel" or "total") of a PASS row r, else None."""
    if r is None or not ok(r):
        return None
    med = r.get(f"{metric}_ms")
    if med is None:
        return None
    p10, p90 = r.get(f"{metric}_p10_ms"), r.get(f"{metric}_p90_ms")
    if p10 is not None and p90 is not None:
        lo, hi = p10, p90
    else:
        lo, hi = r.get(f"{metric}_min_ms"), r.get(f"{metric}_max_ms")
    lo = min(lo, med) if lo is not None else med
    hi = max(hi, med) if hi is not None else med
    return med, lo, hi


def has_spread(rows):
    """Whether the rows carry the robust spread (the p10/p90 columns)."""
    return any(r.get("kernel_p10_ms") is not None for r in rows)


def band(a, b):
    """The ratios B / A that `convstudy compare` calls same: [lo, hi] around 1."""
    return min(a[1] / a[0], b[0] / b[2]), max(a[2] / a[0], b[0] / b[1])
