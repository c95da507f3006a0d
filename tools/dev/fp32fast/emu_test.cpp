// emu_test.cpp — the fp32-fast family's kernels on the CPU emulator (emu.hpp) against a
// double-precision direct convolution, on small odd shapes that exercise every branch:
// padding 0/1/2, partial tiles, channel chunks that do not divide C, M not a multiple of the
// block, several k-tiles, stride 4 with an 11x11 filter (GEMM variants), both thread orders.
// "wino5": the 5x5 Winograd variants (F(2x2,5x5) both tiles, F(3x3,5x5)) on conv2's shape at
// N=4 (C=96, 27x27, pad 2, M=256; argument "wino5-conv2", ~20 s) and on odd 5x5 shapes.
//
// Build and run (development machine, no GPU):
//   g++ -std=c++17 -O1 -DFP32FAST_EMU -include tools/dev/fp32fast/emu.hpp -I bench -I kernels/common \
//       -I kernels/fp32fast -I core -I /usr/local/cuda/include -x c++ tools/dev/fp32fast/emu_test.cpp -o /tmp/emu_test
//   /tmp/emu_test && EMU_REVERSE=1 /tmp/emu_test
#include "simt_gemm.cu"
#include "split_tf32.cu"
#include "winograd_fused.cuh"  // the Winograd rungs' kernels (their .cu files hold only the plans)

#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

using namespace cs::gpu::variants::fp32fast;

struct Shape {
    const char* name;
    int N, C, H, W, M, R, S, stride, pad;
    int E() const { return (H + 2 * pad - R) / stride + 1; }
    int F() const { return (W + 2 * pad - S) / stride + 1; }
};

struct Data {
    std::vector<float> in, w, out;
    std::vector<double> ref;
    double ref_max = 0;
};

static Data make_data(const Shape& s, unsigned seed) {
    Data d;
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    d.in.resize(std::size_t(s.N) * s.C * s.H * s.W);
    d.w.resize(std::size_t(s.M) * s.C * s.R * s.S);
    const float scale = std::sqrt(3.0f / float(s.C * s.R * s.S));
    for (auto& x : d.in) x = u(rng);
    for (auto& x : d.w) x = u(rng) * scale;
    const int E = s.E(), F = s.F();
    d.ref.assign(std::size_t(s.N) * s.M * E * F, 0.0);
    for (int n = 0; n < s.N; ++n)
        for (int m = 0; m < s.M; ++m)
            for (int e = 0; e < E; ++e)
                for (int f = 0; f < F; ++f) {
                    double acc = 0;
                    for (int c = 0; c < s.C; ++c)
                        for (int r = 0; r < s.R; ++r)
                            for (int q = 0; q < s.S; ++q) {
                                const int ih = e * s.stride - s.pad + r, iw = f * s.stride - s.pad + q;
                                if (ih < 0 || ih >= s.H || iw < 0 || iw >= s.W) continue;
                                acc += double(d.in[((std::size_t(n) * s.C + c) * s.H + ih) * s.W + iw]) *
                                       double(d.w[((std::size_t(m) * s.C + c) * s.R + r) * s.S + q]);
                            }
                    d.ref[((std::size_t(n) * s.M + m) * E + e) * F + f] = acc;
                    d.ref_max = std::max(d.ref_max, std::fabs(acc));
                }
    d.out.assign(d.ref.size(), std::nanf(""));
    return d;
}

static int failures = 0;

static void check(const char* what, const Shape& s, const Data& d, double threshold) {
    double maxerr = 0;
    std::size_t bad = 0, first_bad = SIZE_MAX;
    for (std::size_t i = 0; i < d.ref.size(); ++i) {
        const double o = d.out[i];
        if (!std::isfinite(o)) {
            ++bad;
            if (first_bad == SIZE_MAX) first_bad = i;
            continue;
        }
        maxerr = std::max(maxerr, std::fabs(o - d.ref[i]));
    }
    const double rel = maxerr / d.ref_max;
    const bool ok = bad == 0 && rel <= threshold;
    if (!ok) ++failures;
    std::printf("%-6s %-22s %-10s max_rel_err %.3e  nonfinite %zu%s\n", ok ? "PASS" : "FAIL", what, s.name, rel, bad,
                bad ? (" first at " + std::to_string(first_bad)).c_str() : "");
}

