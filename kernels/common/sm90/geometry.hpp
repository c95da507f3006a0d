// The Hopper family's geometry on the host: the implicit GEMM's view of a problem after any
// transform (ConvGeom, which the kernels receive as it is), the transforms' parameters
// (PrepGeom, PrepWGeom; the transform kernels are in hopper_transforms.cuh), the Setup a plan derives
// from a problem, what every rung refuses (supports_common) and what TMA's im2col map cannot
// address (tma_geometry_reason). Plain C++: the rungs' supports() (supports.cpp) and the family
// spec (family.cpp) use it in every build, the kernels' files through hopper_core.cuh.
#pragma once

#include "conv_shape.hpp"
#include "variant.hpp"

#include <climits>
#include <cstdint>
#include <optional>
#include <string>

namespace cs::gpu::variants::hopper {

constexpr int kBM = 128;  // rows (output pixels) per CTA

// ---- the geometry the GEMM kernels see (after any transform) ------------------------------
struct ConvGeom {
    int N, H, W, C;       // NHWC input as the kernel reads it (C % 8 == 0)
    int R, S, stride, pad;
    int E, F;             // output size
    int M;
    int K;                // R*S*C
    int P;                // N*E*F
    int EF;
};

// ---- the transforms' parameters (the maps: hopper_transforms.cuh) -------------------------
struct PrepGeom {
    int C, H, W;      // source image
    int b, padf;      // block factor, padding folded into the transformed tensor
    int Hp, Wp, Cp;   // transformed image (NHWC)
    int src_nchw;     // source layout
};

struct PrepWGeom {
    int M, C, R, S;   // source filters
    int b;
    int Rp, Sp, Cp;   // transformed filters (KRSC)
    int src_kcrs;     // source layout: KCRS (nchw problems) or KRSC
};

// The tap packing (make_setup's pack_es): a layer of few channels whose packed R x S x C taps
// fit kPackMaxRowBytes becomes a 1x1 GEMM over its E x F output pixels, each row the pixel's
// R*S*C input values padded to Kp (a multiple of 8). Without it, C pads to 8 channels and
// each of the R*S taps loads 128-pixel boxes of 16-byte rows (VGG's 3-channel first layer: a
// sixth of cuDNN's speed, results/h200's networks sweep); packed, one 64- or 128-byte row
// per pixel, at the price of writing and reading E*F*Kp elements per image.
// a'[n][e][f][k] = in[n][c][e*stride - pad + r][f*stride - pad + s] for k = (r*S + s)*C + c < R*S*C
//                  (zero outside the image and for k >= R*S*C);
// w'[m][k]       = w[m][c][r][s] (KCRS source) or w[m][r][s][c] (KRSC), zero for k >= R*S*C.
struct PackGeom {
    int C, H, W, R, S, stride, pad, E, F;
    int Kp;        // packed row: R*S*C rounded up to 8
    int src_nchw;  // source layout (the weights: KCRS where 1)
};
// The most bytes a packed row may have. In the 2-byte classes ResNet's stem (C=3, 7x7, stride
// 2: 147 elements, 304 bytes) packs, and ran as fast as space-to-depth; in fp32 its 608-byte
// rows ran far slower than space-to-depth (results/h200/networks/auto_resnet50_n32.csv.gz
// against heuristic_resnet50_n32.csv.gz), so fp32 rows stop at 80 elements. AlexNet's conv1
// (363, where space-to-depth's 48 channels run 9 taps) does not pack. kPackMaxK: the most
// elements (the 2-byte classes'), the size of the kernels' per-block tap tables.
constexpr int kPackMaxRowBytes = 320;
constexpr int kPackMaxK = kPackMaxRowBytes / 2;

// Packed element k's channel and tap (k < R*S*C: k = (r*S + s)*C + c). The functions below
// are constexpr, so that the transform kernels call them (--expt-relaxed-constexpr).
struct PackTap {
    int c, r, s;
};
constexpr PackTap pack_tap(const PackGeom& g, int k) {
    const int rs = k / g.C;
    return PackTap{k % g.C, rs / g.S, rs % g.S};
}
// Where packed element k of output pixel (e, f) of image n reads the source (-1: zero).
constexpr std::int64_t pack_source(const PackGeom& g, int n, int e, int f, int k) {
    if (k >= g.R * g.S * g.C) return -1;
    const PackTap t = pack_tap(g, k);
    const int y = e * g.stride - g.pad + t.r, x = f * g.stride - g.pad + t.s;
    if (y < 0 || y >= g.H || x < 0 || x >= g.W) return -1;
    return g.src_nchw ? ((std::int64_t(n) * g.C + t.c) * g.H + y) * g.W + x
                      : ((std::int64_t(n) * g.H + y) * g.W + x) * g.C + t.c;
}
// The input kernel's staging (prep_pack_rows_kernel): a block per output row (n, e) holds the
// R source rows y = e*stride - pad + r of every channel in shared memory, W elements each,
// zeros for rows outside the image: NHWC [r][x][c], NCHW [c][r][x]. Its threads then write
// the row's packed pixels from there, so that the source is read once, coalesced, rather than
// by scattered 2- or 4-byte loads per packed element.
constexpr int pack_stage_elems(const PackGeom& g) { return g.R * g.W * g.C; }
constexpr int pack_stage_index(const PackGeom& g, int r, int x, int c) {
    return g.src_nchw ? (c * g.R + r) * g.W + x : (r * g.W + x) * g.C + c;
}
constexpr int pack_stage_step(const PackGeom& g) { return g.src_nchw ? 1 : g.C; }  // staged elements a column
// Packed element k < R*S*C: its column offset from f*stride, and its staged index at column
// f = 0 (the pixel's adds f * stride * pack_stage_step).
struct PackStageTap {
    int dx, off;
};
constexpr PackStageTap pack_stage_tap(const PackGeom& g, int k) {
    const PackTap t = pack_tap(g, k);
    const int dx = t.s - g.pad;
    return PackStageTap{dx, pack_stage_index(g, t.r, 0, t.c) + dx * pack_stage_step(g)};
}
// Where packed element k of output column f reads the staged rows (-1: zero).
constexpr int pack_stage_source(const PackGeom& g, int f, int k) {
    if (k >= g.R * g.S * g.C) return -1;
    const PackStageTap t = pack_stage_tap(g, k);
    const int x = f * g.stride + t.dx;
    if (x < 0 || x >= g.W) return -1;
    return t.off + f * g.stride * pack_stage_step(g);
}
// Where packed weight element k of filter m reads the source filters (-1: zero).
constexpr std::int64_t pack_weight_source(const PackGeom& g, int m, int k) {
    if (k >= g.R * g.S * g.C) return -1;
    const PackTap t = pack_tap(g, k);
    return g.src_nchw ? ((std::int64_t(m) * g.C + t.c) * g.R + t.r) * g.S + t.s
                      : ((std::int64_t(m) * g.R + t.r) * g.S + t.s) * g.C + t.c;
}

// ---- what a problem needs before the GEMM -------------------------------------------------
struct Setup {
    ConvShape s{};           // the layer
    bool src_nchw = false;   // problem layout
    int b = 1, padf = 0;     // transform parameters (see PrepGeom)
    bool tin = false;        // input transformed into the workspace
    bool tw = false;         // weights transformed into the workspace
    int parts = 1;           // channel blocks per transformed pixel (3: the 3xTF32 split)
    bool pack = false;       // the taps packed into a 1x1 GEMM (PackGeom)
    PackGeom pk{};
    ConvGeom g{};            // the GEMM's geometry (N set per call)
    PrepGeom pg{};
    PrepWGeom pw{};
    std::int64_t src_img = 0;   // elements of one source image
    std::int64_t ws_img = 0;    // elements of one transformed image
    std::int64_t out_img = 0;   // elements of one output image
    std::int64_t w_elems = 0;   // transformed weights
    // in_loader: the GEMM's loader does the input's transform (the weights' kernel only in run)
    std::string what(bool in_loader = false) const {
        std::string r;
        if (parts == 3)
            r = "split into high and low parts: input [hi, hi, lo], weights [hi, lo, hi] as 3x" +
                std::to_string(g.C / 3) + " channels, ";
        if (pack) {
            r += "taps packed: C=" + std::to_string(s.C) + " " + std::to_string(s.R) + "x" + std::to_string(s.S) +
                 " stride " + std::to_string(s.stride) + " -> K=" + std::to_string(s.R * s.S * s.C) + " padded to " +
                 std::to_string(pk.Kp) + ", a 1x1 GEMM on " + std::to_string(g.H) + "x" + std::to_string(g.W) +
                 " (" + (src_nchw ? "NCHW" : "NHWC") + " source, transform kernels in run)";
        } else if (tin) {
            if (b > 1)
                r += "space-to-depth " + std::to_string(b) + "x" + std::to_string(b) + ": C=" + std::to_string(s.C) +
                    " " + std::to_string(s.R) + "x" + std::to_string(s.S) + " stride " + std::to_string(s.stride) +
                    " -> C'=" + std::to_string(g.C) + " " + std::to_string(g.R) + "x" + std::to_string(g.S) +
                    " stride 1 on " + std::to_string(g.H) + "x" + std::to_string(g.W) +
                    (in_loader ? " (the input's in the GEMM's loader, the weights' kernel in run)"
                               : " (transform kernels in run)");
            else
                r += std::string(src_nchw ? "NCHW->NHWC" : "NHWC") +
                    (g.C != s.C ? " with channels padded " + std::to_string(s.C) + "->" + std::to_string(g.C) : "") +
                    (in_loader ? " in the GEMM's loader, the weights' kernel in run" : " transform kernels in run");
        } else {
            r = "NHWC read in place";
        }
        return r;
    }
};

inline int round_up(int x, int m) { return (x + m - 1) / m * m; }

// parts = 3: the 3xTF32 split (Split3), which always transforms both operands. pack_es: where
// not 0, the rung's plan runs the tap packing (PackGeom) with operands of pack_es bytes where it
// applies: a layer whose channels need padding, unsplit, whose packed row (R*S*C taps rounded
// up to 8) fits kPackMaxRowBytes.
inline Setup make_setup(const Problem& p, int parts = 1, int pack_es = 0) {
    Setup u;
    u.parts = parts;
    const ConvShape s = conv_shape(p.layer);
    u.s = s;
    u.src_nchw = p.layout == Layout::nchw;
    u.src_img = std::int64_t(s.C) * s.H * s.W;
    u.out_img = std::int64_t(s.M) * s.E * s.F;
    const bool cpad = s.C % 8 != 0;
    const std::int64_t taps = std::int64_t(s.R) * s.S * s.C;
    if (pack_es > 0 && cpad && parts == 1 && taps <= kPackMaxK && round_up(int(taps), 8) * pack_es <= kPackMaxRowBytes &&
        std::int64_t(s.E) * s.F * kPackMaxK <= INT_MAX) {
        const int Kp = round_up(int(taps), 8);
        u.pack = u.tin = u.tw = true;
        u.pk = PackGeom{s.C, s.H, s.W, s.R, s.S, s.stride, s.pad, s.E, s.F, Kp, u.src_nchw ? 1 : 0};
        ConvGeom& g = u.g;
        g.N = 0, g.H = s.E, g.W = s.F, g.C = Kp;
        g.R = g.S = g.stride = 1, g.pad = 0;
        g.E = s.E, g.F = s.F, g.M = s.M, g.K = Kp, g.P = 0, g.EF = s.E * s.F;
        u.ws_img = std::int64_t(s.E) * s.F * Kp;
        u.w_elems = std::int64_t(s.M) * Kp;
        return u;
    }
    u.b = (cpad && s.stride > 1) ? s.stride : 1;
    u.padf = u.b > 1 ? s.pad : 0;
    u.tin = cpad || u.src_nchw || parts > 1;
    // The filters' copy where their bytes change: the channel padding / space-to-depth, the
    // split, or NCHW's KCRS -> KRSC, which for 1x1 filters is the same bytes (a copy of every
    // filter each run had made ResNet's NCHW 1x1 layers at N=1 several times cuDNN's time:
    // results/h200/networks/pdl_nchw.csv.gz)
    u.tw = cpad || parts > 1 || (u.src_nchw && (s.R > 1 || s.S > 1));
    const int Cp = u.tin ? round_up(s.C * u.b * u.b, 8) : s.C;
    const int Hp = u.b > 1 ? (s.H + 2 * s.pad + u.b - 1) / u.b : s.H;
    const int Wp = u.b > 1 ? (s.W + 2 * s.pad + u.b - 1) / u.b : s.W;
    const int Rp = (s.R + u.b - 1) / u.b, Sp = (s.S + u.b - 1) / u.b;
    ConvGeom& g = u.g;
    g.N = 0;
    g.H = Hp, g.W = Wp, g.C = parts * Cp;
    g.R = Rp, g.S = Sp;
    g.stride = u.b > 1 ? 1 : s.stride;
    g.pad = u.b > 1 ? 0 : s.pad;
    g.E = s.E, g.F = s.F;
    g.M = s.M;
    g.K = Rp * Sp * g.C;
    g.P = 0;
    g.EF = s.E * s.F;
    u.pg = PrepGeom{s.C, s.H, s.W, u.b, u.padf, Hp, Wp, Cp, u.src_nchw ? 1 : 0};
    u.pw = PrepWGeom{s.M, s.C, s.R, s.S, u.b, Rp, Sp, Cp, u.src_nchw ? 1 : 0};
    u.ws_img = std::int64_t(Hp) * Wp * g.C;
    u.w_elems = std::int64_t(s.M) * g.K;
    return u;
}

inline ConvGeom geom_for(const Setup& u, std::int64_t n) {
    ConvGeom g = u.g;
    g.N = int(n);
    g.P = int(n * g.EF);
    return g;
}

// Reasons every variant of the family shares.
inline std::optional<std::string> supports_common(const Problem& p, const cudaDeviceProp& prop) {
    if (prop.major != 9 || prop.minor != 0)
        return std::string("needs sm_90 (Hopper): the family is built for sm_90a (wgmma, TMA)");
    const Setup u = make_setup(p);
    const std::int64_t rows = p.N * std::int64_t(u.g.EF);
    if (rows > std::int64_t(INT_MAX) - kBM) return "N*E*F = " + std::to_string(rows) + " rows exceed 32-bit indices";
    if (std::int64_t(u.g.K) > INT_MAX / 2) return std::string("K = R*S*C exceeds 32-bit indices");
    if (std::int64_t(u.g.H) * u.g.W * u.g.C > INT_MAX) return std::string("one image's H*W*C exceeds 32-bit offsets");
    if (std::int64_t(p.layer.M) * u.g.EF > INT_MAX) return std::string("one image's M*E*F exceeds 32-bit offsets");
    return std::nullopt;
}

// ---- TMA's im2col map (the maps themselves: hopper_tma.cuh) -------------------------------
// Bounding-box corners of the im2col map (W then H, innermost first, as the dimensions):
// lower = -pad, upper such that exactly F (E) start positions lie in the box at the stride.
struct Corners {
    int lo_w, lo_h, up_w, up_h;
};
inline Corners corners(const ConvGeom& g) {
    return Corners{-g.pad, -g.pad, (g.F - 1) * g.stride - g.pad - (g.W - 1), (g.E - 1) * g.stride - g.pad - (g.H - 1)};
}

// What the im2col map cannot express for this geometry (empty: fine).
inline std::optional<std::string> tma_geometry_reason(const ConvGeom& g) {
    const Corners c = corners(g);
    auto in8 = [](int v) { return v >= -128 && v <= 127; };
    if (!in8(c.lo_w) || !in8(c.lo_h) || !in8(c.up_w) || !in8(c.up_h))
        return std::string("the im2col bounding box (padding, filter size) is outside TMA's [-128, 127] corner range");
    if (g.stride > 8) return std::string("stride > 8: TMA's traversal stride is at most 8");
    if (g.R > 65535 || g.S > 65535) return std::string("filter taps beyond TMA's 16-bit im2col offsets");
    return std::nullopt;
}

}  // namespace cs::gpu::variants::hopper
