// Part of kernels/cudnn/cudnn_graph.cu and kernels/cudnn/cudnn_chain.cu, each of which includes
// it once inside its anonymous namespace, after cudnn_graph_engine.cuh (nothing here is visible
// outside the file that includes it). select_engine, the engine search of one row (or of one
// chain layer's fused graph: an Epilogue), in its four steps: the candidates (every engine
// configuration that runs the graph within the workspace limit, finalized), their trial runs
// against the naive reference, their timing, and the choice with the row's detail.

#pragma once

// ---- selection ------------------------------------------------------------------------

struct Ranked {  // an accepted configuration, in the order the plan falls back through
    Recipe recipe;
    EngineInfo info;
    double ms = 0;
    std::size_t ws = 0;  // at the selection's shape
};

struct Selection {
    std::vector<Ranked> ranking;  // the chosen first, then the other accurate ones by time
    std::string detail;
    std::string algo;
};

// Runtime-compiled engines are in the search unless the run's engine memory says not
// (SearchMode::runtime_compiled, `--no-cudnn-rtc`): the best cuDNN can do includes them.
//
// Only on shapes whose every tensor is channels-last with channel counts a multiple of 8 (16
// bytes of half): on the GPU tests' odd shape C = 7, NCHW, 9 x 9 (cuDNN 9.14), a runtime-compiled
// engine faulted with a misaligned address inside the search, and a fault is sticky: it takes the
// process's CUDA context (and every later row) with it. No check can run after such a fault, so
// the search leaves those engines out where their alignment is not assured.
bool rtc_allowed(const Problem& p, bool runtime_compiled) {
    return runtime_compiled && p.layout == Layout::nhwc && p.layer.C % 8 == 0 && p.layer.M % 8 == 0;
}

struct Candidate {
    Recipe recipe;
    EngineInfo info;
    std::string source;  // "A3", "B0", "F1", "G"
    std::optional<ExecPlan> plan;
    double err = -1;
    std::vector<float> samples;
    double ms = INFINITY;
};

// What the search saw, and why it left out what it left out (the row's detail, the Skip messages).
struct SearchCounts {
    int dup = 0, notes = 0, rtc = 0, refused = 0, ws = 0, inaccurate = 0, failed = 0, other = 0, global = 0;
    int heur[3] = {0, 0, 0};  // configurations from heuristics A, B and the fallback
    std::string first_refusal, heur_fail, first_inaccurate, first_failed;
};

double seconds_since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// The engine-choices key of a row (engine_choice.hpp), one that holds across processes:
// device, cuDNN version, layer, batch, layout, class.
std::string choice_key(const cudaDeviceProp& prop, const Layer& l, std::int64_t nmax, Layout layout, const RowSpec& sp) {
    char pkey[320];
    std::snprintf(pkey, sizeof pkey, "%s sm%d%d cudnn%zu|%d,%d,%d,%d,%d,%d,%d,%d|%lld|%s|%s", prop.name, prop.major,
                  prop.minor, cudnnGetVersion(), l.C, l.H, l.W, l.M, l.R, l.S, l.stride, l.pad,
                  static_cast<long long>(nmax), layout == Layout::nchw ? "nchw" : "nhwc", sp.name);
    return pkey;
}

// Step 1: the candidates. consider() keeps a configuration that is new, allowed by its notes,
// finalizes and fits the workspace limit; `only_engine` (reuse mode): that engine's alone.
class CandidateSearch {
public:
    CandidateSearch(cudnnHandle_t h, const Graph& g, const Problem& p, const RowSpec& sp, std::size_t ws_limit,
                    std::optional<std::int64_t> only_engine, bool runtime_compiled)
        : h_(h), g_(g), p_(p), sp_(sp), ws_limit_(ws_limit), only_engine_(only_engine), rtc_(runtime_compiled) {}

    const std::optional<std::int64_t>& only_engine() const { return only_engine_; }
    int seen() const { return int(seen_.size()); }

