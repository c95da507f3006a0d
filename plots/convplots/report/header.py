"""The report's provenance: which CSVs, device, CPU, what was swept, how to read the tables."""

from ..io import date_range, md_table


def counts(rows):
    return ", ".join(f"{s} {sum(r['status'] == s for r in rows)}" for s in ("PASS", "UNCHECKED", "FAIL", "SKIP", "ERROR")
                     if any(r["status"] == s for r in rows))


def section(c):
    d, w = c.d, c.w
    first = d.rows[0]
    files = [p for p in c.inputs if any(r["_src"] == p for r in d.rows)]
    body = []
    for p in files:
        rs = [r for r in d.rows if r["_src"] == p]
        body.append([f"`{p}`", len(rs), len({r["_variant"] for r in rs}), counts(rs), date_range(rs),
                     ", ".join(sorted({r.get("git_rev", "") for r in rs})),
                     ", ".join(sorted({f"{r.get('cuda_runtime', '')} / {r.get('driver', '')}" for r in rs}))])
    w("## Where the numbers come from")
    w("")
    w(md_table(["CSV", "rows used", "variants", "status", "sweep date", "git rev", "CUDA / driver"], body,
               ["l", "r", "r", "l", "l", "l", "l"]))
    w("")
    cpu_models = sorted({f"{r.get('cpu_model', '')} ({r.get('cpu_threads', '')} threads)" for r in d.rows
                         if r.get("cpu_model")})
    names = {r["_variant"] for r in d.rows}
    w(f"- Device: {d.device} (compute capability {first.get('cc', '?')}, {first.get('sms', '?')} SMs); "
      f"fp32 FMA ceiling measured in the sweep: {c.peak}.")
    w(f"- CPU reference (the denominator of every speedup): {', '.join(cpu_models) or 'unknown'}.")
    w(f"- Layers: {', '.join(d.layers)}. Batch sizes: {', '.join(map(str, d.Ns))} "
      f"(main sweep: {', '.join(map(str, d.main_Ns))}).")
    w(f"- {len(names)} variants in {len(set(d.families.values()))} families, {len(d.variants)} (variant, layout) "
      f"pairs; rows used (a later CSV's row replaces an earlier one of the same key): {counts(d.rows)}.")
    w("- Memory mode: each variant is shown in pageable memory (the study's Mcpy) when it ran there, "
      "otherwise in the mode it ran in, marked `[mode]`; tables list the other modes a variant ran in as "
      "extra rows `variant · mode`.")
    w("- Variants are ordered by family (in the order the CSV first shows them), then by name. Times are "
      "medians of the timed repeats (ms).")
    w("")
    w("Contents: [kernel time](#kernel-time) · "
      "[speedup](#speedup-over-the-cpu) · [copy overhead](#copy-overhead) · [all layers](#all-layers-together) · "
      "[scaling](#scaling-with-batch-size) · [coalescing](#coalesced-vs-uncoalesced-conv1) · "
      "[error](#error-by-variant) · [cuDNN](#ratio-to-cudnn) · [best](#best-variant-per-layer-and-batch-size) · "
      "[TFLOP/s](#tflops-against-the-fp32-ceiling) · [ceilings](#against-each-precision-classs-ceiling) · "
      "[ladders](#family-ladders) · [SKIP/FAIL](#skip-fail-and-error-rows) · [figures](#figures)")
    w("")
