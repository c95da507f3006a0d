#!/usr/bin/env bash
# Figures and a markdown report from convstudy sweep CSVs:
#
#     plots/plot.sh CSV [MORE.csv ...] OUTDIR [--title-suffix TEXT]
#     plots/plot.sh --compare A.csv B.csv OUTDIR [--title-suffix TEXT]
#     plots/plot.sh --update-docs | --check-docs
#
# --update-docs rewrites the generated blocks of README.md and docs/*.md from the committed
# results (plots/convplots/docs.py); --check-docs exits 1 when one is stale.
#
# Finds a python3 that can import matplotlib and numpy ($CS_PLOT_PYTHON if set, then
# /usr/bin/python3, python3 on PATH, /opt/torch/.venv/bin/python3) and runs plots/plot.py,
# which writes the PNGs and OUTDIR/report.md (with --compare: run B against run A, the
# compare_*.png figures and OUTDIR/compare.md, whose verdicts are `convstudy compare --json`'s:
# $CONVSTUDY_EXE, else build/convstudy or build*/convstudy). The figures are drawn in parallel
# processes, one per CPU ($CS_PLOT_JOBS=1: one at a time). Exits 2 on bad arguments and 3 when
# no such python exists (with the apt-get line that installs one) or --compare finds no
# convstudy; otherwise plot.py's exit code.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

usage() {
    echo "usage: plots/plot.sh CSV [MORE.csv ...] OUTDIR [--title-suffix TEXT]" >&2
    echo "       plots/plot.sh --compare A.csv B.csv OUTDIR [--title-suffix TEXT]" >&2
    echo "       plots/plot.sh --update-docs | --check-docs" >&2
    exit 2
}

positional=()
options=()
compare=0
while [[ $# -gt 0 ]]; do
    case "$1" in
        --compare)
            compare=1
            shift
            ;;
        --title-suffix)
            [[ $# -ge 2 ]] || usage
            options+=("$1" "$2")
            shift 2
            ;;
        -h|--help)
            sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'
            exit 0
            ;;
        --update-docs|--check-docs)
            [[ $# -eq 1 ]] || usage
            # python3 only (no matplotlib): the blocks are text
            opt="${1#--}"; exec python3 "$here/docs.py" "--${opt%-docs}"
            ;;
        -*)
            echo "plot.sh: unknown option $1" >&2
            usage
            ;;
        *)
            positional+=("$1")
            shift
            ;;
    esac
done
[[ ${#positional[@]} -ge 2 ]] || usage
[[ $compare -eq 0 || ${#positional[@]} -eq 3 ]] || usage
outdir="${positional[-1]}"
csvs=("${positional[@]:0:${#positional[@]}-1}")
for c in "${csvs[@]}"; do
    if [[ ! -f "$c" ]]; then
        echo "plot.sh: $c: no such CSV file" >&2
        exit 2
    fi
done

candidates=()
[[ -n "${CS_PLOT_PYTHON:-}" ]] && candidates+=("$CS_PLOT_PYTHON")
candidates+=(/usr/bin/python3)
if p="$(command -v python3 2>/dev/null)"; then candidates+=("$p"); fi
candidates+=(/opt/torch/.venv/bin/python3)

python=""
for p in "${candidates[@]}"; do
    if [[ -x "$p" ]] && "$p" -c "import matplotlib, numpy" >/dev/null 2>&1; then
        python="$p"
        break
    fi
done
if [[ -z "$python" ]]; then
    echo "plot.sh: no python3 that can import matplotlib and numpy (tried: ${candidates[*]})." >&2
    echo "plot.sh: install them with: apt-get install python3-matplotlib python3-numpy" >&2
    echo "plot.sh: (or point CS_PLOT_PYTHON at a python3 that has them)" >&2
    exit 3
fi

mkdir -p "$outdir"
# matplotlib wants a writable config/cache folder; HOME may be read-only on build machines.
if [[ -z "${MPLCONFIGDIR:-}" && ! -w "${HOME:-/nonexistent}" ]]; then
    MPLCONFIGDIR="${TMPDIR:-/tmp}/convstudy-mpl-$(id -u)"
    export MPLCONFIGDIR
    mkdir -p "$MPLCONFIGDIR"
fi
if [[ $compare -eq 1 ]]; then
    # The verdicts are `convstudy compare --json`'s: $CONVSTUDY_EXE, else a built one in the tree.
    if [[ -z "${CONVSTUDY_EXE:-}" ]]; then
        for c in "$here/../build/convstudy" "$here"/../build*/convstudy; do
            if [[ -x "$c" ]]; then
                CONVSTUDY_EXE="$c"
                break
            fi
        done
    fi
    if [[ -z "${CONVSTUDY_EXE:-}" || ! -x "$CONVSTUDY_EXE" ]]; then
        echo "plot.sh: --compare takes its verdicts from convstudy compare: build convstudy" \
             "(cmake --build build --target convstudy) or point CONVSTUDY_EXE at one" >&2
        exit 3
    fi
    export CONVSTUDY_EXE
    exec "$python" "$here/plot.py" --compare "${csvs[@]}" --out "$outdir" "${options[@]}"
fi
exec "$python" "$here/plot.py" "${csvs[@]}" --out "$outdir" "${options[@]}"
