// Host emulation of hopper_transforms.cuh's transform (PrepRow: load, barrier, store per block) on
// the odd shapes and conv1, both source layouts, against the map written out element by
// element; the tf32 rounding (OperandOf<float>) the tf32 kernels' store applies; and the
// 3xTF32 split (Split3<true>: [hi, hi, lo] channel blocks, hi + lo within 2^-22 of x) and the
// 3xFP16 one (Split3Half<true>: half hi, hi, lo' = (x - hi) * 2^11, within 2^-21 of x).
// A CPU test (ctest: hopper_prep_emulation, label cpu): built by nvcc as host code only,
// exit status non-zero when any transformed element differs from the map.
#include "hopper_core.cuh"

#include <cmath>
#include <cstdio>
#include <vector>

using namespace cs;
using namespace cs::gpu;
using namespace cs::gpu::variants::hopper;

static Layer mk(const char* n, int C, int H, int W, int M, int R, int S, int st, int pad) {
    Layer l;
    l.name = n, l.C = C, l.H = H, l.W = W, l.M = M, l.R = R, l.S = S, l.stride = st, l.pad = pad;
    return l;
}

// The tap packing (geometry.hpp's PackGeom, the persistent rungs' make_setup(p, 1, es)): which
// layers it takes, and that the packed input times the packed weights, as the 1x1 GEMM the
// kernels then run, is the convolution (against a direct sum in double, both source layouts,
// edges and padding included; integer-valued data, so the sums are exact).
static int check_tap_packing() {
    int bad_total = 0;
    auto setup = [](const Layer& l, Layout lay) {
        Problem p;
        p.layer = l, p.N = 2, p.layout = lay;
        return make_setup(p, 1, 2);  // the 2-byte classes
    };
    // not packed: channels a multiple of 8, taps beyond kPackMaxK, and any setup asked without
    // an element size
    const Layer no[] = {mk("c8", 8, 9, 9, 24, 3, 3, 1, 1), mk("c3k11s4", 3, 35, 31, 7, 11, 11, 4, 0)};
    for (const Layer& l : no)
        if (setup(l, Layout::nhwc).pack) {
            std::printf("%-10s packed, which it must not be\n", l.name.c_str());
            ++bad_total;
        }
    {
        Problem p;
        p.layer = mk("vgg1", 3, 224, 224, 64, 3, 3, 1, 1), p.N = 1, p.layout = Layout::nhwc;
        const Setup u = make_setup(p);
        if (u.pack) std::printf("make_setup without an element size packed\n"), ++bad_total;
        // fp32 rows stop at kPackMaxRowBytes: VGG's first layer (27 -> 32 elements) packs, the
        // stem's 147 elements (608 bytes) do not, where 2-byte operands (304 bytes) do
        if (!make_setup(p, 1, 4).pack) std::printf("vgg1 did not pack in fp32\n"), ++bad_total;
        p.layer = mk("stem", 3, 224, 224, 64, 7, 7, 2, 3);
        if (make_setup(p, 1, 4).pack) std::printf("the stem packed in fp32\n"), ++bad_total;
        if (!make_setup(p, 1, 2).pack) std::printf("the stem did not pack in fp16\n"), ++bad_total;
    }
    const Layer yes[] = {mk("vgg1", 3, 224, 224, 64, 3, 3, 1, 1), mk("c3_7x9", 3, 7, 9, 5, 3, 3, 1, 1),
                         mk("c1_k5", 1, 11, 6, 3, 5, 5, 1, 2),    mk("c2_k3p0", 2, 9, 8, 7, 3, 3, 1, 0),
                         mk("c5_2x3", 5, 6, 7, 4, 2, 3, 1, 1),    mk("c3_1x1", 3, 5, 5, 9, 1, 1, 1, 0),
                         mk("stem", 3, 15, 14, 6, 7, 7, 2, 3),    mk("s2", 3, 19, 23, 5, 3, 3, 2, 1),
                         mk("c3k5", 3, 12, 12, 4, 5, 5, 1, 2)};
    for (const Layer& l : yes)
        for (Layout lay : {Layout::nchw, Layout::nhwc}) {
            const Setup u = setup(l, lay);
            const bool small = l.H * l.W <= 500;  // the direct check on small layers only
            if (!u.pack || u.g.R != 1 || u.g.S != 1 || u.g.stride != 1 || u.g.pad != 0 || u.g.C % 8 != 0 ||
                u.g.C < l.R * l.S * l.C || u.g.H != u.s.E || u.g.W != u.s.F) {
                std::printf("%-10s %s: not packed as a 1x1 GEMM of K=%d\n", l.name.c_str(),
                            lay == Layout::nchw ? "nchw" : "nhwc", u.g.C);
                ++bad_total;
                continue;
            }
            if (!small) continue;
            const PackGeom& g = u.pk;
            const int N = 2, E = u.s.E, F = u.s.F, Kp = g.Kp;
            std::vector<double> in(std::size_t(N) * l.C * l.H * l.W), w(std::size_t(l.M) * l.C * l.R * l.S);
            for (std::size_t i = 0; i < in.size(); ++i) in[i] = double(int(i * 7 % 13) - 6);
            for (std::size_t i = 0; i < w.size(); ++i) w[i] = double(int(i * 5 % 11) - 5);
            std::vector<double> a(std::size_t(N) * E * F * Kp), wp(std::size_t(l.M) * Kp);
            for (int n = 0; n < N; ++n)
                for (int e = 0; e < E; ++e)
                    for (int f = 0; f < F; ++f)
                        for (int k = 0; k < Kp; ++k) {
                            const std::int64_t src = pack_source(g, n, e, f, k);
                            a[((std::size_t(n) * E + e) * F + f) * Kp + k] = src < 0 ? 0.0 : in[std::size_t(src)];
                        }
            // The input kernel's staged rows (pack_stage_*): a block's R source rows per (n, e),
            // zeros outside the image, then each packed element read from them, the same as
            // pack_source's element.
            long stage_bad = 0;
            for (int n = 0; n < N; ++n)
                for (int e = 0; e < E; ++e) {
                    std::vector<double> st(std::size_t(pack_stage_elems(g)), -1.0);
                    for (int c = 0; c < l.C; ++c)
                        for (int r = 0; r < l.R; ++r)
                            for (int x = 0; x < l.W; ++x) {
                                const int y = e * l.stride - l.pad + r;
                                const bool in_img = y >= 0 && y < l.H;
                                const std::size_t src = lay == Layout::nchw
                                                            ? ((std::size_t(n) * l.C + c) * l.H + y) * l.W + x
                                                            : ((std::size_t(n) * l.H + y) * l.W + x) * l.C + c;
                                st[std::size_t(pack_stage_index(g, r, x, c))] = in_img ? in[src] : 0.0;
                            }
                    for (int f = 0; f < F; ++f)
                        for (int k = 0; k < Kp; ++k) {
                            const int si = pack_stage_source(g, f, k);
                            const double got = si < 0 ? 0.0 : st.at(std::size_t(si));
                            stage_bad += got != a[((std::size_t(n) * E + e) * F + f) * Kp + k];
                        }
                }
            if (stage_bad)
                std::printf("%-10s %s: the staged rows give %ld packed elements wrong\n", l.name.c_str(),
                            lay == Layout::nchw ? "nchw" : "nhwc", stage_bad);
            bad_total += stage_bad != 0;
            for (int m = 0; m < l.M; ++m)
                for (int k = 0; k < Kp; ++k) {
                    const std::int64_t src = pack_weight_source(g, m, k);
                    wp[std::size_t(m) * Kp + k] = src < 0 ? 0.0 : w[std::size_t(src)];
                }
            long bad = 0;
            const bool nchw = lay == Layout::nchw;
            for (int n = 0; n < N; ++n)
                for (int m = 0; m < l.M; ++m)
                    for (int e = 0; e < E; ++e)
                        for (int f = 0; f < F; ++f) {
                            double gemm = 0, direct = 0;
                            for (int k = 0; k < Kp; ++k)
                                gemm += a[((std::size_t(n) * E + e) * F + f) * Kp + k] * wp[std::size_t(m) * Kp + k];
                            for (int c = 0; c < l.C; ++c)
                                for (int r = 0; r < l.R; ++r)
                                    for (int s = 0; s < l.S; ++s) {
                                        const int y = e * l.stride - l.pad + r, x = f * l.stride - l.pad + s;
                                        if (y < 0 || y >= l.H || x < 0 || x >= l.W) continue;
                                        const double iv = nchw ? in[((std::size_t(n) * l.C + c) * l.H + y) * l.W + x]
                                                               : in[((std::size_t(n) * l.H + y) * l.W + x) * l.C + c];
                                        const double wv = nchw ? w[((std::size_t(m) * l.C + c) * l.R + r) * l.S + s]
                                                               : w[((std::size_t(m) * l.R + r) * l.S + s) * l.C + c];
                                        direct += iv * wv;
                                    }
                            bad += gemm != direct;
                        }
            std::printf("%-10s %s tap packing K=%d -> %d, a 1x1 GEMM on %dx%d: %ld wrong of %d\n", l.name.c_str(),
                        nchw ? "nchw" : "nhwc", l.R * l.S * l.C, Kp, E, F, bad, N * l.M * E * F);
            bad_total += bad != 0;
        }
    return bad_total;
}