    void consider(Recipe r, EngineInfo info, std::string source, const BDesc* cfg) {
        if (only_engine_ && r.engine != *only_engine_) {
            ++n.other;
            return;
        }
        if (!seen_.insert(r).second) {
            ++n.dup;
            return;
        }
        std::string why_notes;
        if (info.has(CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS)) why_notes = "DOWN_CONVERT_INPUTS";
        if (info.has(CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION)) why_notes = "REDUCED_PRECISION_REDUCTION";
        if (!sp_.allow_tensor_core && info.has(CUDNN_NUMERICAL_NOTE_TENSOR_CORE)) why_notes = "TENSOR_CORE";
        if (!why_notes.empty()) {
            ++n.notes;
            return;
        }
        if (info.has(CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION) && !rtc_allowed(p_, rtc_)) {
            ++n.rtc;
            return;
        }
        Candidate c;
        c.recipe = std::move(r);
        c.info = std::move(info);
        c.source = std::move(source);
        std::string why;
        BDesc rebuilt;
        if (!cfg) {
            rebuilt = config_from_recipe(g_, c.recipe, &why);
            if (!rebuilt) {
                ++n.refused;
                if (n.first_refusal.empty()) n.first_refusal = recipe_text(c.recipe) + ": " + why;
                return;
            }
            cfg = &rebuilt;
        }
        c.plan = finalize_plan(h_, *cfg, &why);
        if (!c.plan) {
            ++n.refused;
            if (n.first_refusal.empty()) n.first_refusal = recipe_text(c.recipe) + ": " + why;
            return;
        }
        if (c.plan->ws > ws_limit_) {
            ++n.ws;
            return;
        }
        cands.push_back(std::move(c));
    }

    // The configurations of heuristics A, B and the fallback, then the global engine list's
    // engines that no heuristic named, with default knobs.
    void gather() {
        const std::pair<cudnnBackendHeurMode_t, char> modes[3] = {
            {CUDNN_HEUR_MODE_A, 'A'}, {CUDNN_HEUR_MODE_B, 'B'}, {CUDNN_HEUR_MODE_FALLBACK, 'F'}};
        for (int m = 0; m < 3; ++m) {
            std::string why;
            auto cfgs = heuristic_configs(g_, modes[m].first, why);
            if (!why.empty() && n.heur_fail.empty()) n.heur_fail = std::string(1, modes[m].second) + ": " + why;
            n.heur[m] = int(cfgs.size());
            for (std::size_t i = 0; i < cfgs.size(); ++i) {
                auto [r, info] = read_config(cfgs[i]);
                heuristic_engines_.insert(r.engine);
                consider(std::move(r), std::move(info), std::string(1, modes[m].second) + std::to_string(i), &cfgs[i]);
            }
        }
        std::int64_t global_count = 0, cnt = 0;
        if (cudnnBackendGetAttribute(g_.graph.get(), CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT, CUDNN_TYPE_INT64, 1,
                                     &cnt, &global_count) != CUDNN_STATUS_SUCCESS)
            global_count = 0;
        for (std::int64_t id = 0; id < global_count; ++id) {
            if (heuristic_engines_.count(id)) continue;
            if (only_engine_ && id != *only_engine_) {
                ++n.other;
                continue;
            }
            BDesc engine;
            if (engine_on(g_, id, engine) != CUDNN_STATUS_SUCCESS) continue;  // this engine does not run this graph
            ++n.global;
            EngineInfo info = engine_info(engine);
            Recipe r;
            r.engine = id;
            consider(std::move(r), std::move(info), "G", nullptr);
        }
    }

    // Every engine, as if none had been remembered (the remembered one does not run here now).
    void search_all() {
        only_engine_.reset();
        seen_.clear();
        heuristic_engines_.clear();
        n.dup = n.notes = n.rtc = n.refused = n.ws = n.other = n.global = 0;
        gather();
    }

