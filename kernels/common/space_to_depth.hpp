// Space-to-depth: a strided convolution rewritten as a stride-1 one with b*b times the
// channels, for the cudnn-<class>-s2d rows (cudnn_s2d.cu). The index map is host-callable
// (tests/test_space_to_depth.cpp checks it on the CPU); the transform kernels are in
// space_to_depth.cu.
//
// For a layer of stride b > 1 and padding p (C channels, H x W, R x S filters, E x F out):
//   in'[n][c'][Y][X] = in[n][c][b*Y + dy - p][b*X + dx - p]   (zero outside the image)
//   w'[m][c'][R'][S'] = w[m][c][b*R' + dy][b*S' + dx]        (zero where b*R'+dy >= R or b*S'+dx >= S)
// with c' = (dy*b + dx)*C + c, C' = C*b*b, R' = ceil(R/b), S' = ceil(S/b), H' = E + R' - 1,
// W' = F + S' - 1. Then the R' x S' convolution of stride 1 without padding of in' with w' is
// the layer's E x F output: its tap (R'', S'', c') is the layer's tap (b*R''+dy, b*S''+dx, c)
// at input row b*(e+R'') + dy - p = b*e - p + (b*R''+dy), likewise for columns, and the
// taps past R or S carry zero weights. AlexNet's conv1 (C=3, 227x227, 11x11 stride 4):
// C'=48, 57x57, 3x3 stride 1, the same 55x55 output.
// Either tensor may be NCHW or NHWC (weights KCRS or KRSC); the element is copied bit for bit.
#pragma once

#include "layer.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>

#if defined(__CUDACC__)
#define CS_S2D_HD __host__ __device__
#else
#define CS_S2D_HD
#endif

namespace cs::gpu::s2d {

struct Geom {
    int C = 0, H = 0, W = 0;     // source image
    int b = 1, pad = 0;          // block factor (the layer's stride), the layer's padding
    int Cp = 0, Hp = 0, Wp = 0;  // rewritten image
    int M = 0, R = 0, S = 0;     // source filters
    int Rp = 0, Sp = 0;          // rewritten filters
};

inline Geom geom(const Layer& l) {
    Geom g;
    g.C = l.C, g.H = l.H, g.W = l.W, g.b = l.stride, g.pad = l.pad;
    g.M = l.M, g.R = l.R, g.S = l.S;
    g.Rp = (l.R + l.stride - 1) / l.stride;
    g.Sp = (l.S + l.stride - 1) / l.stride;
    g.Cp = l.C * l.stride * l.stride;
    g.Hp = l.E() + g.Rp - 1;
    g.Wp = l.F() + g.Sp - 1;
    return g;
}

// The rewritten layer ("<name>-s2d"): C' x H' x W', M filters of R' x S', stride 1, no padding.
inline Layer rewritten(const Layer& l) {
    const Geom g = geom(l);
    Layer r;
    r.name = l.name + "-s2d";
    r.C = g.Cp, r.H = g.Hp, r.W = g.Wp, r.M = l.M, r.R = g.Rp, r.S = g.Sp, r.stride = 1, r.pad = 0;
    return r;
}

// Channel c' = (dy b + dx) C + c of the rewrite: its row dy and column dx in the b x b block,
// and its source channel c.
struct Channel {
    int dy, dx, c;
};
CS_S2D_HD inline Channel channel(int cp, int C, int b) {
    const int q = cp / C, dy = q / b;
    return {dy, q - dy * b, cp - q * C};
}

// Offset of element (n, c, y, x) of an N x C x H x W tensor stored NCHW or NHWC.
CS_S2D_HD inline std::int64_t offset(bool nchw, std::int64_t n, int c, int y, int x, int C, int H, int W) {
    return nchw ? ((n * C + c) * H + y) * std::int64_t(W) + x : ((n * H + y) * std::int64_t(W) + x) * C + c;
}

// The source element of rewritten input element (n, c', Y, X): its offset in the source
// tensor (layout src_nchw), or -1 where in' is zero (outside the image).
CS_S2D_HD inline std::int64_t input_source(const Geom& g, bool src_nchw, std::int64_t n, int cp, int Y, int X) {
    const Channel ch = channel(cp, g.C, g.b);
    const int y = g.b * Y + ch.dy - g.pad, x = g.b * X + ch.dx - g.pad;
    if (y < 0 || y >= g.H || x < 0 || x >= g.W) return -1;
    return offset(src_nchw, n, ch.c, y, x, g.C, g.H, g.W);
}

// The source element of rewritten filter element (m, c', R', S'): its offset in the source
// filters (KCRS when kcrs, else KRSC), or -1 where w' is zero (past R or S).
CS_S2D_HD inline std::int64_t weight_source(const Geom& g, bool kcrs, int m, int cp, int rp, int sp) {
    const Channel ch = channel(cp, g.C, g.b);
    const int r = g.b * rp + ch.dy, s = g.b * sp + ch.dx;
    if (r >= g.R || s >= g.S) return -1;
    return offset(kcrs, m, ch.c, r, s, g.C, g.R, g.S);
}

// The full-width NHWC -> NHWC copy (s2d_vec.cuh) for a caller outside this file (the Hopper
// family's operands): n images of `in` (16-byte aligned) into `out` (16-byte aligned), pixels
// of Cp channels of elem_bytes (2 or 4) bytes, Cp * elem_bytes a multiple of 16; round_tf32: each
// 4-byte element rounded to tf32 (cvt.rna, the Hopper tf32 operand). Returns false, launching
// nothing, where the copy does not apply (the caller takes its own kernel).
struct VecGeom;
bool launch_nhwc_vec(const VecGeom& g, int elem_bytes, bool round_tf32, const void* in, void* out, std::int64_t n,
                     cudaStream_t stream);

// Which input kernel the launch runs: "tiled" (one block per rewritten row, staged through
// shared memory) or "gather" (one thread per element: rows too wide for the tile's budget).
const char* input_kernel_name(const Geom& g, bool src_nchw, int elem_bytes);

// Enqueues on `stream`: in' (n images, layout dst_nchw) from in (layout src_nchw) and, when
// w is not null, w' from w in w's layout (KCRS when w_kcrs, else KRSC). elem_bytes: 2 (half,
// bfloat16) or 4 (float). One launch: the weights take the grid's last blocks. `out` and
// `w_out` must be 16-byte aligned; `in` only to its element.
void launch(const Geom& g, int elem_bytes, const void* in, bool src_nchw, void* out, bool dst_nchw, std::int64_t n,
            const void* w, bool w_kcrs, void* w_out, cudaStream_t stream);

}  // namespace cs::gpu::s2d
