#include "chain.hpp"

#include "chain_run.hpp"
#include "golden_chain.hpp"
#include "join.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace cs::cli {

using namespace detail;

CLI::App* add_chain_command(CLI::App& app, ChainArgs& a) {
    auto* c = app.add_subcommand(
        "chain", "run a chain table as a network (conv + bias + ReLU + pool, layer after layer, one CUDA graph): "
                 "ours and cuDNN's chain, round-robin, every layer's output checked against the chain golden files");
    c->add_option("--table", a.table.path,
                  "a chain table: a built-in table's name or a JSON file's path; default alexnet");
    c->add_option("--batch", a.batches, "batch sizes, comma separated (each needs its chain golden set)")
        ->delimiter(',')
        ->expected(1, -1);
    c->add_option("--classes", a.classes, "precision classes, comma separated: fp16, bf16, tf32, fp32")
        ->delimiter(',')
        ->expected(1, -1);
    c->add_option("--layout", a.layouts, "layouts, comma separated: nhwc, nchw (the chain keeps it between layers)")
        ->delimiter(',')
        ->expected(1, -1);
    c->add_option("--choice", a.choice,
                  "our convolutions: `auto` (auto-<class>: each layer's tuned or heuristic choice) or one variant "
                  "name that runs every layer");
    c->add_option("--sides", a.sides,
                  "the sides to run, comma separated: ours (a CUDA graph of our kernels), megakernel (the whole chain "
                  "as one persistent kernel: f16 and bf16, NHWC), cudnn")
        ->delimiter(',')
        ->expected(1, -1);
    c->add_option("--csv", a.csv, "write the rows (scope=chain and scope=layer) to this CSV file");
    c->add_option("--golden", a.golden, "root directory of the golden files (default: $CONVSTUDY_GOLDEN, else golden)")
        ->envname("CONVSTUDY_GOLDEN");
    c->add_option("--tuning", a.tuning,
                  "the tuning file auto-<class> takes (default: $CONVSTUDY_TUNING, else the built-in)");
    c->add_option("--warmup", a.warmup, "untimed runs of each side first")->check(CLI::Range(0, 1000));
    c->add_option("--repeats", a.repeats, "timed runs of each chain (at least 20 for a committed result)")
        ->check(CLI::Range(1, 100000));
    c->add_option("--tail-repeats", a.tail_repeats,
                  "timed runs behind the p99 (the timed runs become max(repeats, this)); default 200 at N=1, else 0")
        ->default_str("");
    c->add_option("--layer-repeats", a.layer_repeats, "timed runs of each layer's replay (0: no replay rows)")
        ->check(CLI::Range(0, 100000));
    c->add_flag("--no-flush", a.no_flush, "do not flush L2 before each timed run");
    c->add_flag("--no-ceilings", a.no_ceilings,
                "measure no cuBLAS ceilings (the rows' peak_tflops and pct_peak empty): a run that checks, as under "
                "compute-sanitizer, whose racecheck fails inside cuBLAS's GEMMs");
    c->add_flag("--no-pdl", a.no_pdl,
                "ours without programmatic dependent launches: each kernel after the one before has completed (the "
                "A/B of what PDL buys)");
    c->add_option("--megakernel-ctas", a.mega_ctas_per_sm, "the megakernel's CTAs per SM (fewer where they do not fit)")
        ->check(CLI::Range(1, 4));
    c->add_flag("--quiet", a.quiet, "no summary lines");
    return c;
}

