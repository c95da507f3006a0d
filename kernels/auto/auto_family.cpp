// The auto family: one rung, auto-<class> for fp16, bf16, tf32 and fp32 (the exact fp32-class
// rows), that runs what a user would: the tuned choice for the problem where a tuning file has
// one, else the heuristic's (bench/auto_choice.hpp). Its `path` axis forces one path, so that one
// sweep times both. The plan is the chosen row's plan, made with the chosen axis values; a
// choice whose plan SKIPs (what only planning knows) gives way to the next. The CSV's config
// says which path chose and what ("path=heuristic;row=hopper-tmastore-fp16;tile=...;..."), its
// detail why (the tuned measurement or the model's prediction) before the chosen plan's own.
// Host code: it runs other rows' plans and has no kernels of its own.
#include "auto_choice.hpp"
#include "device.hpp"
#include "error.hpp"
#include "families.hpp"
#include "tuning.hpp"

#include <cuda_runtime_api.h>

#include <cstdio>
#include <mutex>
#include <set>

namespace cs::gpu::variants {
namespace {

// The chosen row's plan, reporting which path chose it.
class AutoPlan : public Plan {
public:
    AutoPlan(const AutoPick& pick, std::unique_ptr<Plan> inner, std::string notes)
        : inner_(std::move(inner)), row_(pick.variant) {
        config_ = "path=" + std::string(name_of(kAutoPathNames, pick.path)) + ";row=" + row_->name;
        const std::string c = inner_->config().empty() ? axis_config(*row_, pick.axes).str() : inner_->config();
        if (!c.empty()) config_ += ";" + c;
        detail_ = "auto: " + pick_label(pick) + ", " + pick.how + (notes.empty() ? "" : "; " + notes);
    }
    void run(const DeviceIO& io, cudaStream_t s) override { inner_->run(io, s); }
    bool fuses_post_ops() const override { return inner_->fuses_post_ops(); }
    bool launches_dependent() const override { return inner_->launches_dependent(); }
    bool hold_weights(const void* w, cudaStream_t s) override { return inner_->hold_weights(w, s); }
    std::size_t workspace_bytes() const override { return inner_->workspace_bytes(); }
    std::string detail() const override {
        const std::string d = inner_->detail();
        return d.empty() ? detail_ : detail_ + "; " + row_->name + ": " + d;
    }
    double search_ms() const override { return inner_->search_ms(); }
    std::string algo() const override {
        const std::string a = inner_->algo();
        return a.empty() ? row_->algo : a;
    }
    std::string config() const override { return config_; }
    std::optional<std::string> run_error() const override { return inner_->run_error(); }
    std::optional<bool> deterministic() const override {
        return inner_->deterministic().value_or(row_->deterministic);
    }

private:
    std::unique_ptr<Plan> inner_;
    const Variant* row_;
    std::string config_, detail_;
};

RuntimeVersions this_process() {
    int rt = 0, drv = 0;
    if (cudaRuntimeGetVersion(&rt) != cudaSuccess) rt = 0;
    if (cudaDriverGetVersion(&drv) != cudaSuccess) drv = 0;
    return {DeviceInfo::version_string(rt), DeviceInfo::version_string(drv)};
}

// A warning once per process (a sweep plans the row many times).
void warn_once(const std::string& note) {
    static std::mutex m;
    static std::set<std::string> said;
    const std::lock_guard<std::mutex> lock(m);
    if (note.rfind("warning: ", 0) == 0 && said.insert(note).second) std::fprintf(stderr, "auto: %s\n", note.c_str());
}

[[maybe_unused]] std::unique_ptr<Plan> auto_plan(const PrecisionRow& row, const Problem& p, const PlanContext& ctx) {
    const Tuning& tuning = ctx.tuning ? *ctx.tuning : builtin_tuning();
    const AutoDecision d = auto_decide(row.precision, p, ctx.prop, tuning, p.axes.as<AutoPath>("path"), this_process());
    std::string notes;
    for (const std::string& n : d.notes) {
        warn_once(n);
        notes += (notes.empty() ? "" : "; ") + n;
    }
    if (d.picks.empty()) throw Skip(notes.empty() ? "no row of the class runs this problem on this device" : notes);
    std::string skipped;
    for (const AutoPick& pick : d.picks) {
        Problem q = p;
        q.axes = pick.axes;
        try {
            auto inner = pick.variant->make_plan(q, ctx);
            if (!skipped.empty()) notes += (notes.empty() ? "" : "; ") + std::string("skipped ") + skipped;
            return std::make_unique<AutoPlan>(pick, std::move(inner), notes);
        } catch (const Skip& s) {
            skipped += (skipped.empty() ? "" : ", ") + pick_label(pick) + " (" + s.what() + ")";
        }
    }
    throw Skip("every configuration SKIPped: " + skipped);
}

std::optional<std::string> auto_supports(const PrecisionRow& row, const Problem& p, const cudaDeviceProp& prop) {
    if (heuristic_picks(row.precision, p, prop).empty())
        return "no row of the " + std::string(to_string(row.precision)) + " class runs this problem on this device";
    return std::nullopt;
}

}  // namespace

Family auto_family() {
    Family f;
    f.name = "auto";
    f.delegates = true;
    f.axes = {{"path", names_of(kAutoPathNames),
               "which choice runs: the tuning file's for this device, class, shape, layout and nearest N within 4x "
               "(tuned; none: the row SKIPs), or the cost model's (heuristic); unset: tuned where the file has a "
               "choice, else heuristic",
               ids_of(kAutoPathNames)}};
    const RungTraits traits{"gemm", {Layout::nhwc, Layout::nchw}, true};
    f.rungs = {make_rung("auto-{p}", {row_fp16(), row_bf16(), row_tf32(), row_fp32()},
                         "what a user runs: the tuned choice of `convstudy tune` for this device and problem, else the "
                         "heuristic's (a cost model of the Hopper rungs over their tiles: waves, edge tiles, "
                         "k-slices, split-K for small grids); {p} rows of our own only",
                         auto_supports, CS_PLAN(RungPlan(auto_plan)), traits)};
    return f;
}

}  // namespace cs::gpu::variants
