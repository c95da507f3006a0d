// Part of gpu/variants/cudnn_graph.cu, which includes it once inside its anonymous
// namespace (one translation unit, as before the split: nothing here is visible elsewhere).
// Engine search: scratch data and the naive reference, the engine configurations
// (heuristics, fallback, global list), their names for detail(), and select_engine: every
// candidate built, checked against the reference and timed, the ranking the plan falls back through.

#pragma once

// ---- scratch data, the naive reference and the comparison ----------------------------

// Scratch data: fill_uniform_kernel and the element conversions, elements.cuh.

struct RefShape {
    int C, H, W, M, R, S, stride, pad, E, F;
    bool nhwc;
};

// One thread per output element, in the output's own layout. Products in float (exact for
// half and bfloat16 operands), sums in double: a reference well inside every threshold.
template <typename T>
__global__ void reference_kernel(const T* __restrict__ x, const T* __restrict__ w, float* __restrict__ y,
                                 RefShape s, std::int64_t total) {
    for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < total;
         i += std::int64_t(gridDim.x) * blockDim.x) {
        std::int64_t rest = i;
        int m, e, f;
        if (s.nhwc) {
            m = int(rest % s.M);
            rest /= s.M;
            f = int(rest % s.F);
            rest /= s.F;
            e = int(rest % s.E);
            rest /= s.E;
        } else {
            f = int(rest % s.F);
            rest /= s.F;
            e = int(rest % s.E);
            rest /= s.E;
            m = int(rest % s.M);
            rest /= s.M;
        }
        const std::int64_t n = rest;
        double acc = 0.0;
        for (int r = 0; r < s.R; ++r) {
            const int h = e * s.stride + r - s.pad;
            if (h < 0 || h >= s.H) continue;
            for (int q = 0; q < s.S; ++q) {
                const int ww = f * s.stride + q - s.pad;
                if (ww < 0 || ww >= s.W) continue;
                for (int c = 0; c < s.C; ++c) {
                    std::int64_t xi, wi;
                    if (s.nhwc) {
                        xi = ((n * s.H + h) * s.W + ww) * s.C + c;
                        wi = ((std::int64_t(m) * s.R + r) * s.S + q) * s.C + c;
                    } else {
                        xi = ((n * s.C + c) * s.H + h) * std::int64_t(s.W) + ww;
                        wi = ((std::int64_t(m) * s.C + c) * s.R + r) * s.S + q;
                    }
                    acc += double(to_float(x[xi]) * to_float(w[wi]));
                }
            }
        }
        y[i] = float(acc);
    }
}

unsigned grid_for(std::int64_t n) { return unsigned(std::clamp<std::int64_t>((n + 255) / 256, 1, 8192)); }

template <typename T>
void fill_t(void* p, std::int64_t n, float scale, unsigned long long seed) {
    fill_uniform_kernel<<<grid_for(n), 256>>>(static_cast<T*>(p), n, scale, seed);
    CS_CUDA_CHECK_LAUNCH();
}
void fill_uniform(void* p, cudnnDataType_t t, std::int64_t n, float scale, unsigned long long seed) {
    if (t == CUDNN_DATA_HALF)
        fill_t<__half>(p, n, scale, seed);
    else if (t == CUDNN_DATA_BFLOAT16)
        fill_t<__nv_bfloat16>(p, n, scale, seed);
    else
        fill_t<float>(p, n, scale, seed);
}

template <typename T>
void reference_t(const void* x, const void* w, float* y, const RefShape& s, std::int64_t total) {
    reference_kernel<T><<<grid_for(total), 256>>>(static_cast<const T*>(x), static_cast<const T*>(w), y, s, total);
    CS_CUDA_CHECK_LAUNCH();
}
void reference(const void* x, const void* w, float* y, cudnnDataType_t t, const RefShape& s, std::int64_t total) {
    if (t == CUDNN_DATA_HALF)
        reference_t<__half>(x, w, y, s, total);
    else if (t == CUDNN_DATA_BFLOAT16)
        reference_t<__nv_bfloat16>(x, w, y, s, total);
    else
        reference_t<float>(x, w, y, s, total);
}