namespace {

// The chain's FLOPs: its convolutions' (bias, ReLU and pool are not counted).
double chain_flops(const LayerTable& t, std::int64_t N) {
    double f = 0;
    for (const Layer& l : t.layers) f += l.flops(N);
    return f;
}

// The worst layer's error statistics (by max_rel_err) of a chain result's checked run.
gpu::ErrorStats worst_error(const gpu::ChainResult& c) {
    gpu::ErrorStats w;
    for (const auto& l : c.layers)
        if (l.err.nonfinite > w.nonfinite || l.err.max_rel_err > w.max_rel_err || w.compared == 0) w = l.err;
    return w;
}

std::vector<Row> rows_of(const LayerTable& t, std::int64_t N, gpu::Layout layout, const gpu::ChainResult& c) {
    std::vector<Row> rows;
    Row chain;
    chain.layer.name = "chain";
    chain.N = N;
    chain.variant = c.spec.variant;
    chain.layout = layout;
    chain.scope = Scope::chain;
    chain.chain_flops = chain_flops(t, N);
    gpu::RunResult& r = chain.result;
    r.status = c.status;
    r.reason = c.reason;
    r.check = c.layers.empty() ? "none" : "golden";
    r.err = worst_error(c);
    r.threshold = c.threshold;
    r.kernel = c.chain;
    r.setup_ms = c.setup_ms;
    r.workspace_bytes = c.workspace_bytes;
    r.device_bytes = c.device_bytes;
    r.algo = c.spec.side == gpu::ChainSide::megakernel ? "megakernel" : "chain";
    r.checked_runs = c.status == gpu::Status::pass ? 2 : 1;
    r.order_seed = c.order_seed;
    std::vector<std::string> parts{c.graph ? "one CUDA graph" : "stream launches"};
    if (c.spec.side == gpu::ChainSide::ours)
        parts.push_back(c.pdl ? "programmatic dependent launches" : "no programmatic dependent launch");
    if (!c.detail.empty()) parts.push_back(c.detail);
    if (c.spec.side != gpu::ChainSide::megakernel)
        for (const auto& l : c.layers) parts.push_back(l.layer + ": " + (l.config.empty() ? l.detail : l.config));
    r.detail = join(parts, " | ");
    rows.push_back(chain);
    for (std::size_t i = 0; i < c.layers.size() && i < t.layers.size(); ++i) {
        const auto& lr = c.layers[i];
        if (lr.replay.count == 0) continue;
        Row row;
        row.layer = t.layers[i];
        row.N = N;
        row.variant = c.spec.variant;
        row.layout = layout;
        row.scope = Scope::layer;
        gpu::RunResult& q = row.result;
        q.status = c.status;
        q.check = "golden";
        q.err = lr.err;
        q.threshold = c.threshold;
        q.kernel = lr.replay;
        q.config = lr.config;
        q.detail = lr.detail + " (the layer's part of the chain replayed alone: its convolution, epilogue and pool; "
                               "the layers' sum is not the chain's time)";
        q.algo = "chain-layer";
        q.order_seed = c.order_seed;
        rows.push_back(std::move(row));
    }
    return rows;
}

void print_summary(const LayerTable& t, std::int64_t N, gpu::Precision p, gpu::Layout layout,
                   const std::vector<gpu::ChainResult>& res) {
    for (const auto& c : res) {
        std::printf("chain %s N=%lld %s %s %-6s %-18s ", t.name.c_str(), static_cast<long long>(N),
                    std::string(gpu::to_string(p)).c_str(), std::string(gpu::to_string(layout)).c_str(),
                    std::string(gpu::to_string(c.spec.side)).c_str(), c.spec.variant->name.c_str());
        if (c.status != gpu::Status::pass) {
            std::printf("%s: %s\n", std::string(gpu::to_string(c.status)).c_str(), c.reason.c_str());
            continue;
        }
        std::printf("PASS %.4f ms (p10 %.4f, p90 %.4f, min %.4f", c.chain.median, c.chain.p10, c.chain.p90,
                    c.chain.min);
        if (c.tail_count > 0) std::printf(", p99 %.4f over %d", c.p99_ms, c.tail_count);
        std::printf(")%s\n", c.graph ? "" : " without a CUDA graph");
    }
    const auto pass = [](const gpu::ChainResult& c) { return c.status == gpu::Status::pass; };
    auto passed = [&](gpu::ChainSide side) {
        return std::find_if(res.begin(), res.end(), [&](const auto& c) { return c.spec.side == side && pass(c); });
    };
    const auto cudnn = passed(gpu::ChainSide::cudnn);
    for (const auto side : {gpu::ChainSide::ours, gpu::ChainSide::megakernel}) {
        const auto ours = passed(side);
        if (ours != res.end() && cudnn != res.end())
            std::printf("chain %s N=%lld: %s / cuDNN's chain = %.3f\n", t.name.c_str(), static_cast<long long>(N),
                        std::string(gpu::to_string(side)).c_str(), ours->chain.median / cudnn->chain.median);
    }
}

const gpu::Variant& registry_row(const std::string& name) {
    const gpu::VariantRef v = find_variant_or_throw(name);
    return *v.variant;
}

}  // namespace