    std::vector<Candidate> cands;
    SearchCounts n;

private:
    cudnnHandle_t h_;
    const Graph& g_;
    const Problem& p_;
    const RowSpec& sp_;
    std::size_t ws_limit_;
    std::optional<std::int64_t> only_engine_;
    bool rtc_ = true;  // runtime-compiled engines in the search (where rtc_allowed)
    std::set<Recipe> seen_;
    std::set<std::int64_t> heuristic_engines_;
};

// Step 1 as reuse mode has it, and a note for the detail on what it did. The remembered
// configuration's knobs known (the extra processes of sweep --cudnn-processes): that
// configuration alone, no heuristics or global list; else the remembered engine's
// configurations; where that engine does not run now, every engine.
std::string find_candidates(CandidateSearch& s, const Graph& g, const std::optional<RememberedEngine>& remembered) {
    if (s.only_engine() && remembered->knobs) {
        Recipe r;
        r.engine = *s.only_engine();
        r.knobs = *remembered->knobs;
        BDesc engine;
        if (engine_on(g, r.engine, engine) == CUDNN_STATUS_SUCCESS) {
            EngineInfo info = engine_info(engine);
            s.consider(std::move(r), std::move(info), "R", nullptr);
        }
    }
    const bool exact_reuse = !s.cands.empty();
    if (!exact_reuse) s.gather();
    if (s.only_engine() && s.cands.empty()) {
        const std::string note = "; the remembered eng" + std::to_string(*s.only_engine()) +
                                 " did not run: every engine searched";
        s.search_all();
        return note;
    }
    if (exact_reuse) return "; reuse mode: the remembered configuration alone";
    if (s.only_engine())
        return "; reuse mode: only the remembered eng" + std::to_string(*s.only_engine()) + "'s configurations (" +
               std::to_string(s.n.other) + " of other engines not built)";
    return "";
}

// The bias of a fused graph's search data: uniform in [-0.5, 0.5) times the output scale 1/sqrt(3),
// the generator's bias (datagen.hpp, bias_scale()).
constexpr float kSearchBiasScale = 0.28867513459481288225f;  // 0.5 / sqrt(3)

// A search's scratch tensors at the selection's shape (random data of the row's type; with an
// epilogue's bias, its M values too), the naive reference output (the epilogue applied to it in
// float), workspace for the largest candidate, the L2 flush buffer, and the stream (set on the
// handle) and variant pack the candidates run with.
struct SearchScratch {
    SearchScratch(cudnnHandle_t h, const Problem& p, const RowSpec& sp, std::int64_t nmax, std::size_t ws_max,
                  const cudaDeviceProp& prop, const Epilogue& ep = {})
        : ny(p.layer.output_elems(nmax)),
          x(MemKind::device, std::size_t(p.layer.input_elems(nmax)) * sp.elem_bytes),
          w(MemKind::device, std::size_t(p.layer.weight_elems()) * sp.elem_bytes),
          bias(MemKind::device, ep.bias ? std::size_t(p.layer.M) * sp.elem_bytes : 0),
          y(MemKind::device, std::size_t(ny) * sp.elem_bytes),
          ref(MemKind::device, std::size_t(ny) * sizeof(float)),
          ws(MemKind::device, ws_max),
          diff(MemKind::device, 2 * sizeof(unsigned)),
          flush(MemKind::device, std::max<std::size_t>(2 * std::size_t(prop.l2CacheSize), 1 << 20)) {
        const Layer& l = p.layer;
        fill_uniform(x.get(), sp.data, l.input_elems(nmax), 1.0f, 0x5eed1201ull);
        fill_uniform(w.get(), sp.data, l.weight_elems(), float(std::sqrt(3.0 / double(l.K()))), 0x5eed1202ull);
        const RefShape rs{l.C, l.H, l.W, l.M, l.R, l.S, l.stride, l.pad, l.E(), l.F(), p.layout == Layout::nhwc};
        reference(x.get(), w.get(), ref.as<float>(), sp.data, rs, ny);
        if (ep.bias) fill_uniform(bias.get(), sp.data, l.M, kSearchBiasScale, 0x5eed1203ull);
        if (ep.any()) epilogue_reference(ref.as<float>(), bias.get(), sp.data, rs, ep.relu, ny);
        CS_CUDA_CHECK(cudaDeviceSynchronize());
        CS_CUDNN_CHECK(cudnnSetStream(h, stream.get()));
        vp = variant_pack(x.get(), w.get(), y.get(), ws.get(), bias.get());
    }
    std::int64_t ny;
    Buffer x, w, bias, y, ref, ws, diff, flush;
    Stream stream;
    BDesc vp;
};

