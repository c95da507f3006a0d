"""Against the libraries: ratio to cuDNN, the best row per layer and N, TFLOP/s."""

from ..io import ANCHOR_FAMILY, fnum, fx, md_table, ok
from ..speedups import anchor_rows, ours_over_cudnn


def section(c):
    d, w, fig = c.d, c.w, c.fig
    peak = c.peak
    # --- ratio to cuDNN
    w("## Ratio to cuDNN")
    w("")
    if anchor_rows(d):
        w("ours / cuDNN = the variant's kernel_ms / the fastest cuDNN row's (`cudnn-<class>` or its space-to-depth "
          "row), for the same layer, N, memory mode, precision class and layout; below 1 is faster than cuDNN.")
        w("")
        for n in d.main_Ns:
            body, used = [], []
            for v in d.variants:
                rs = [d.getok(l, n, v) for l in d.layers]
                vals = [ours_over_cudnn(d, r) if r else None for r in rs]
                if any(x is not None for x in vals):
                    used += [r for r in rs if r]
                    body.append([d.label(v), d.precision.get(v, "")] + [fnum(x) for x in vals])
            if not body:
                continue
            w(f"### Ratio to cuDNN, N = {n}")
            w("")
            w(md_table(["variant", "precision"] + d.layers, body, ["l", "l"] + ["r"] * len(d.layers)))
            w("")
            w(d.provenance(used, f"N = {n}"))
            w("")
    else:
        w(f"No cuDNN rows (family `{ANCHOR_FAMILY}`) in this data, so no ratio to cuDNN.")
        w("")
    fig("vs_cudnn.png", "ratio to cuDNN")

    # --- best
    w("## Best variant per layer and batch size")
    w("")
    if d.has_algo:
        w("Fastest PASS row (kernel time, any memory mode and precision) per layer and N, and the fastest fp32 "
          "row; TFLOP/s = GFLOP / kernel_ms and % of the ceiling of the row's own precision class (peak_tflops, "
          "measured in the sweep). `copies` is h2d + d2h of that row. TFLOP/s always counts the direct "
          "convolution's 2·N·M·E·F·C·R·S, so Winograd and FFT rows (effective TFLOP/s) can pass their ceiling. "
          "Batch sizes outside the main sweep are listed where two or more variants ran them.")
    else:
        w("Fastest PASS row (kernel time, any memory mode and precision) per layer and N, and the fastest fp32 "
          f"row; TFLOP/s = GFLOP / kernel_ms and % of the fp32 FMA ceiling ({peak}) measured in the sweep. "
          "`copies` is h2d + d2h of that row. Above the fp32 ceiling means a faster precision (tf32, "
          "fp16 tensor cores) or an algorithm that does fewer multiplications than a direct convolution "
          "(cuDNN's FFT and Winograd); TFLOP/s always counts the direct convolution's 2·N·M·E·F·C·R·S. "
          "Batch sizes outside the main sweep are listed where two or more variants ran them.")
    w("")
    body, used = [], []
    for l in d.layers:
        for n in d.Ns:
            rs = [r for r in d.rows if r["layer"] == l and r["N"] == n and ok(r)]
            if not rs or (n not in d.main_Ns and len({r["variant"] for r in rs}) < 2):
                continue
            b = min(rs, key=lambda r: r["kernel_ms"])
            f32 = [r for r in rs if r.get("precision") == "fp32"]
            bf = min(f32, key=lambda r: r["kernel_ms"]) if f32 else None
            used += [b] + ([bf] if bf else [])
            cp = (b["h2d_ms"] or 0) + (b["d2h_ms"] or 0) if b["h2d_ms"] is not None else None
            row = [l, n, f"{b['variant']} · {b['memory']}", b.get("precision", ""), fnum(b["kernel_ms"]),
                   fnum(cp), fnum(b["tflops"]), fnum(b["pct_peak"]), fx(b["speedup_kernel"])]
            if bf is None:
                row += ["—", "—", "—"]
            elif bf is b:
                row += ["(same)", "", ""]
            else:
                row += [f"{bf['variant']} · {bf['memory']}", fnum(bf["kernel_ms"]), fnum(bf["pct_peak"])]
            body.append(row)
    w(md_table(["layer", "N", "best variant", "precision", "kernel ms", "copies ms", "TFLOP/s", "% of peak",
                "speedup", "best fp32", "fp32 ms", "fp32 % of peak"], body,
               ["l", "r", "l", "l", "r", "r", "r", "r", "r", "l", "r", "r"]))
    w("")
    w(d.provenance(used))
    w("")

    w("## TFLOP/s against the fp32 ceiling")
    w("")
    w("Achieved TFLOP/s of every PASS row in its default memory mode; the dashed line is the fp32 FMA ceiling "
      "measured in the same sweep (fp16 and tf32 rows can pass it: their own ceilings are higher).")
    w("")
    fig("tflops.png", "TFLOP/s")
