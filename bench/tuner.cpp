// `convstudy tune`'s search (tuner.hpp).
#include "tuner.hpp"

#include "error.hpp"
#include "tuning.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

namespace cs::gpu {

std::string TuneTask::label() const {
    return layer.name + " N=" + std::to_string(N) + " " + std::string(to_string(cls)) + " " +
           std::string(to_string(layout));
}

std::vector<TuneTask> tune_tasks(const std::vector<Layer>& layers, const std::vector<std::int64_t>& batches,
                                 const std::vector<Precision>& classes, const std::vector<Layout>& layouts) {
    std::vector<TuneTask> out;
    for (auto N : batches)
        for (const Layer& l : layers)
            for (auto cls : classes)
                for (auto layout : layouts) out.push_back({l, N, cls, layout});
    return out;
}

std::vector<TuneTask> shard_tasks(const std::vector<TuneTask>& tasks, int index, int count) {
    std::vector<TuneTask> out;
    for (std::size_t i = 0; i < tasks.size(); ++i)
        if (int(i % std::size_t(count)) == index - 1) out.push_back(tasks[i]);
    return out;
}

double task_budget(double remaining_s, double weight, double remaining_weight) {
    if (remaining_s <= 0 || remaining_weight <= 0) return 0;
    return remaining_s * std::clamp(weight / remaining_weight, 0.0, 1.0);
}

std::vector<const Variant*> tune_rows(const TuneTask& t, const cudaDeviceProp& prop) {
    std::vector<const Variant*> out;
    const Problem p{t.layer, t.N, t.layout, {}};
    for (const Variant& v : registry()) {
        if (v.library || v.delegates || v.precision != t.cls) continue;
        if (std::find(v.layouts.begin(), v.layouts.end(), t.layout) == v.layouts.end()) continue;
        if (v.supports(p, prop)) continue;  // a reason: not supported
        out.push_back(&v);
    }
    return out;
}

std::vector<const Variant*> rank_rows(const std::vector<const Variant*>& rows,
                                      const std::vector<const Variant*>& ranked) {
    std::vector<const Variant*> out;
    for (const Variant* v : ranked)
        if (std::find(rows.begin(), rows.end(), v) != rows.end() &&
            std::find(out.begin(), out.end(), v) == out.end())
            out.push_back(v);
    for (const Variant* v : rows)
        if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
    return out;
}

namespace {

AxisValues with_axis(AxisValues a, const std::string& axis, int id) {
    for (auto& [k, v] : a.set)
        if (k == axis) {
            v = id;
            return a;
        }
    a.set.emplace_back(axis, id);
    return a;
}

struct Measured {
    TuneCandidate c;
    Timing time;
};

}  // namespace

TuneResult tune_task(const TuneTask& t, const std::vector<const Variant*>& rows,
                     const std::vector<TuneCandidate>& seeds, const TuneMeasure& measure, const TuneClock& clock,
                     double budget_s) {
    TuneResult r;
    const double deadline = clock() + budget_s;
    // Measures one candidate; true when it PASSed (then `out` holds it). A configuration measured
    // already (a seed at a row's own rules) is not measured again: false.
    std::set<std::string> measured;
    auto try_one = [&](const TuneCandidate& c, Measured& out) {
        if (!measured.insert(c.variant->name + ";" + axis_config(*c.variant, c.axes).str()).second) return false;
        const TuneMeasurement m = measure(t, c);
        ++r.tried;
        if (!m.pass || !std::isfinite(m.kernel.med)) {
            const std::string set = axis_config(*c.variant, c.axes).str();
            r.failures.push_back(c.variant->name + (set.empty() ? "" : " [" + set + "]") + ": " +
                                 (m.reason.empty() ? "no time" : m.reason));
            return false;
        }
        out = {c, m.kernel};
        if (!r.found || judge(r.time, m.kernel) == Verdict::faster) {
            r.found = true;
            r.best = c;
            r.time = m.kernel;
        }
        return true;
    };
    // each row's best so far: the first PASS of the row, replaced by one faster beyond noise
    std::vector<Measured> row_best;
    auto keep = [&](const Measured& m) {
        for (Measured& rb : row_best)
            if (rb.c.variant == m.c.variant) {
                if (judge(rb.time, m.time) == Verdict::faster) rb = m;
                return;
            }
        row_best.push_back(m);
    };
    // 1. the seeds of candidate rows (always), then the rows at their own rules
    for (const TuneCandidate& s : seeds) {
        Measured m;
        if (std::find(rows.begin(), rows.end(), s.variant) != rows.end() && try_one(s, m)) keep(m);
    }
    // the rows in the caller's order (cli/tune.cpp: the heuristic's cheapest first) until the
    // budget is spent, once something PASSed
    for (const Variant* v : rows) {
        if (r.found && clock() >= deadline) return r;
        Measured m;
        if (try_one({v, {}}, m)) keep(m);
    }
    // 2. fastest row first, each axis one value at a time around the row's best
    std::stable_sort(row_best.begin(), row_best.end(),
                     [](const Measured& a, const Measured& b) { return a.time.med < b.time.med; });
    for (Measured& rb : row_best) {
        for (const Axis& ax : rb.c.variant->axes)
            for (std::size_t i = 0; i < ax.values.size(); ++i) {
                if (rb.c.axes.id(ax.name) == ax.id(i)) continue;
                if (clock() >= deadline) return r;
                Measured m;
                if (try_one({rb.c.variant, with_axis(rb.c.axes, ax.name, ax.id(i))}, m) &&
                    judge(rb.time, m.time) == Verdict::faster)
                    rb = m;
            }
    }
    r.complete = true;
    return r;
}

TuneMeasure harness_measure(DeviceContext& ctx, const HostData& data, const RunOptions& opt) {
    return [&ctx, &data, opt](const TuneTask& task, const TuneCandidate& c) {
        const RunResult r = run_variant(ctx, *c.variant, MemoryMode::pageable,
                                        Problem{task.layer, task.N, task.layout, c.axes}, data, opt);
        if (r.fatal) throw Error("tune: a CUDA error left the device unusable: " + r.reason);
        TuneMeasurement m;
        m.pass = r.status == Status::pass;
        m.reason = std::string(to_string(r.status)) + (r.reason.empty() ? "" : ": " + r.reason);
        m.kernel = Timing{r.kernel.median, r.kernel.min, r.kernel.max, r.kernel.p10, r.kernel.p90};
        return m;
    };
}

int tune_all(const std::vector<TuneTask>& tasks, TuningCard& card, double budget_s, const TuneHooks& h) {
    double weight_left = 0;
    for (const auto& t : tasks) weight_left += t.weight();
    const double start = h.clock();
    int nothing = 0;
    for (std::size_t i = 0; i < tasks.size(); ++i) {
        const TuneTask& t = tasks[i];
        const std::string head = "[" + std::to_string(i + 1) + "/" + std::to_string(tasks.size()) + "] " + t.label() + ": ";
        const double budget = task_budget(budget_s - (h.clock() - start), t.weight(), weight_left);
        weight_left -= t.weight();
        TunedChoice key;
        key.cls = t.cls, key.shape = tuned_shape(t.layer), key.N = t.N, key.layout = t.layout;
        if (card.choice(key)) {
            h.say(head + "tuned already");
            continue;
        }
        // the task's budget counts its data's making (rows) as well as its measurements
        const double t0 = h.clock();
        const auto rows = h.rows(t);
        const auto seeds = h.seeds ? h.seeds(t) : std::vector<TuneCandidate>{};
        const double data_s = h.clock() - t0;
        const TuneResult r = tune_task(t, rows, seeds, h.measure, h.clock, budget - data_s);
        if (!r.found) {
            ++nothing;
            h.say(head + "nothing PASSed of " + std::to_string(r.tried) + " tried (" +
                  (r.failures.empty() ? std::string("no row supports it") : r.failures.front()) + ")");
            continue;
        }
        TunedChoice ch = key;
        ch.variant = r.best.variant, ch.axes = r.best.axes;
        ch.kernel_ms = r.time.med, ch.p10_ms = r.time.lo(), ch.p90_ms = r.time.hi();
        ch.tried = r.tried, ch.complete = r.complete;
        ch.git_rev = h.git_rev;
        card.choices.push_back(ch);
        h.save(card);
        const std::string set = axis_config(*ch.variant, ch.axes).str();
        // the task's wall time against its share; its data's making and a configuration's mean
        const double spent = h.clock() - t0;
        char times[160];
        std::snprintf(times, sizeof times, " %.4f ms (%d tried%s, %.1f s of %.1f: data %.1f s, %.2f s a configuration)",
                      ch.kernel_ms, r.tried, r.complete ? "" : ", budget spent", spent, budget, data_s,
                      (spent - data_s) / std::max(1, r.tried));
        h.say(head + ch.variant->name + (set.empty() ? "" : " [" + set + "]") + times);
    }
    return nothing;
}

}  // namespace cs::gpu