// Step 2: one run of each candidate on NaN-poisoned output, compared with the reference; those
// within half the class threshold are timed. A failed execution of the sticky kind ends the search.
std::vector<Candidate*> trial_runs(cudnnHandle_t h, std::vector<Candidate>& cands, const SearchScratch& s,
                                   const RowSpec& sp, SearchCounts& n) {
    const double screen = 0.5 * threshold(sp.precision);
    std::vector<Candidate*> live;
    for (auto& c : cands) {
        CS_CUDA_CHECK(cudaMemsetAsync(s.y.get(), 0xff, s.y.bytes(), s.stream.get()));  // NaN poison
        const cudnnStatus_t st = cudnnBackendExecute(h, c.plan->plan.get(), s.vp.get());
        if (st != CUDNN_STATUS_SUCCESS) {
            if (CUDNN_STATUS_CATEGORY(st) == CUDNN_STATUS_EXECUTION_FAILED)
                throw_cudnn(st, "cudnnBackendExecute (trial run)", __FILE__, __LINE__);
            (void)cudaGetLastError();
            ++n.failed;
            if (n.first_failed.empty()) n.first_failed = recipe_text(c.recipe) + ": " + status_text(st);
            continue;
        }
        CS_CUDA_CHECK(cudaStreamSynchronize(s.stream.get()));
        c.err = rel_diff(s.y.get(), s.ref.as<float>(), sp.data, s.ny, s.diff.as<unsigned>());
        if (!(c.err <= screen)) {
            ++n.inaccurate;
            if (n.first_inaccurate.empty())
                n.first_inaccurate = recipe_text(c.recipe) + " [" + notes_text(c.info) + "] err " + fmt("%.2g", c.err);
            continue;
        }
        live.push_back(&c);
    }
    if (live.empty())
        throw cs::Skip("no cuDNN engine configuration is accurate enough for " + std::string(sp.name) + " (" +
                       std::to_string(cands.size()) + " ran; e.g. " +
                       (n.first_inaccurate.empty() ? n.first_failed : n.first_inaccurate) + ", screen " +
                       fmt("%.2g", screen) + ")");
    return live;
}

struct Timed {
    std::vector<Candidate*> finalists;  // fastest first by the screen's medians
    int samples = 0;                    // each finalist's samples behind its median
    double best = 0;                    // the screen's fastest median
};

