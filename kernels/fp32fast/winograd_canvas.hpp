// winograd-f4x4-canvas's geometry, host code: how many images go on a canvas, where they lie and
// the canvas problem the inner F(4x4) plan runs. Read by its supports() (fp32fast_family.cpp)
// and by its plan and the pack and unpack kernels (winograd_canvas.cu, which says why canvases).
#pragma once

#include "variant.hpp"

#include <algorithm>
#include <cstdint>

namespace cs::gpu::variants::fp32fast {

// Images per canvas side: 4 (a 55x55 canvas for 13x13 planes: 14 tiles of 4 for 52 useful
// outputs a side), fewer when the batch does not fill one canvas (1: the image alone).
inline int canvas_side(std::int64_t n) { return n >= 16 ? 4 : n >= 9 ? 3 : n >= 4 ? 2 : 1; }

struct CanvasGeom {
    int C, H, W, M, E, F;  // the layer
    int k, D;              // images per side, image pitch in the canvas (H + pad)
    int Hc, Wc, Ec, Fc;    // canvas input and output
};

inline CanvasGeom canvas_geom(const Layer& l, int k) {
    CanvasGeom g{};
    g.C = l.C, g.H = l.H, g.W = l.W, g.M = l.M, g.E = l.E(), g.F = l.F();
    g.k = k;
    g.D = std::max(l.H, l.W) + l.pad;
    g.Hc = (k - 1) * g.D + l.H;
    g.Wc = (k - 1) * g.D + l.W;
    g.Ec = g.Hc + 2 * l.pad - l.R + 1;
    g.Fc = g.Wc + 2 * l.pad - l.S + 1;
    return g;
}

// The canvas problem the inner F(4x4) plan sees: the layer on a k*H + (k-1)*pad plane.
inline Problem canvas_problem(const Problem& p, const CanvasGeom& g, std::int64_t canvases) {
    Problem c = p;
    c.layer.H = g.Hc;
    c.layer.W = g.Wc;
    c.N = canvases;
    return c;
}

}  // namespace cs::gpu::variants::fp32fast