template <class Cfg>
static void run_wino(const char* what, const Shape& s, double thr) {
    Data d = make_data(s, 1234u + unsigned(s.C));
    const WinoDims dims = wino_dims<Cfg>(s.C, s.H, s.W, s.M, s.pad);
    std::vector<float> U(std::size_t(dims.Cp) * Cfg::NX * dims.Mp, std::nanf(""));
    wino_enqueue<Cfg>(dims, d.in.data(), d.w.data(), U.data(), d.out.data(), s.N, nullptr);
    check(what, s, d, thr);
}

static void run_simt(int cfg, const Shape& s, int parts = 1) {
    Data d = make_data(s, 77u + unsigned(s.M));
    const GemmShape g = gemm_shape(s.C, s.H, s.W, s.M, s.R, s.S, s.stride, s.pad, kSimtBK, kSimtMaxBM);
    std::vector<float> wt(std::size_t(g.Kp) * g.Mp, std::nanf(""));
    const auto tbl = im2col_row_table(g);
    const int P = s.N * g.EF;
    const int ktiles = g.Kp / kSimtCfgs[cfg].bk, kps = (ktiles + parts - 1) / parts;
    parts = (ktiles + kps - 1) / kps;
    std::vector<float> ws(parts > 1 ? std::size_t(parts) * std::size_t(split_stride_of(g, P)) : 0, std::nanf(""));
    simt_gemm_enqueue(cfg, d.in.data(), d.w.data(), wt.data(), tbl.data(), d.out.data(), ws.data(), g, P, parts, kps,
                      nullptr);
    check((std::string("simt-gemm cfg") + std::to_string(cfg) + " parts " + std::to_string(parts)).c_str(), s, d, 1e-4);
}

template <bool SPLIT>
static void run_tc(const Shape& s) {
    Data d = make_data(s, 99u + unsigned(s.M));
    const GemmShape g = gemm_shape(s.C, s.H, s.W, s.M, s.R, s.S, s.stride, s.pad, TcTile<SPLIT>::BK, TcTile<SPLIT>::BM);
    std::vector<float> wt(std::size_t(g.Kp) * g.Mp * TcTile<SPLIT>::H, std::nanf(""));
    const auto tbl = im2col_row_table(g);
    const int P = s.N * g.EF;
    split_tf32_enqueue<SPLIT>(d.in.data(), d.w.data(), wt.data(), tbl.data(), d.out.data(), g, P, nullptr);
    check(SPLIT ? "split-tf32 (3x)" : "tf32-mma (1x)", s, d, SPLIT ? 1e-4 : 5e-3);
}

