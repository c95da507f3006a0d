// The cudnn family's spec and its rungs' supports() (host code; the plans and their kernels are
// the .cu files): cuDNN's graph (backend) API as the anchor, one rung per precision class
// (cudnn_graph.cu: the engine search, accuracy screening and the plan), then the same on the
// space-to-depth rewrite of a strided layer (cudnn_s2d.cu). Compiled only where CMake found
// cuDNN (CONVSTUDY_HAVE_CUDNN).
#include "cudnn_rungs.hpp"
#include "families.hpp"

namespace cs::gpu::variants {

std::optional<std::string> cudnn_graph_supports(const PrecisionRow& row, const Problem& p,
                                                const cudaDeviceProp& prop) {
    const Precision prec = row.precision;
    if (p.layout != Layout::nchw && p.layout != Layout::nhwc) return std::string("layout not nchw or nhwc");
    const int cc = prop.major * 10 + prop.minor;
    if (prec == Precision::fp16 && cc < 53) return std::string("half arithmetic needs compute capability 5.3 or later");
    if (prec == Precision::tf32 && cc < 80) return std::string("TF32 tensor cores need compute capability 8.0 or later");
    if (prec == Precision::bf16 && cc < 80) return std::string("bfloat16 needs compute capability 8.0 or later");
    return std::nullopt;
}

std::optional<std::string> cudnn_s2d_supports(const PrecisionRow& row, const Problem& p, const cudaDeviceProp& prop) {
    if (p.layer.stride <= 1) return std::string("space-to-depth needs stride > 1");
    return cudnn_graph_supports(row, p, prop);
}

// One rung per precision class (the ideas differ), all on cudnn_graph_supports() and
// cudnn_graph_plan(); then the space-to-depth rung in all four classes.
Family cudnn_family() {
    const RungTraits lib{"library", {Layout::nchw, Layout::nhwc}, false};
    Family f{"cudnn", {},
             rung_per_row("cudnn-{p}",
                          {{row_fp32(), "cuDNN graph API on float tensors: fastest fp32-accurate engine config of "
                                        "heuristics A/B, fallback and the global list, no tensor cores (TF32 off)"},
                           {row_tf32(), "cuDNN graph API on float tensors, tensor cores (TF32) allowed: fastest "
                                        "tf32-accurate engine config"},
                           {row_fp16(), "cuDNN graph API on half tensors, float compute: fastest fp16-accurate engine "
                                        "config"},
                           {row_bf16(), "cuDNN graph API on bfloat16 tensors, float compute: fastest bf16-accurate "
                                        "engine config"}},
                          cudnn_graph_supports, CS_PLAN(cudnn_graph_plan), lib)};
    f.library = true;
    f.rungs.push_back(make_rung("cudnn-{p}-s2d", {row_fp32(), row_tf32(), row_fp16(), row_bf16()},
                                "the layer rewritten by space-to-depth (stride b: b*b*C channels, a stride-1 ceil(R/b) "
                                "x ceil(S/b) filter, the same output; our transform of input and weights timed), then "
                                "cudnn-{p}'s graph-API engine search on the rewritten problem",
                                cudnn_s2d_supports, CS_PLAN(cudnn_s2d_plan), lib));
    return f;
}

}  // namespace cs::gpu::variants