int cmd_chain(const ChainArgs& a) {
    check_batches(a.batches);
    const LayerTable table = a.table.load();
    if (auto why = chain_error(table))
        throw Error("chain: table '" + table.name + "' is not a chain: " + *why +
                    " (a chain's layers run one after another, each on the previous one's pooled output)");
    std::vector<gpu::Precision> classes;
    for (const auto& s : a.classes) {
        const auto p = gpu::parse_precision(s);
        if (!p || *p == gpu::Precision::fp16acc)
            throw Error("chain: --classes: '" + s + "' is not one of fp16, bf16, tf32, fp32");
        classes.push_back(*p);
    }
    std::vector<gpu::Layout> layouts;
    for (const auto& s : a.layouts) layouts.push_back(parse_layout_or_throw(s));
    std::vector<gpu::ChainSide> sides;
    for (const auto& s : a.sides) {
        const auto side = gpu::parse_chain_side(s);
        if (!side) throw Error("chain: --sides: '" + s + "' is not ours, megakernel or cudnn");
        sides.push_back(*side);
    }
    // Our variant: auto-<class>, or one named row of each class asked for.
    const gpu::Variant* named = nullptr;
    if (a.choice != "auto") {
        named = &registry_row(a.choice);
        if (classes.size() != 1 || named->precision != classes.front())
            throw Error("chain: --choice " + a.choice + " is a " + std::string(gpu::to_string(named->precision)) +
                        " row: give --classes " + std::string(gpu::to_string(named->precision)) + " alone");
        if (named->library) throw Error("chain: --choice " + a.choice + " is a library's row; cuDNN is --sides cudnn");
    }
    if (!a.csv.empty()) check_writable(a.csv);
    // Every golden set first, before the device: a missing one is bad input on any machine.
    for (const auto N : a.batches) (void)load_chain_golden(a.golden, table, N, std::nullopt, false);
    TimingOpts topt;
    topt.tuning = a.tuning;
    const std::optional<gpu::Tuning> tuning = load_tuning(topt);
    gpu::EngineChoices engines;
    gpu::RunOptions ro = topt.to_run_options(engines, tuning ? &*tuning : nullptr);
    ro.warmup = a.warmup;
    ro.repeats = a.repeats;
    ro.flush_l2 = !a.no_flush;
    auto ctx = open_device();
    RunMeta meta = make_meta(*ctx, ro, !a.no_ceilings, kDefaultSeed, DataScales{});
    meta.table = table.name;
    std::vector<Row> rows;
    bool any_fail = false;
    for (const auto N : a.batches) {
        const ChainGoldenSet g = load_chain_golden(a.golden, table, N);
        meta.seed = g.seed;
        for (const auto p : classes) {
            std::vector<gpu::ChainSideSpec> specs;
            for (const auto side : sides) {
                // The megakernel's row is auto-<class>: it is our batch-1 choice, whatever --choice names.
                const std::string cls(gpu::to_string(p));
                const std::string name = side == gpu::ChainSide::cudnn                ? "cudnn-" + cls
                                         : named && side == gpu::ChainSide::ours ? named->name
                                                                                 : "auto-" + cls;
                specs.push_back({side, &registry_row(name)});
            }
            for (const auto layout : layouts) {
                gpu::ChainOptions o;
                o.warmup = a.warmup;
                o.repeats = a.repeats;
                o.tail_repeats = a.tail_repeats >= 0 ? a.tail_repeats : (N == 1 ? 200 : 0);
                o.layer_repeats = a.layer_repeats;
                o.flush_l2 = !a.no_flush;
                o.pdl = !a.no_pdl;
                o.mega_ctas_per_sm = a.mega_ctas_per_sm;
                o.state = ro;
                const gpu::ChainHostData hd{g.data.N, &g.data.input, &g.data.weights, &g.data.bias};
                const auto res = gpu::run_chain(*ctx, table, hd, g.outputs, p, layout, specs, o);
                for (const auto& c : res) {
                    any_fail |= c.status == gpu::Status::fail || c.status == gpu::Status::error;
                    for (auto& r : rows_of(table, N, layout, c)) rows.push_back(std::move(r));
                }
                if (!a.quiet) print_summary(table, N, p, layout, res);
                if (!a.csv.empty()) write_csv(a.csv, meta, rows);
            }
        }
    }
    return any_fail ? kExitFail : 0;
}

}  // namespace cs::cli