int main(int argc, char** argv) {
    const char* rev = std::getenv("EMU_REVERSE");
    emu::st().reverse = rev && rev[0] == '1';
    const std::string only = argc > 1 ? argv[1] : "";
    std::printf("thread order: %s\n", emu::st().reverse ? "reverse" : "forward");

    const Shape odd1{"odd1", 3, 5, 11, 11, 7, 3, 3, 1, 1};
    const Shape odd2{"odd2", 2, 19, 9, 14, 70, 3, 3, 1, 2};
    const Shape odd3{"odd3", 1, 17, 13, 13, 33, 3, 3, 1, 0};
    const Shape s5{"s2r5", 2, 6, 20, 20, 9, 5, 5, 2, 1};
    const Shape c1{"conv1ish", 2, 3, 35, 35, 10, 11, 11, 4, 0};
    const Shape big{"m130", 2, 9, 12, 12, 130, 3, 3, 1, 1};

    if (only.empty() || only == "wino") {
        for (const Shape* s : {&odd1, &odd2, &odd3}) {
            run_wino<WinoF2>("winograd-f2x2", *s, 1e-4);
            run_wino<WinoCfg<2, 64, 32, 32, 16, false>>("probe-f2x2-bc16", *s, 1e-4);
            run_wino<WinoCfg<2, 64, 32, 32, 16, true>>("probe-f2x2-2pass", *s, 1e-4);
            run_wino<WinoF4>("winograd-f4x4", *s, 1e-4);
            run_wino<WinoF4W>("winograd-f4x4 32x32", *s, 1e-4);
        }
    }
    if (only.empty() || only == "wino5" || only == "wino5-conv2") {
        const Shape o5[] = {{"odd5_p2", 2, 19, 11, 13, 33, 5, 5, 1, 2},   // C, M not multiples of 8, 32
                            {"odd5_p0", 3, 5, 9, 9, 7, 5, 5, 1, 0},       // no padding, 5x5 outputs
                            {"odd5_p1", 1, 17, 14, 10, 40, 5, 5, 1, 1},   // non-square, partial tiles
                            {"odd_c33_5x5", 3, 33, 11, 13, 9, 5, 5, 1, 2},  // tests/gpu's 5x5 shape
                            {"odd5_5x5in", 2, 9, 5, 5, 65, 5, 5, 1, 2}};  // image = one window
        for (const Shape& s : o5) {
            run_wino<WinoF25>("winograd-f2x2-5x5", s, 1e-4);
            run_wino<WinoF25W>("winograd-f2x2-5x5 32x32", s, 1e-4);
            run_wino<WinoF35>("winograd-f3x3-5x5", s, 1e-4);
        }
        if (only == "wino5-conv2") {
            const Shape conv2{"conv2 N=4", 4, 96, 27, 27, 256, 5, 5, 1, 2};
            run_wino<WinoF25>("winograd-f2x2-5x5", conv2, 1e-4);
            run_wino<WinoF25W>("winograd-f2x2-5x5 32x32", conv2, 1e-4);
            run_wino<WinoF35>("winograd-f3x3-5x5", conv2, 1e-4);
        }
    }
    if (only.empty() || only == "simt") {
        for (int cfg = 0; cfg < kSimtNumCfgs; ++cfg)
            for (const Shape* s : {&odd1, &odd2, &s5, &c1, &big}) run_simt(cfg, *s);
        for (const Shape* s : {&odd1, &odd2, &s5, &c1, &big}) run_simt(kSimtDefaultCfg, *s, 3);
    }
    if (only.empty() || only == "tc") {
        for (const Shape* s : {&odd1, &s5, &big}) {
            run_tc<true>(*s);
            run_tc<false>(*s);
        }
    }
    if (only == "harness") {  // the odd shapes of tests/gpu (gpu_test_util.hpp), N = 3
        const Shape hs[] = {{"odd_c3_s2", 3, 3, 19, 23, 5, 5, 3, 2, 1},    {"odd_c7_p1", 3, 7, 9, 9, 4, 3, 3, 1, 1},
                            {"odd_tile2", 3, 2, 40, 37, 3, 4, 4, 1, 0},    {"odd_1x1", 3, 5, 6, 7, 6, 1, 1, 1, 0},
                            {"odd_tile3", 3, 1, 70, 70, 2, 3, 3, 1, 1},    {"odd_s4_c3", 3, 3, 35, 31, 7, 11, 11, 4, 0},
                            {"odd_c33_5x5", 3, 33, 11, 13, 9, 5, 5, 1, 2}};
        for (const Shape& s : hs) {
            if (s.R == 3 && s.S == 3 && s.stride == 1) {
                run_wino<WinoF2>("winograd-f2x2", s, 1e-4);
                run_wino<WinoF4>("winograd-f4x4", s, 1e-4);
                run_wino<WinoF4W>("winograd-f4x4 32x32", s, 1e-4);
            }
            if (s.R == 5 && s.S == 5 && s.stride == 1) {
                run_wino<WinoF25>("winograd-f2x2-5x5", s, 1e-4);
                run_wino<WinoF25W>("winograd-f2x2-5x5 32x32", s, 1e-4);
                run_wino<WinoF35>("winograd-f3x3-5x5", s, 1e-4);
            }
            run_simt(kSimtDefaultCfg, s);
            run_simt(kSimtDefaultCfg, s, 3);
            run_tc<true>(s);
            run_tc<false>(s);
        }
    }
    std::printf("%s: %d failure(s)\n", failures ? "FAILED" : "ALL PASS", failures);
    return failures ? 1 : 0;
}