// Step 3: L2 flushed before every sample, one execution between two events. Three samples of
// every accurate candidate; then the finalists (within 1.25x of the fastest, at most six, and
// the remembered engine's fastest configuration when it is among them) again, for their medians.
Timed time_candidates(cudnnHandle_t h, const std::vector<Candidate*>& live, SearchScratch& s,
                      const std::optional<RememberedEngine>& remembered) {
    constexpr int kPairs = 64;
    std::vector<Event> ev0(kPairs), ev1(kPairs);
    unsigned flush_value = 0;
    const cudaStream_t stream = s.stream.get();
    auto time_round = [&](const std::vector<Candidate*>& set, int samples) {
        // Enqueue up to kPairs samples, then read them back; no host sync in between.
        std::vector<Candidate*> order;
        for (int k = 0; k < samples; ++k)
            for (auto* c : set) order.push_back(c);
        for (std::size_t base = 0; base < order.size(); base += kPairs) {
            const std::size_t end = std::min(order.size(), base + kPairs);
            for (std::size_t i = base; i < end; ++i) {
                CS_CUDA_CHECK(cudaMemsetAsync(s.flush.get(), int(++flush_value & 0xff), s.flush.bytes(), stream));
                ev0[i - base].record(stream);
                CS_CUDNN_CHECK(cudnnBackendExecute(h, order[i]->plan->plan.get(), s.vp.get()));
                ev1[i - base].record(stream);
            }
            CS_CUDA_CHECK(cudaStreamSynchronize(stream));
            for (std::size_t i = base; i < end; ++i) order[i]->samples.push_back(elapsed_ms(ev0[i - base], ev1[i - base]));
        }
    };
    for (auto* c : live) CS_CUDNN_CHECK(cudnnBackendExecute(h, c->plan->plan.get(), s.vp.get()));  // warm-up
    time_round(live, 3);
    for (auto* c : live) c->ms = median_ms(c->samples);
    Timed t;
    t.best = INFINITY;
    for (auto* c : live) t.best = std::min(t.best, c->ms);
    auto& finalists = t.finalists;
    for (auto* c : live)
        if (c->ms <= 1.25 * t.best) finalists.push_back(c);
    std::stable_sort(finalists.begin(), finalists.end(), [](auto* a, auto* b) { return a->ms < b->ms; });
    if (finalists.size() > 6) finalists.resize(6);
    if (remembered) {  // the remembered engine's fastest configuration takes part when it is in the 1.25x set
        Candidate* own = nullptr;
        for (auto* c : live)
            if (c->recipe.engine == remembered->engine && c->ms <= 1.25 * t.best && (!own || c->ms < own->ms)) own = c;
        if (own && std::find(finalists.begin(), finalists.end(), own) == finalists.end()) finalists.push_back(own);
    }
    for (auto* c : finalists) c->samples.clear();
    // Samples: as many as a budget of 150 milliseconds of timing buys (an L2 flush estimated at
    // 0.05 milliseconds each), 31 to 201, so that the medians of kernels of a few tens of
    // microseconds settle as well as those of milliseconds.
    const double per_sample_ms = double(finalists.size()) * (t.best + 0.05);
    t.samples = int(std::clamp(150.0 / per_sample_ms, 31.0, 201.0));
    time_round(finalists, t.samples);
    for (auto* c : finalists) c->ms = median_ms(c->samples);
    CS_CUDA_CHECK(cudaStreamSynchronize(stream));
    CS_CUDNN_CHECK(cudnnSetStream(h, nullptr));
    return t;
}

// Where a search's seconds went: in all (from its start), candidates, trial runs.
struct SearchTimes {
    std::chrono::steady_clock::time_point start;
    double candidates = 0, trials = 0;
};

