"""convplots: figures and a markdown report from convstudy result CSVs.

Modules, one per figure family:
    io          CSV loading (columns by header name, .csv or .csv.gz), the per-device Data view,
                ranked and per-variant views, number formats
    summary     the answer: fastest of ours / cuDNN per class, layer and N (README headline, report)
    headline    the headline figure (summary.png)
    draw        matplotlib helpers shared by the figures
    speedups    speedup per layer, all layers, batch scaling, coalescing pairs, ratio to cuDNN
    breakdowns  h2d / kernel / d2h per variant and memory mode
    errors      error against the golden output
    roofline    TFLOP/s against the fp32 ceiling and against each precision class's ceiling
    ladders     each family's ladder, rung by rung, per layer; the exact-fp32 ladder
    comparison  two runs side by side: B/A ratios with their spread (plot.py --compare)
    devices     two devices: which rows gain from B's memory (floors from each card's ceilings)
    report      report.md with the study's tables
    cli         the command line behind plots/plot.py (figures at most 1,600 px and 20 rows)
    docs        the generated blocks of README.md and docs/*.md (plots/docs.py --check/--update)
    lint        the prose-number lint over the documents and the report's fixed text
"""