// max |a - ref| / max |ref| (synchronises: set-up only).
double rel_diff(const void* a, const float* ref, cudnnDataType_t t, std::int64_t n, unsigned* scratch) {
    CS_CUDA_CHECK(cudaMemset(scratch, 0, 2 * sizeof(unsigned)));
    if (t == CUDNN_DATA_HALF)
        max_diff_kernel<<<grid_for(n), 256>>>(static_cast<const __half*>(a), ref, n, scratch);
    else if (t == CUDNN_DATA_BFLOAT16)
        max_diff_kernel<<<grid_for(n), 256>>>(static_cast<const __nv_bfloat16*>(a), ref, n, scratch);
    else
        max_diff_kernel<<<grid_for(n), 256>>>(static_cast<const float*>(a), ref, n, scratch);
    CS_CUDA_CHECK_LAUNCH();
    float v[2] = {0, 0};
    CS_CUDA_CHECK(cudaMemcpy(v, scratch, sizeof v, cudaMemcpyDeviceToHost));
    return v[1] > 0 ? double(v[0]) / double(v[1]) : double(v[0]);
}


// ---- engine configurations ------------------------------------------------------------

using Knobs = std::vector<std::pair<int, std::int64_t>>;  // (cudnnBackendKnobType_t, value), sorted

// An engine configuration by value: rebuildable on another graph (another batch size or
// alignment) of the same convolution.
struct Recipe {
    std::int64_t engine = -1;
    Knobs knobs;
    bool operator<(const Recipe& o) const { return std::tie(engine, knobs) < std::tie(o.engine, o.knobs); }
};

struct EngineInfo {
    std::int64_t engine = -1;
    std::vector<int> numerical;  // cudnnBackendNumericalNote_t
    std::vector<int> behavior;   // cudnnBackendBehaviorNote_t
    bool has(cudnnBackendNumericalNote_t n) const {
        return std::find(numerical.begin(), numerical.end(), int(n)) != numerical.end();
    }
    bool has(cudnnBackendBehaviorNote_t n) const {
        return std::find(behavior.begin(), behavior.end(), int(n)) != behavior.end();
    }
};