// Step 4: the fastest median, unless the engine chosen before is within kKeepBand of it
// (engine_choice.hpp); the choice is remembered under `key` in `memory` (when the run has one), the other accurate candidates
// follow it by time, and the detail says what was chosen, from where, against what, and what
// the search saw and cost.
Selection choose(EngineChoices* memory, const std::string& key, const Timed& t, const std::vector<Candidate*>& live,
                 const std::optional<RememberedEngine>& remembered, const SearchCounts& n, int n_seen,
                 std::int64_t nmax, const std::string& reuse_note, const SearchTimes& times) {
    const auto& finalists = t.finalists;
    std::vector<TimedConfig> timed;
    for (auto* c : finalists) timed.push_back({c->recipe.engine, c->samples});
    const EngineChoice ch =
        choose_engine(timed, remembered ? std::optional<std::int64_t>(remembered->engine) : std::nullopt);
    Candidate* chosen = finalists[ch.chosen];
    if (memory) memory->set(key, {chosen->recipe.engine, chosen->ms, chosen->recipe.knobs});
    Candidate* runner = nullptr;  // the fastest finalist of another engine
    for (auto* c : finalists)
        if (c->recipe.engine != chosen->recipe.engine && (!runner || c->ms < runner->ms)) runner = c;

    Selection sel;
    sel.ranking.push_back({chosen->recipe, chosen->info, chosen->ms, chosen->plan->ws});
    std::vector<Candidate*> rest = live;
    std::stable_sort(rest.begin(), rest.end(), [](auto* a, auto* b) { return a->ms < b->ms; });
    for (auto* c : rest)
        if (c != chosen) sel.ranking.push_back({c->recipe, c->info, c->ms, c->plan->ws});
    sel.algo = algo_of(chosen->info);
    const double secs = seconds_since(times.start);
    std::string d = recipe_text(chosen->recipe) + " [" + notes_text(chosen->info) + "] from " + chosen->source +
                    " (cuDNN " + std::to_string(cudnnGetVersion()) + " graph API), ws " + mb(chosen->plan->ws) +
                    ", " + fmt("%.4f", chosen->ms) + " ms (median of " + std::to_string(t.samples) +
                    ", L2 flushed, N=" + std::to_string(nmax) + "), err " + fmt("%.1e", chosen->err) +
                    " vs naive reference";
    if (ch.kept_previous && ch.chosen != ch.fastest)
        d += "; kept as the engine chosen before: within " + fmt("%.0f", (kKeepBand - 1) * 100) +
             "% of the fastest, " + recipe_text(finalists[ch.fastest]->recipe) + " " + fmt("%.4f", ch.fastest_ms) + " ms";
    else if (ch.kept_previous)
        d += "; the engine chosen before, fastest again";
    else if (remembered)
        d += "; replaces eng" + std::to_string(remembered->engine) + " chosen before (not within " +
             fmt("%.0f", (kKeepBand - 1) * 100) + "% of the fastest now)";
    if (runner)
        d += "; runner-up " + recipe_text(runner->recipe) + " [" + notes_text(runner->info) + "] " +
             fmt("%.4f", runner->ms) + " ms";
    d += "; configs: A " + std::to_string(n.heur[0]) + ", B " + std::to_string(n.heur[1]) + ", fallback " +
         std::to_string(n.heur[2]) + ", global " + std::to_string(n.global) + " (" + std::to_string(n_seen) +
         " distinct, " + std::to_string(live.size()) + " timed, " + std::to_string(n.notes) + " excluded by notes, " +
         std::to_string(n.rtc) + " runtime-compiled skipped, " + std::to_string(n.refused) + " refused, " +
         std::to_string(n.ws) + " over ws limit, " + std::to_string(n.inaccurate) + " inaccurate";
    if (!n.first_inaccurate.empty()) d += " e.g. " + n.first_inaccurate;
    if (n.failed) d += ", " + std::to_string(n.failed) + " failed to run";
    d += ")" + reuse_note + "; selection " + fmt("%.1f", secs) + " s (candidates " + fmt("%.1f", times.candidates) +
         " s, trial runs " + fmt("%.1f", times.trials) + " s, timing " +
         fmt("%.1f", secs - times.candidates - times.trials) + " s)";
    sel.detail = std::move(d);
    return sel;
}

