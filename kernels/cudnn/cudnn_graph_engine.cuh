// Part of kernels/cudnn/cudnn_graph.cu and kernels/cudnn/cudnn_chain.cu, each of which includes
// it once inside its anonymous namespace (nothing here is visible outside the file that includes
// it). Engine search's pieces: scratch data and the naive reference (with a chain layer's bias
// and ReLU), the engine configurations (heuristics, fallback, global list) and their names for
// detail(); the search itself, select_engine, is in cudnn_graph_select.cuh.

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

// Calls f with a value of the element type `t` names (half, bfloat16, else float): the one
// dispatch of the scratch kernels below.
template <class F>
void by_type(cudnnDataType_t t, F&& f) {
    if (t == CUDNN_DATA_HALF)
        f(__half{});
    else if (t == CUDNN_DATA_BFLOAT16)
        f(__nv_bfloat16{});
    else
        f(float{});
}

void fill_uniform(void* p, cudnnDataType_t t, std::int64_t n, float scale, unsigned long long seed) {
    by_type(t, [&](auto tag) {
        using T = decltype(tag);
        fill_uniform_kernel<<<grid_for(n), 256>>>(static_cast<T*>(p), n, scale, seed);
    });
    CS_CUDA_CHECK_LAUNCH();
}

void reference(const void* x, const void* w, float* y, cudnnDataType_t t, const RefShape& s, std::int64_t total) {
    by_type(t, [&](auto tag) {
        using T = decltype(tag);
        reference_kernel<T>
            <<<grid_for(total), 256>>>(static_cast<const T*>(x), static_cast<const T*>(w), y, s, total);
    });
    CS_CUDA_CHECK_LAUNCH();
}

// The epilogue on the reference (a graph with one, Epilogue): y = relu?(y + bias[m]) in float,
// for the output's channel m in its own layout; bias null: ReLU alone.
template <typename T>
__global__ void epilogue_reference_kernel(float* __restrict__ y, const T* __restrict__ bias, RefShape s, bool relu,
                                          std::int64_t total) {
    for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < total;
         i += std::int64_t(gridDim.x) * blockDim.x) {
        const int m = int(s.nhwc ? i % s.M : (i / (std::int64_t(s.E) * s.F)) % s.M);
        float v = y[i];
        if (bias) v += to_float(bias[m]);
        if (relu) v = fmaxf(v, 0.0f);
        y[i] = v;
    }
}

void epilogue_reference(float* y, const void* bias, cudnnDataType_t t, const RefShape& s, bool relu,
                        std::int64_t total) {
    by_type(t, [&](auto tag) {
        using T = decltype(tag);
        epilogue_reference_kernel<T><<<grid_for(total), 256>>>(y, static_cast<const T*>(bias), s, relu, total);
    });
    CS_CUDA_CHECK_LAUNCH();
}

// max |a - ref| / max |ref| (synchronises: set-up only).
double rel_diff(const void* a, const float* ref, cudnnDataType_t t, std::int64_t n, unsigned* scratch) {
    CS_CUDA_CHECK(cudaMemset(scratch, 0, 2 * sizeof(unsigned)));
    by_type(t, [&](auto tag) {
        max_diff_kernel<<<grid_for(n), 256>>>(static_cast<const decltype(tag)*>(a), ref, n, scratch);
    });
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