int main() {
    const Layer ls[] = {mk("c8", 8, 9, 9, 24, 3, 3, 1, 1),          mk("c24s2", 24, 9, 11, 40, 3, 5, 2, 1),
                        mk("odd_c3_s2", 3, 19, 23, 5, 5, 3, 2, 1),   mk("odd_c7", 7, 9, 9, 4, 3, 3, 1, 1),
                        mk("tile2", 2, 40, 37, 3, 4, 4, 1, 0),       mk("tile3", 1, 70, 70, 2, 3, 3, 1, 1),
                        mk("s4c3", 3, 35, 31, 7, 11, 11, 4, 0),      mk("c33", 33, 11, 13, 9, 5, 5, 1, 2),
                        mk("conv1", 3, 227, 227, 96, 11, 11, 4, 0),  mk("conv2", 96, 27, 27, 256, 5, 5, 1, 2),
                        mk("conv3", 256, 13, 13, 384, 3, 3, 1, 1),   mk("c40", 40, 13, 13, 200, 3, 3, 1, 1),
                        mk("conv4", 384, 13, 13, 384, 3, 3, 1, 1),   mk("c300_s3", 3, 40, 41, 8, 7, 7, 3, 2)};
    int bad_total = 0;
    // The tf32 rounding the transforms apply (OperandOf<float>, host branch: round to nearest,
    // ties away, on the 13 low mantissa bits; the device branch is cvt.rna.tf32.f32).
    {
        const float one = 1.0f, ulp = std::ldexp(1.0f, -10), half = std::ldexp(1.0f, -11), e = std::ldexp(1.0f, -23);
        const float cases[][2] = {{one, one},         {one + half, one + ulp},  {one + half - e, one},
                                  {-(one + half), -(one + ulp)}, {3.0f + 3 * half, 3.0f + 2 * ulp}, {0.0f, 0.0f}};
        for (const auto& c : cases)
            if (OperandOf<float>::op(c[0]) != c[1]) {
                std::printf("OperandOf<float>(%.9g) = %.9g, want %.9g\n", c[0], OperandOf<float>::op(c[0]), c[1]);
                ++bad_total;
            }
    }
    // rnd 0: the plain map (PrepRow::Keep); rnd 1: the tf32 kernels' store (OperandOf<float>)
    // on values with low mantissa bits set, against the rounded map; rnd 2: the 3xTF32 split.
    for (int rnd = 0; rnd < 4; ++rnd)
    for (const Layer& l : ls)
        for (Layout lay : {Layout::nchw, Layout::nhwc}) {
            const int N = 2;
            const Problem p{l, N, lay, {}};
            const int parts = rnd >= 2 ? 3 : 1;
            const Setup u = make_setup(p, parts);
            if (!u.tin) continue;
            const PrepGeom& g = u.pg;
            std::vector<float> in(std::size_t(N) * l.C * l.H * l.W);
            for (std::size_t i = 0; i < in.size(); ++i)  // nonzero, distinct-ish (3xFP16: in fp16's range)
                in[i] = rnd == 3 ? ((float(i % 9973) + 1.0f) * 1.0001234f + 0.3f) / 4096.0f
                        : rnd    ? (float(i % 9973) + 1.0f) * 1.0001234f + 0.3f
                                 : float(i % 9973) + 1.0f;
            std::vector<float> out(std::size_t(N) * u.ws_img, -1.0f);
            std::vector<__half> outh(rnd == 3 ? std::size_t(N) * u.ws_img : 0);
            const int Wt = g.Wp * g.b;
            std::vector<float> tile(std::size_t(g.b) * g.C * Wt);
            for (int n = 0; n < N; ++n)
                for (int Y = 0; Y < g.Hp; ++Y) {
                    std::fill(tile.begin(), tile.end(), -7.0f);
                    for (int t = 0; t < 256; ++t) PrepRow::load<float>(in.data(), tile.data(), g, n, Y, t, 256, 0.0f);
                    for (int t = 0; t < 256; ++t)
                        if (rnd == 3)
                            PrepRow::store<float, Split3Half<true>, __half>(tile.data(), outh.data(), g, n, Y, t, 256,
                                                                            0.0f);
                        else if (rnd == 2)
                            PrepRow::store<float, Split3<true>>(tile.data(), out.data(), g, n, Y, t, 256, 0.0f);
                        else if (rnd)
                            PrepRow::store<float, OperandOf<float>>(tile.data(), out.data(), g, n, Y, t, 256, 0.0f);
                        else
                            PrepRow::store<float>(tile.data(), out.data(), g, n, Y, t, 256, 0.0f);
                }
            long bad = 0;
            for (int n = 0; n < N; ++n)
                for (int Y = 0; Y < g.Hp; ++Y)
                    for (int X = 0; X < g.Wp; ++X)
                        for (int cp = 0; cp < g.Cp; ++cp) {
                            float want = 0.0f;
                            if (cp < l.C * g.b * g.b) {
                                const int q = cp / l.C, c = cp % l.C, dy = q / g.b, dx = q % g.b;
                                const int y = g.b * Y + dy - g.padf, x = g.b * X + dx - g.padf;
                                if (y >= 0 && y < l.H && x >= 0 && x < l.W)
                                    want = g.src_nchw ? in[((std::size_t(n) * l.C + c) * l.H + y) * l.W + x]
                                                      : in[((std::size_t(n) * l.H + y) * l.W + x) * l.C + c];
                            }
                            const std::size_t pix = ((std::size_t(n) * g.Hp + Y) * g.Wp + X) * g.Cp * parts;
                            const float* px = &out[pix];
                            if (rnd == 3) {
                                const __half* ph = &outh[pix];
                                const float hi = __half2float(ph[cp]), hi2 = __half2float(ph[g.Cp + cp]);
                                const float lo = __half2float(ph[2 * g.Cp + cp]) / 2048.0f;
                                const double res = std::fabs(double(want) - double(hi) - double(lo));
                                if (hi != __half2float(__float2half_rn(want)) || hi2 != hi ||
                                    res > std::ldexp(std::fabs(double(want)), -21))
                                    ++bad;
                            } else if (rnd == 2) {
                                const float hi = px[cp], hi2 = px[g.Cp + cp], lo = px[2 * g.Cp + cp];
                                const bool tf32 = OperandOf<float>::op(hi) == hi && OperandOf<float>::op(lo) == lo;
                                const double res = std::fabs(double(want) - double(hi) - double(lo));
                                if (hi != OperandOf<float>::op(want) || hi2 != hi || !tf32 ||
                                    res > std::ldexp(std::fabs(double(want)), -22))
                                    ++bad;
                            } else if (px[cp] != (rnd ? OperandOf<float>::op(want) : want)) {
                                ++bad;
                            }
                        }
            std::printf("%-10s %s%s b=%d C'=%d %dx%d: %ld wrong of %zu\n", l.name.c_str(), g.src_nchw ? "nchw" : "nhwc",
                        rnd == 3 ? " 3xfp16-split" : rnd == 2 ? " 3xtf32-split" : rnd ? " tf32-rounded" : "", g.b, g.Cp, g.Hp, g.Wp, bad, out.size());
            bad_total += bad != 0;
        }
    bad_total += check_tap_packing();
    std::printf("%s\n", bad_total ? "EMULATION FAILED" : "emulation: all transforms exact");
    return bad_total != 0;
}