// The engine search of one row: the ranking its plan falls back through, and its detail. With an
// epilogue (a chain layer), the search of that fused graph: the same steps, its own engine-choices
// key, the reference with the epilogue applied.
Selection select_engine(cudnnHandle_t h, const Problem& p, const RowSpec& sp, std::int64_t nmax,
                        const PlanContext& ctx, const Epilogue& ep = {}) {
    const std::size_t ws_limit = ctx.workspace_limit;
    EngineChoices* memory = ctx.engines;  // null: choose afresh, remember nothing
    SearchTimes times{std::chrono::steady_clock::now()};
    const auto g = build_graph(h, p.layer, p.layout, sp.data, Shape{nmax, 16, 16, 16}, ep);
    const std::string key = choice_key(ctx.prop, p.layer, nmax, p.layout, sp) + (ep.any() ? "|" + ep.text() : "");
    const std::optional<RememberedEngine> remembered = memory ? memory->get(key) : std::nullopt;
    const SearchMode mode = memory ? memory->mode() : SearchMode{};
    // Reuse mode (SearchMode::reuse_only): only the remembered engine's configurations.
    std::optional<std::int64_t> only_engine;
    if (remembered && mode.reuse_only) only_engine = remembered->engine;

    CandidateSearch search(h, *g, p, sp, ws_limit, only_engine, mode.runtime_compiled);
    const std::string reuse_note = find_candidates(search, *g, remembered);
    (void)cudaGetLastError();
    SearchCounts& n = search.n;
    if (search.cands.empty())
        throw cs::Skip("no cuDNN engine configuration runs this " + ep.text() + " (" +
                       std::to_string(search.seen()) + " seen: " + std::to_string(n.notes) + " excluded by notes, " +
                       std::to_string(n.rtc) + " need runtime compilation, " + std::to_string(n.refused) +
                       " refused" + (n.first_refusal.empty() ? "" : " e.g. " + n.first_refusal) + ", " +
                       std::to_string(n.ws) + " over the workspace limit " + mb(ws_limit) +
                       (n.heur_fail.empty() ? "" : "; heuristics " + n.heur_fail) + ")");
    if (mode.build_only)
        throw cs::Skip("build-only: " + std::to_string(search.cands.size()) + " engine configurations built in " +
                       fmt("%.1f", seconds_since(times.start)) + " s, nothing run (--build-engines-only)");
    times.candidates = seconds_since(times.start);

    const auto t_trials = std::chrono::steady_clock::now();
    std::size_t ws_max = 0;
    for (const auto& c : search.cands) ws_max = std::max(ws_max, c.plan->ws);
    SearchScratch scratch(h, p, sp, nmax, ws_max, ctx.prop, ep);
    const std::vector<Candidate*> live = trial_runs(h, search.cands, scratch, sp, n);
    times.trials = seconds_since(t_trials);

    const Timed t = time_candidates(h, live, scratch, remembered);
    return choose(memory, key, t, live, remembered, n, search.seen(), nmax, reuse_note, times);
}

// The search this run's engine memory already made under `key` (a row's plans, or a chain layer's,
// search once), reused only when its choice fits this plan's workspace limit, else select_engine's,
// kept there under `key`. `reused` says which.
std::shared_ptr<const Selection> search_once(cudnnHandle_t h, const std::string& key, const Problem& p,
                                             const RowSpec& sp, std::int64_t nmax, const PlanContext& ctx,
                                             bool& reused, const Epilogue& ep = {}) {
    auto made = ctx.engines ? std::static_pointer_cast<const Selection>(ctx.engines->search(key)) : nullptr;
    reused = made && !made->ranking.empty() && made->ranking.front().ws <= ctx.workspace_limit;
    if (!reused) {
        made = std::make_shared<const Selection>(select_engine(h, p, sp, nmax, ctx, ep));
        if (ctx.engines) ctx.engines->keep_search(key, made);
    }
    return made;
}

// An execution plan at one shape: the graph, and the first configuration of `ranking` (the choice
// first) that finalizes within `ws_cap` bytes of workspace, with its rank; nullopt when none does.
struct BuiltPlan {
    std::unique_ptr<Graph> graph;
    ExecPlan exec;
    std::size_t rank = 0;  // index into the ranking
};
std::optional<BuiltPlan> build_plan(cudnnHandle_t h, const Layer& l, Layout lay, const RowSpec& sp, const Shape& s,
                                    const std::vector<Ranked>& ranking, std::size_t ws_cap, const Epilogue& ep = {}) {
    BuiltPlan b;
    b.graph = build_graph(h, l, lay, sp.data, s, ep);
    for (std::size_t i = 0; i < ranking.size(); ++i) {
        BDesc cfg = config_from_recipe(*b.graph, ranking[i].recipe);
        if (!cfg) continue;
        auto e = finalize_plan(h, cfg);
        if (!e || e->ws > ws_cap) continue;
        b.exec = std::move(*e);
        b.rank = i;
        return b;
    }
    return std::nullopt;
}
