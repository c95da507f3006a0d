// The space-to-depth rewrite's host side: which input kernel a launch runs (space_to_depth.hpp),
// decided from the geometry alone, so that the host-only build (CONVSTUDY_KERNELS=OFF) and its
// CPU tests have it; the kernels are space_to_depth.cu and s2d_vec.cuh.
#include "s2d_vec_geom.hpp"
#include "space_to_depth.hpp"
#include "space_to_depth_block.hpp"

namespace cs::gpu::s2d {

VecGeom vec_geom(const Geom& g) { return VecGeom{g.C, g.H, g.W, g.b, g.pad, g.Hp, g.Wp, g.Cp}; }

const char* input_kernel_name(const Geom& g, bool src_nchw, int elem_bytes) {
    if (!src_nchw && vec_shape_ok(vec_geom(g), elem_bytes))
        return "full-width (NHWC, if 16-byte aligned)";
    return tile_of(g, src_nchw, elem_bytes).bytes >= 0 ? "tiled" : "gather";
}

}  // namespace cs::gpu::s2d
