// The cudnn-legacy family's spec and its rungs' supports() (host code; the plan and its
// kernels are cudnn.cu), and the legacy API's rows and descriptors both use (cudnn_legacy.hpp):
// cuDNN's legacy cudnnConvolutionForward API, NCHW only, one rung per precision class.
// Compiled only where CMake found cuDNN (CONVSTUDY_HAVE_CUDNN).
#include "cudnn_legacy.hpp"

#include "cudnn_rungs.hpp"
#include "error.hpp"
#include "families.hpp"

#include <climits>
#include <exception>
#include <stdexcept>

namespace cs::gpu::variants {

namespace cudnn_legacy {

RowSpec spec_of(Row r) {
    switch (r) {
        case Row::fp32: return {CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_FMA_MATH, false, 4, Precision::fp32};
        case Row::tf32: return {CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_TENSOR_OP_MATH, true, 4, Precision::tf32};
        case Row::fp16: return {CUDNN_DATA_HALF, CUDNN_DATA_FLOAT, CUDNN_TENSOR_OP_MATH, true, 2, Precision::fp16};
    }
    return {CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_FMA_MATH, false, 4, Precision::fp32};
}

Row row_of(const PrecisionRow& r) {
    switch (r.precision) {
        case Precision::fp32: return Row::fp32;
        case Precision::tf32: return Row::tf32;
        case Precision::fp16: return Row::fp16;
        default: throw std::logic_error("cudnn-legacy has no " + std::string(to_string(r.precision)) + " row");
    }
}

void set_filter(const FilterDesc& w, const RowSpec& sp, const Layer& l) {
    CS_CUDNN_CHECK(cudnnSetFilter4dDescriptor(w.get(), sp.data, CUDNN_TENSOR_NCHW, l.M, l.C, l.R, l.S));
}

void set_conv(const ConvDesc& c, const RowSpec& sp, const Layer& l) {
    CS_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(c.get(), l.pad, l.pad, l.stride, l.stride, 1, 1,
                                                   CUDNN_CROSS_CORRELATION, sp.compute));
    CS_CUDNN_CHECK(cudnnSetConvolutionMathType(c.get(), sp.math));
}

void set_batch(BatchDescs& b, const RowSpec& sp, const Layer& l, std::int64_t n, const ConvDesc& conv,
               const FilterDesc& w) {
    CS_CUDNN_CHECK(cudnnSetTensor4dDescriptor(b.x.get(), CUDNN_TENSOR_NCHW, sp.data, int(n), l.C, l.H, l.W));
    int on = 0, oc = 0, oh = 0, ow = 0;
    CS_CUDNN_CHECK(cudnnGetConvolution2dForwardOutputDim(conv.get(), b.x.get(), w.get(), &on, &oc, &oh, &ow));
    if (on != int(n) || oc != l.M || oh != l.E() || ow != l.F())
        throw cs::Skip("cuDNN computes an output of " + std::to_string(on) + "x" + std::to_string(oc) + "x" +
                       std::to_string(oh) + "x" + std::to_string(ow) + ", not the layer's " + std::to_string(n) +
                       "x" + std::to_string(l.M) + "x" + std::to_string(l.E()) + "x" + std::to_string(l.F()));
    CS_CUDNN_CHECK(cudnnSetTensor4dDescriptor(b.y.get(), CUDNN_TENSOR_NCHW, sp.data, int(n), l.M, l.E(), l.F()));
    b.n = n;
}

namespace {

// cuDNN's 4-d descriptors take int sizes and strides.
std::optional<std::string> int_range_reason(const Problem& p) {
    const Layer& l = p.layer;
    if (l.input_elems(p.N) > INT_MAX || l.output_elems(p.N) > INT_MAX || l.weight_elems() > INT_MAX)
        return std::string("a tensor has more than 2^31-1 elements, beyond cuDNN's 4-d descriptors");
    return std::nullopt;
}

}  // namespace
}  // namespace cudnn_legacy

std::optional<std::string> cudnn_legacy_supports(const PrecisionRow& prow, const Problem& p,
                                                 const cudaDeviceProp& prop) {
    using namespace cudnn_legacy;
    const Row row = row_of(prow);
    if (p.layout != Layout::nchw) return std::string("the legacy-API rows describe NCHW tensors only");
    if (auto why = int_range_reason(p)) return why;
    if (row == Row::fp16 && (prop.major * 10 + prop.minor) < 53)
        return std::string("half arithmetic needs compute capability 5.3 or later");
    if (row == Row::tf32 && prop.major < 8)
        return std::string("TF32 tensor cores need compute capability 8.0 or later");
    // Let cuDNN judge the shape (host-side descriptor calls, no handle needed).
    try {
        const RowSpec sp = spec_of(row);
        FilterDesc w;
        ConvDesc c;
        BatchDescs b;
        set_filter(w, sp, p.layer);
        set_conv(c, sp, p.layer);
        set_batch(b, sp, p.layer, p.N, c, w);
    } catch (const std::exception& e) {
        return std::string("cuDNN refuses the configuration: ") + e.what();
    }
    return std::nullopt;
}

// One rung per precision class (the ideas differ), all on cudnn_legacy_supports() and
// cudnn_legacy_plan().
Family cudnn_legacy_family() {
    const RungTraits lib{"library", {Layout::nchw}, false};
    return {"cudnn-legacy", {},
            rung_per_row("cudnn-legacy-{p}",
                         {{row_fp32(), "cuDNN legacy API: fastest of cudnnFindConvolutionForwardAlgorithmEx that is FMA "
                                       "math (TF32 off) and fp32-accurate"},
                          {row_tf32(), "cuDNN legacy API on float tensors, tensor-op math (TF32 allowed): fastest "
                                       "tf32-accurate algorithm found"},
                          {row_fp16(), "cuDNN legacy API on half tensors, float accumulation, tensor-op math: fastest "
                                       "fp16-accurate algorithm found"}},
                         cudnn_legacy_supports, CS_PLAN(cudnn_legacy_plan), lib),
            true};
}

}  // namespace cs::gpu::variants