EngineInfo engine_info(const BDesc& engine) {
    EngineInfo e;
    std::int64_t cnt = 0;
    CS_CUDNN_CHECK(cudnnBackendGetAttribute(engine.get(), CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &cnt,
                                            &e.engine));
    cudnnBackendNumericalNote_t nn[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
    if (cudnnBackendGetAttribute(engine.get(), CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                                 CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &cnt, nn) == CUDNN_STATUS_SUCCESS)
        for (std::int64_t i = 0; i < std::min<std::int64_t>(cnt, CUDNN_NUMERICAL_NOTE_TYPE_COUNT); ++i)
            e.numerical.push_back(int(nn[i]));
    cudnnBackendBehaviorNote_t bn[CUDNN_BEHAVIOR_NOTE_TYPE_COUNT];
    if (cudnnBackendGetAttribute(engine.get(), CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE, CUDNN_TYPE_BEHAVIOR_NOTE,
                                 CUDNN_BEHAVIOR_NOTE_TYPE_COUNT, &cnt, bn) == CUDNN_STATUS_SUCCESS)
        for (std::int64_t i = 0; i < std::min<std::int64_t>(cnt, CUDNN_BEHAVIOR_NOTE_TYPE_COUNT); ++i)
            e.behavior.push_back(int(bn[i]));
    return e;
}

// Engine and knob choices of a finalized engine configuration.
std::pair<Recipe, EngineInfo> read_config(const BDesc& cfg) {
    BDesc engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
    cudnnBackendDescriptor_t ed = engine.get();
    std::int64_t cnt = 0;
    CS_CUDNN_CHECK(
        cudnnBackendGetAttribute(cfg.get(), CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cnt, &ed));
    EngineInfo info = engine_info(engine);
    Recipe r;
    r.engine = info.engine;
    std::vector<BDesc> choices;
    std::vector<cudnnBackendDescriptor_t> raw;
    for (int i = 0; i < CUDNN_KNOB_TYPE_COUNTS; ++i) {
        choices.emplace_back(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR);
        raw.push_back(choices.back().get());
    }
    cnt = 0;
    if (cudnnBackendGetAttribute(cfg.get(), CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                 std::int64_t(raw.size()), &cnt, raw.data()) == CUDNN_STATUS_SUCCESS) {
        for (std::int64_t i = 0; i < std::min<std::int64_t>(cnt, std::int64_t(raw.size())); ++i) {
            cudnnBackendKnobType_t type{};
            std::int64_t value = 0, c1 = 0;
            if (cudnnBackendGetAttribute(raw[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_TYPE_KNOB_TYPE, 1, &c1,
                                         &type) != CUDNN_STATUS_SUCCESS ||
                cudnnBackendGetAttribute(raw[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, CUDNN_TYPE_INT64, 1, &c1,
                                         &value) != CUDNN_STATUS_SUCCESS)
                continue;
            r.knobs.emplace_back(int(type), value);
        }
    }
    std::sort(r.knobs.begin(), r.knobs.end());
    return {r, info};
}

// Engine configurations a heuristics mode proposes, in its order (empty if the mode fails).
std::vector<BDesc> heuristic_configs(const Graph& g, cudnnBackendHeurMode_t mode, std::string& why) {
    std::vector<BDesc> out;
    BDesc heur(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    cudnnStatus_t st = set_desc(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, g.graph);
    if (st == CUDNN_STATUS_SUCCESS) st = set_attr(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
    if (st == CUDNN_STATUS_SUCCESS) st = cudnnBackendFinalize(heur.get());
    std::int64_t count = 0;
    if (st == CUDNN_STATUS_SUCCESS)
        st = cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0,
                                      &count, nullptr);
    if (st != CUDNN_STATUS_SUCCESS) {
        why = status_text(st);
        return out;
    }
    if (count <= 0) return out;
    std::vector<cudnnBackendDescriptor_t> raw;
    for (std::int64_t i = 0; i < count; ++i) {
        out.emplace_back(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
        raw.push_back(out.back().get());
    }
    std::int64_t got = 0;
    st = cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &got,
                                  raw.data());
    if (st != CUDNN_STATUS_SUCCESS) {
        why = status_text(st);
        out.clear();
        return out;
    }
    out.resize(std::size_t(std::clamp<std::int64_t>(got, 0, count)));
    return out;
}

// The engine of global index `id` on graph g, finalized into `engine`: CUDNN_STATUS_SUCCESS, else
// why cuDNN refused it (the engine does not run g).
cudnnStatus_t engine_on(const Graph& g, std::int64_t id, BDesc& engine) {
    engine = BDesc(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
    cudnnStatus_t st = set_desc(engine, CUDNN_ATTR_ENGINE_OPERATION_GRAPH, g.graph);
    if (st == CUDNN_STATUS_SUCCESS) st = set_i64(engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, id);
    if (st == CUDNN_STATUS_SUCCESS) st = cudnnBackendFinalize(engine.get());
    return st;
}

// An engine configuration from a recipe on graph g; an empty BDesc when cuDNN refuses it.
BDesc config_from_recipe(const Graph& g, const Recipe& r, std::string* why = nullptr) {
    auto fail = [&](cudnnStatus_t st) {
        if (why) *why = status_text(st);
        return BDesc();
    };
    BDesc engine;
    cudnnStatus_t st = engine_on(g, r.engine, engine);
    if (st != CUDNN_STATUS_SUCCESS) return fail(st);
    std::vector<BDesc> choices;
    std::vector<cudnnBackendDescriptor_t> raw;
    for (const auto& [type, value] : r.knobs) {
        choices.emplace_back(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR);
        const auto kt = static_cast<cudnnBackendKnobType_t>(type);
        st = set_attr(choices.back(), CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_TYPE_KNOB_TYPE, 1, &kt);
        if (st == CUDNN_STATUS_SUCCESS) st = set_i64(choices.back(), CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, value);
        if (st == CUDNN_STATUS_SUCCESS) st = cudnnBackendFinalize(choices.back().get());
        if (st != CUDNN_STATUS_SUCCESS) return fail(st);
        raw.push_back(choices.back().get());
    }
    BDesc cfg(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    st = set_desc(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, engine);
    if (st == CUDNN_STATUS_SUCCESS && !raw.empty())
        st = set_attr(cfg, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, CUDNN_TYPE_BACKEND_DESCRIPTOR, std::int64_t(raw.size()),
                      raw.data());
    if (st == CUDNN_STATUS_SUCCESS) st = cudnnBackendFinalize(cfg.get());
    if (st != CUDNN_STATUS_SUCCESS) return fail(st);
    return cfg;
}


// ---- names for detail() ---------------------------------------------------------------

const char* knob_name(int t) {
    switch (t) {
        case 0: return "SPLIT_K";
        case 1: return "SWIZZLE";
        case 2: return "TILE_SIZE";
        case 3: return "USE_TEX";
        case 4: return "EDGE";
        case 5: return "KBLOCK";
        case 6: return "LDGA";
        case 7: return "LDGB";
        case 8: return "CHUNK_K";
        case 9: return "SPLIT_H";
        case 10: return "WINO_TILE";
        case 11: return "MULTIPLY";
        case 12: return "SPLIT_K_BUF";
        case 13: return "TILEK";
        case 14: return "STAGES";
        case 15: return "REDUCTION_MODE";
        case 16: return "CTA_SPLIT_K_MODE";
        case 17: return "SPLIT_K_SLC";
        case 18: return "IDX_MODE";
        case 19: return "SLICED";
        case 20: return "SPLIT_RS";
        case 21: return "SINGLEBUFFER";
        case 22: return "LDGC";
        case 23: return "SPECFILT";
        case 24: return "KERNEL_CFG";
        case 25: return "WORKSPACE";
        case 26: return "TILE_CGA";
        case 27: return "TILE_CGA_M";
        case 28: return "TILE_CGA_N";
        case 29: return "BLOCK_SIZE";
        case 30: return "OCCUPANCY";
        case 31: return "ARRAY_SIZE_PER_THREAD";
        case 32: return "NUM_C_PER_BLOCK";
        case 33: return "SPLIT_COLS";
        case 34: return "TILE_ROWS";
        case 35: return "TILE_COLS";
        case 36: return "LOAD_SIZE";
        case 37: return "CTA_COUNT";
        case 38: return "STREAM_K";
        case 39: return "SPLIT_P_SLC";
        case 40: return "TILE_M";
        case 41: return "TILE_N";
        case 42: return "WARP_SPEC_CFG";
        case 43: return "SWAP_AB";
        default: return "KNOB?";
    }
}

const char* numerical_note_name(int n) {
    switch (n) {
        case CUDNN_NUMERICAL_NOTE_TENSOR_CORE: return "TENSOR_CORE";
        case CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS: return "DOWN_CONVERT_INPUTS";
        case CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION: return "REDUCED_PRECISION_REDUCTION";
        case CUDNN_NUMERICAL_NOTE_FFT: return "FFT";
        case CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC: return "NONDETERMINISTIC";
        case CUDNN_NUMERICAL_NOTE_WINOGRAD: return "WINOGRAD";
        case CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_4x4: return "WINOGRAD_TILE_4x4";
        case CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_6x6: return "WINOGRAD_TILE_6x6";
        case CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_13x13: return "WINOGRAD_TILE_13x13";
        case CUDNN_NUMERICAL_NOTE_STRICT_NAN_PROP: return "STRICT_NAN_PROP";
        default: return "NOTE?";
    }
}

std::string recipe_text(const Recipe& r) {
    std::string s = "eng" + std::to_string(r.engine);
    if (!r.knobs.empty()) {
        s += " {";
        for (std::size_t i = 0; i < r.knobs.size(); ++i) {
            if (i) s += ",";
            s += std::string(knob_name(r.knobs[i].first)) + "=" + std::to_string(r.knobs[i].second);
        }
        s += "}";
    }
    return s;
}

std::string notes_text(const EngineInfo& e) {
    std::string s;
    for (int n : e.numerical) {
        if (!s.empty()) s += "+";
        s += numerical_note_name(n);
    }
    return s.empty() ? "no notes" : s;
}

std::string algo_of(const EngineInfo& e) {
    if (e.has(CUDNN_NUMERICAL_NOTE_FFT)) return "fft";
    if (e.has(CUDNN_NUMERICAL_NOTE_WINOGRAD) || e.has(CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_4x4) ||
        e.has(CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_6x6) || e.has(CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_13x13))
        return "winograd";
    return "library";
}

std::string mb(std::size_t bytes) {
    char b[32];
    std::snprintf(b, sizeof b, "%.1f MB", double(bytes) / 1e6);
    return b;
}

std::string fmt(const char* f, double v) {
    char b[48];
    std::snprintf(b, sizeof b, f, v);
    return b;
}

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

std::mutex g_cache_mutex;
std::map<std::string, Selection>& selection_cache() {
    static std::map<std::string, Selection> m;
    return m;
}

// Runtime-compiled engines are in the search unless the environment sets CONVSTUDY_CUDNN_RTC=0
// (`--no-cudnn-rtc`): the best cuDNN can do includes them.
//
// Only on shapes whose every tensor is channels-last with channel counts a multiple of 8 (16
// bytes of half): on the GPU tests' odd shape C = 7, NCHW, 9 x 9 (cuDNN 9.14), a runtime-compiled
// engine faulted with a misaligned address inside the search, and a fault is sticky: it takes the
// process's CUDA context (and every later row) with it. No check can run after such a fault, so
// the search leaves those engines out where their alignment is not assured.
bool rtc_allowed(const Problem& p) {
    const char* e = std::getenv("CONVSTUDY_CUDNN_RTC");
    if (e && e[0] == '0') return false;
    return p.layout == Layout::nhwc && p.layer.C % 8 == 0 && p.layer.M % 8 == 0;
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

Selection select_engine(cudnnHandle_t h, const Problem& p, const RowSpec& sp, std::int64_t nmax,
                        std::size_t ws_limit, const cudaDeviceProp& prop) {
    const auto t_start = std::chrono::steady_clock::now();
    const Layer& l = p.layer;
    const Shape main_shape{nmax, 16, 16, 16};
    const auto g = build_graph(h, l, p.layout, sp.data, main_shape);

    // The engine chosen before for this row (engine_choice.hpp), by a key that holds across
    // processes: device, cuDNN version, layer, batch, layout, class.
    char pkey[320];
    std::snprintf(pkey, sizeof pkey, "%s sm%d%d cudnn%zu|%d,%d,%d,%d,%d,%d,%d,%d|%lld|%s|%s", prop.name, prop.major,
                  prop.minor, cudnnGetVersion(), l.C, l.H, l.W, l.M, l.R, l.S, l.stride, l.pad,
                  static_cast<long long>(nmax), p.layout == Layout::nchw ? "nchw" : "nhwc", sp.name);
    const std::optional<RememberedEngine> remembered = engine_choices().get(pkey);
    // Reuse mode (engine_choices().reuse_only()): only the remembered engine's configurations.
    std::optional<std::int64_t> only_engine;
    if (remembered && engine_choices().reuse_only()) only_engine = remembered->engine;

    // 1. candidates
    std::vector<Candidate> cands;
    std::set<Recipe> seen;
    std::set<std::int64_t> heuristic_engines;
    int n_dup = 0, n_notes = 0, n_rtc = 0, n_refused = 0, n_ws = 0, n_inaccurate = 0, n_failed = 0, n_other = 0;
    std::string first_refusal;
    auto consider = [&](Recipe r, EngineInfo info, std::string source, const BDesc* cfg) {
        if (only_engine && r.engine != *only_engine) {
            ++n_other;
            return;
        }
        if (!seen.insert(r).second) {
            ++n_dup;
            return;
        }
        std::string why_notes;
        if (info.has(CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS)) why_notes = "DOWN_CONVERT_INPUTS";
        if (info.has(CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION)) why_notes = "REDUCED_PRECISION_REDUCTION";
        if (!sp.allow_tensor_core && info.has(CUDNN_NUMERICAL_NOTE_TENSOR_CORE)) why_notes = "TENSOR_CORE";
        if (!why_notes.empty()) {
            ++n_notes;
            return;
        }
        if (info.has(CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION) && !rtc_allowed(p)) {
            ++n_rtc;
            return;
        }
        Candidate c;
        c.recipe = std::move(r);
        c.info = std::move(info);
        c.source = std::move(source);
        std::string why;
        BDesc rebuilt;
        if (!cfg) {
            rebuilt = config_from_recipe(*g, c.recipe, &why);
            if (!rebuilt) {
                ++n_refused;
                if (first_refusal.empty()) first_refusal = recipe_text(c.recipe) + ": " + why;
                return;
            }
            cfg = &rebuilt;
        }
        c.plan = finalize_plan(h, *cfg, &why);
        if (!c.plan) {
            ++n_refused;
            if (first_refusal.empty()) first_refusal = recipe_text(c.recipe) + ": " + why;
            return;
        }
        if (c.plan->ws > ws_limit) {
            ++n_ws;
            return;
        }
        cands.push_back(std::move(c));
    };

    int n_heur[3] = {0, 0, 0};
    const std::pair<cudnnBackendHeurMode_t, char> modes[3] = {
        {CUDNN_HEUR_MODE_A, 'A'}, {CUDNN_HEUR_MODE_B, 'B'}, {CUDNN_HEUR_MODE_FALLBACK, 'F'}};
    std::string heur_fail;
    std::int64_t global_count = 0, cnt = 0;
    int n_global = 0;
    auto gather = [&] {
        for (int m = 0; m < 3; ++m) {
            std::string why;
            auto cfgs = heuristic_configs(*g, modes[m].first, why);
            if (!why.empty() && heur_fail.empty()) heur_fail = std::string(1, modes[m].second) + ": " + why;
            n_heur[m] = int(cfgs.size());
            for (std::size_t i = 0; i < cfgs.size(); ++i) {
                auto [r, info] = read_config(cfgs[i]);
                heuristic_engines.insert(r.engine);
                consider(std::move(r), std::move(info), std::string(1, modes[m].second) + std::to_string(i), &cfgs[i]);
            }
        }
        // The global engine list: engines no heuristic named, with default knobs.
        if (cudnnBackendGetAttribute(g->graph.get(), CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT, CUDNN_TYPE_INT64, 1,
                                     &cnt, &global_count) != CUDNN_STATUS_SUCCESS)
            global_count = 0;
        for (std::int64_t id = 0; id < global_count; ++id) {
            if (heuristic_engines.count(id)) continue;
            if (only_engine && id != *only_engine) {
                ++n_other;
                continue;
            }
            BDesc engine;
            if (engine_on(*g, id, engine) != CUDNN_STATUS_SUCCESS) continue;  // this engine does not run this graph
            ++n_global;
            EngineInfo info = engine_info(engine);
            Recipe r;
            r.engine = id;
            consider(std::move(r), std::move(info), "G", nullptr);
        }
    };
    // Reuse mode with the remembered configuration's knobs: that configuration alone (what the
    // extra processes of sweep --cudnn-processes time), no heuristics or global list.
    if (only_engine && remembered->knobs) {
        Recipe r;
        r.engine = *only_engine;
        r.knobs = *remembered->knobs;
        BDesc engine;
        if (engine_on(*g, r.engine, engine) == CUDNN_STATUS_SUCCESS) {
            EngineInfo info = engine_info(engine);
            consider(std::move(r), std::move(info), "R", nullptr);
        }
    }
    const bool exact_reuse = !cands.empty();
    if (!exact_reuse) gather();
    auto since = [](std::chrono::steady_clock::time_point t) {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
    };
    std::string reuse_note;
    if (only_engine && cands.empty()) {  // the remembered engine does not run here now: search all
        reuse_note = "; the remembered eng" + std::to_string(*only_engine) + " did not run: every engine searched";
        only_engine.reset();
        seen.clear();
        heuristic_engines.clear();
        n_dup = n_notes = n_rtc = n_refused = n_ws = n_other = n_global = 0;
        gather();
    } else if (exact_reuse) {
        reuse_note = "; reuse mode: the remembered configuration alone";
    } else if (only_engine) {
        reuse_note = "; reuse mode: only the remembered eng" + std::to_string(*only_engine) + "'s configurations (" +
                     std::to_string(n_other) + " of other engines not built)";
    }
    (void)cudaGetLastError();
    const int n_total_seen = int(seen.size());
    if (cands.empty())
        throw cs::Skip(std::string("no cuDNN engine configuration runs this convolution (") +
                       std::to_string(n_total_seen) + " seen: " + std::to_string(n_notes) + " excluded by notes, " +
                       std::to_string(n_rtc) + " need runtime compilation, " + std::to_string(n_refused) +
                       " refused" + (first_refusal.empty() ? "" : " e.g. " + first_refusal) + ", " +
                       std::to_string(n_ws) + " over the workspace limit " + mb(ws_limit) +
                       (heur_fail.empty() ? "" : "; heuristics " + heur_fail) + ")");

    if (engine_choices().build_only())
        throw cs::Skip("build-only: " + std::to_string(cands.size()) + " engine configurations built in " +
                       fmt("%.1f", since(t_start)) + " s, nothing run (--build-engines-only)");
    const double secs_candidates = since(t_start);
    const auto t_trials = std::chrono::steady_clock::now();
    // 2. scratch data, reference, accuracy
    std::size_t ws_max = 0;
    for (const auto& c : cands) ws_max = std::max(ws_max, c.plan->ws);
    const std::size_t eb = sp.elem_bytes;
    const std::int64_t nx = l.input_elems(nmax), nw = l.weight_elems(), ny = l.output_elems(nmax);
    Buffer sx(MemKind::device, std::size_t(nx) * eb), sw(MemKind::device, std::size_t(nw) * eb);
    Buffer sy(MemKind::device, std::size_t(ny) * eb), sref(MemKind::device, std::size_t(ny) * sizeof(float));
    Buffer sws(MemKind::device, ws_max), sdiff(MemKind::device, 2 * sizeof(unsigned));
    Buffer flush(MemKind::device, std::max<std::size_t>(2 * std::size_t(prop.l2CacheSize), 1 << 20));
    fill_uniform(sx.get(), sp.data, nx, 1.0f, 0x5eed1201ull);
    fill_uniform(sw.get(), sp.data, nw, float(std::sqrt(3.0 / double(l.K()))), 0x5eed1202ull);
    const RefShape rs{l.C, l.H, l.W, l.M, l.R, l.S, l.stride, l.pad, l.E(), l.F(), p.layout == Layout::nhwc};
    reference(sx.get(), sw.get(), sref.as<float>(), sp.data, rs, ny);
    CS_CUDA_CHECK(cudaDeviceSynchronize());
    const double screen = 0.5 * threshold(sp.precision);

    Stream stream;
    CS_CUDNN_CHECK(cudnnSetStream(h, stream.get()));
    const BDesc vp = variant_pack(sx.get(), sw.get(), sy.get(), sws.get());
    std::string first_inaccurate, first_failed;
    std::vector<Candidate*> live;
    for (auto& c : cands) {
        CS_CUDA_CHECK(cudaMemsetAsync(sy.get(), 0xff, sy.bytes(), stream.get()));  // NaN poison
        const cudnnStatus_t st = cudnnBackendExecute(h, c.plan->plan.get(), vp.get());
        if (st != CUDNN_STATUS_SUCCESS) {
            if (CUDNN_STATUS_CATEGORY(st) == CUDNN_STATUS_EXECUTION_FAILED)
                throw_cudnn(st, "cudnnBackendExecute (trial run)", __FILE__, __LINE__);
            (void)cudaGetLastError();
            ++n_failed;
            if (first_failed.empty()) first_failed = recipe_text(c.recipe) + ": " + status_text(st);
            continue;
        }
        CS_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
        c.err = rel_diff(sy.get(), sref.as<float>(), sp.data, ny, sdiff.as<unsigned>());
        if (!(c.err <= screen)) {
            ++n_inaccurate;
            if (first_inaccurate.empty())
                first_inaccurate = recipe_text(c.recipe) + " [" + notes_text(c.info) + "] err " + fmt("%.2g", c.err);
            continue;
        }
        live.push_back(&c);
    }
    if (live.empty())
        throw cs::Skip("no cuDNN engine configuration is accurate enough for " + std::string(sp.name) + " (" +
                       std::to_string(cands.size()) + " ran; e.g. " +
                       (first_inaccurate.empty() ? first_failed : first_inaccurate) + ", screen " +
                       fmt("%.2g", screen) + ")");

    const double secs_trials = since(t_trials);
    // 3. timing: L2 flushed before every sample, one execution between two events.
    constexpr int kPairs = 64;
    std::vector<Event> ev0(kPairs), ev1(kPairs);
    unsigned flush_value = 0;
    auto time_round = [&](const std::vector<Candidate*>& set, int samples) {
        // Enqueue up to kPairs samples, then read them back; no host sync in between.
        std::vector<Candidate*> order;
        for (int s = 0; s < samples; ++s)
            for (auto* c : set) order.push_back(c);
        for (std::size_t base = 0; base < order.size(); base += kPairs) {
            const std::size_t end = std::min(order.size(), base + kPairs);
            for (std::size_t i = base; i < end; ++i) {
                CS_CUDA_CHECK(cudaMemsetAsync(flush.get(), int(++flush_value & 0xff), flush.bytes(), stream.get()));
                ev0[i - base].record(stream.get());
                CS_CUDNN_CHECK(cudnnBackendExecute(h, order[i]->plan->plan.get(), vp.get()));
                ev1[i - base].record(stream.get());
            }
            CS_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
            for (std::size_t i = base; i < end; ++i) order[i]->samples.push_back(elapsed_ms(ev0[i - base], ev1[i - base]));
        }
    };
    for (auto* c : live) CS_CUDNN_CHECK(cudnnBackendExecute(h, c->plan->plan.get(), vp.get()));  // warm-up
    time_round(live, 3);
    for (auto* c : live) c->ms = median_ms(c->samples);
    double best = INFINITY;
    for (auto* c : live) best = std::min(best, c->ms);
    std::vector<Candidate*> finalists;
    for (auto* c : live)
        if (c->ms <= 1.25 * best) finalists.push_back(c);
    std::stable_sort(finalists.begin(), finalists.end(), [](auto* a, auto* b) { return a->ms < b->ms; });
    if (finalists.size() > 6) finalists.resize(6);
    if (remembered) {  // the remembered engine's fastest configuration takes part when it is in the 1.25x set
        Candidate* own = nullptr;
        for (auto* c : live)
            if (c->recipe.engine == remembered->engine && c->ms <= 1.25 * best && (!own || c->ms < own->ms)) own = c;
        if (own && std::find(finalists.begin(), finalists.end(), own) == finalists.end()) finalists.push_back(own);
    }
    for (auto* c : finalists) c->samples.clear();
    // Samples: as many as a budget of 150 milliseconds of timing buys (an L2 flush estimated at
    // 0.05 milliseconds each), 31 to 201, so that the medians of kernels of a few tens of
    // microseconds settle as well as those of milliseconds.
    const double per_sample_ms = double(finalists.size()) * (best + 0.05);
    const int final_samples = int(std::clamp(150.0 / per_sample_ms, 31.0, 201.0));
    time_round(finalists, final_samples);
    for (auto* c : finalists) c->ms = median_ms(c->samples);
    CS_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    CS_CUDNN_CHECK(cudnnSetStream(h, nullptr));

    // 4. choice: the fastest median, unless the engine chosen before is within kKeepBand of it.
    std::vector<TimedConfig> timed;
    for (auto* c : finalists) timed.push_back({c->recipe.engine, c->samples});
    const EngineChoice ch =
        choose_engine(timed, remembered ? std::optional<std::int64_t>(remembered->engine) : std::nullopt);
    Candidate* chosen = finalists[ch.chosen];
    engine_choices().set(pkey, {chosen->recipe.engine, chosen->ms, chosen->recipe.knobs});
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
    const double secs = since(t_start);
    std::string d = recipe_text(chosen->recipe) + " [" + notes_text(chosen->info) + "] from " + chosen->source +
                    " (cuDNN " + std::to_string(cudnnGetVersion()) + " graph API), ws " + mb(chosen->plan->ws) +
                    ", " + fmt("%.4f", chosen->ms) + " ms (median of " + std::to_string(final_samples) +
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
    d += "; configs: A " + std::to_string(n_heur[0]) + ", B " + std::to_string(n_heur[1]) + ", fallback " +
         std::to_string(n_heur[2]) + ", global " + std::to_string(n_global) + " (" + std::to_string(n_total_seen) +
         " distinct, " + std::to_string(live.size()) + " timed, " + std::to_string(n_notes) + " excluded by notes, " +
         std::to_string(n_rtc) + " runtime-compiled skipped, " + std::to_string(n_refused) + " refused, " +
         std::to_string(n_ws) + " over ws limit, " + std::to_string(n_inaccurate) + " inaccurate";
    if (!first_inaccurate.empty()) d += " e.g. " + first_inaccurate;
    if (n_failed) d += ", " + std::to_string(n_failed) + " failed to run";
    d += ")" + reuse_note + "; selection " + fmt("%.1f", secs) + " s (candidates " + fmt("%.1f", secs_candidates) +
         " s, trial runs " + fmt("%.1f", secs_trials) + " s, timing " +
         fmt("%.1f", secs - secs_candidates - secs_trials) + " s)";
    sel.detail = std::move(d);
    return sel;
}
