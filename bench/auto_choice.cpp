// The auto-<class> rungs' choice: auto_choice.hpp says what it chooses and how.
#include "auto_choice.hpp"

#include "tuner.hpp"

#include <algorithm>
#include <iomanip>
#include <sstream>

namespace cs::gpu {
namespace {

constexpr int kMsDigits = 4;
std::string ms_text(double ms) {
    std::ostringstream o;
    o << std::fixed << std::setprecision(kMsDigits) << ms << " ms";
    return o.str();
}

}  // namespace

std::string pick_label(const AutoPick& p) {
    const std::string c = axis_config(*p.variant, p.axes).str();
    return p.variant->name + (c.empty() ? "" : " " + c);
}

// Beyond the tile, the axes the heuristic also walks (the rest stay at each plan's own choice):
// the launch, a GEMM after an input transform as its programmatic dependent; the tile
// scheduler, where the plan's own rule would split K over few tiles that data-parallel runs
// faster (ResNet's 1x1 layers at N=1, results/h200/networks/n1_small_tiles.csv.gz).
constexpr const char* kPricedAxes[] = {"launch", "scheduler"};

std::vector<AutoPick> heuristic_picks(Precision cls, const Problem& p, const cudaDeviceProp& prop) {
    Problem base = p;
    base.axes = {};
    // the rows tune may choose are the rows an auto row may run
    const auto rows = tune_rows(TuneTask{p.layer, p.N, cls, p.layout}, prop);
    std::vector<AutoPick> priced;
    const auto keep = [&](const Variant* v, const Problem& q, const Estimate& e) {
        priced.push_back({v, q.axes, AutoPath::heuristic, e.ms,
                          "heuristic: predicted " + ms_text(e.ms) + " (" + e.how + ")", e.compute_ms});
    };
    // Each row's plans, one a tile, first; then each further axis one value at a time beside a
    // plan's own choice, kept only where the model prices it differently (else it is the same
    // configuration to the model). A price tie keeps the earlier: a rung's own configuration
    // (hopper-sk's stream-K) before the same one reached through another rung's axis.
    struct Base {
        const Variant* v;
        Problem q;
        double ms;
    };
    std::vector<Base> bases;
    for (const Variant* v : rows) {
        if (!v->estimate) continue;
        const Axis* tiles = v->axis("tile");
        const std::size_t n = tiles ? tiles->values.size() : 1;
        for (std::size_t i = 0; i < n; ++i) {
            Problem q = base;
            if (tiles) q.axes.set.emplace_back(tiles->name, tiles->id(i));
            const auto plan_choice = v->estimate(q, prop);
            if (!plan_choice) continue;
            keep(v, q, *plan_choice);
            bases.push_back({v, q, plan_choice->ms});
        }
    }
    for (const Base& b : bases)
        for (const char* name : kPricedAxes) {
            const Axis* a = b.v->axis(name);
            for (std::size_t k = 0; a && k < a->values.size(); ++k) {
                Problem r = b.q;
                r.axes.set.emplace_back(a->name, a->id(k));
                const auto e = b.v->estimate(r, prop);
                if (e && e->ms != b.ms) keep(b.v, r, *e);
            }
        }
    std::stable_sort(priced.begin(), priced.end(), [](const AutoPick& a, const AutoPick& b) {
        return cheaper(a.ms, a.compute_ms, b.ms, b.compute_ms);
    });
    if (!priced.empty()) return priced;
    // no model prices this problem here: the class's supported rows, the last rung first
    std::vector<AutoPick> ladder;
    for (auto it = rows.rbegin(); it != rows.rend(); ++it)
        ladder.push_back({*it, {}, AutoPath::heuristic, std::numeric_limits<double>::quiet_NaN(),
                          "heuristic: no cost model prices this problem on this device; the class's last supported "
                          "rung"});
    return ladder;
}

AutoDecision auto_decide(Precision cls, const Problem& p, const cudaDeviceProp& prop, const Tuning& tuning,
                         std::optional<AutoPath> path, const RuntimeVersions& here) {
    AutoDecision d;
    const int sms = prop.multiProcessorCount;
    const TunedShape shape = tuned_shape(p.layer);
    if (path != AutoPath::heuristic) {
        if (tuning.choices_of_other_cards_only(prop.name, sms)) {
            d.notes.push_back(std::string("warning: the tuning file's choices are all of other cards, none of ") +
                              prop.name + " with " + std::to_string(sms) + " SMs: ignored");
        } else if (const TunedChoice* ch = tuning.choice(prop.name, sms, cls, shape, p.layout, p.N)) {
            const TuningCard* card = nullptr;
            for (const TuningCard& c : tuning.cards)
                for (const TunedChoice& x : c.choices)
                    if (&x == ch) card = &c;
            if (card && (card->cuda_runtime != here.cuda_runtime || card->driver != here.driver))
                d.notes.push_back("warning: the tuning file " + card->origin + " was made under CUDA " +
                                  card->cuda_runtime + ", driver " + card->driver + "; this process runs CUDA " +
                                  here.cuda_runtime + ", driver " + here.driver);
            Problem q = p;
            q.axes = ch->axes;
            AutoPick pick{ch->variant, ch->axes, AutoPath::tuned, ch->kernel_ms,
                          "tuned at N=" + std::to_string(ch->N) +
                              (ch->git_rev.empty() ? std::string() : " by " + ch->git_rev) + ": " +
                              ms_text(ch->kernel_ms) + " over " +
                              std::to_string(ch->tried) + " configurations" + (ch->complete ? "" : " (search cut short)")};
            if (const auto why = ch->variant ? ch->variant->supports(q, prop) : std::optional<std::string>("no row"))
                d.notes.push_back("the tuned choice " + pick_label(pick) + " does not run here (" + *why +
                                  "): the heuristic's instead");
            else if (auto err = axes_error(*ch->variant, ch->axes))
                d.notes.push_back("the tuned choice " + ch->variant->name + " has axis values it lacks (" + *err +
                                  "): the heuristic's instead");
            else
                d.picks.push_back(std::move(pick));
        }
        if (path == AutoPath::tuned) {
            if (d.picks.empty())
                d.notes.push_back("path=tuned: no tuned choice for this class, shape, layout and N within a factor of " +
                                  std::to_string(int(kTunedReach)) + " on " + prop.name);
            return d;
        }
    }
    for (auto& h : heuristic_picks(cls, p, prop)) d.picks.push_back(std::move(h));
    return d;
}

}  // namespace cs::gpu
