// The cudnn-legacy rows' cuDNN descriptors, host code shared by their supports()
// (cudnn_legacy_family.cpp, which lets cuDNN judge a shape by building them) and their plan
// (cudnn.cu): what a row is (data, compute and math types), the RAII owners of the legacy
// API's descriptors, and the functions that set them for a layer. Defined in
// cudnn_legacy_family.cpp.
#pragma once

#include "cudnn_common.hpp"
#include "family.hpp"
#include "variant.hpp"

#include <cudnn.h>

#include <cstddef>
#include <cstdint>

namespace cs::gpu::variants::cudnn_legacy {

// ---- RAII owners of cuDNN objects -----------------------------------------------------

// One owner for every legacy descriptor type: Create makes it, Destroy frees it (never throwing).
template <class T, cudnnStatus_t (*Create)(T*), cudnnStatus_t (*Destroy)(T)>
class Desc {
public:
    Desc() { CS_CUDNN_CHECK(Create(&d_)); }
    ~Desc() {
        if (d_) (void)Destroy(d_);
    }
    Desc(const Desc&) = delete;
    Desc& operator=(const Desc&) = delete;
    T get() const { return d_; }

private:
    T d_ = nullptr;
};

using TensorDesc = Desc<cudnnTensorDescriptor_t, cudnnCreateTensorDescriptor, cudnnDestroyTensorDescriptor>;
using FilterDesc = Desc<cudnnFilterDescriptor_t, cudnnCreateFilterDescriptor, cudnnDestroyFilterDescriptor>;
using ConvDesc =
    Desc<cudnnConvolutionDescriptor_t, cudnnCreateConvolutionDescriptor, cudnnDestroyConvolutionDescriptor>;
// The chain's pooling (cudnn_chain.cu).
using PoolDesc = Desc<cudnnPoolingDescriptor_t, cudnnCreatePoolingDescriptor, cudnnDestroyPoolingDescriptor>;

// ---- the three rows -----------------------------------------------------------------

enum class Row { fp32, tf32, fp16 };

struct RowSpec {
    cudnnDataType_t data;     // x, w, y
    cudnnDataType_t compute;  // accumulation (convolution descriptor)
    cudnnMathType_t math;     // what the convolution descriptor permits
    bool allow_tensor_op;     // accept Find results whose mathType is a tensor-op one
    std::size_t elem_bytes;
    Precision precision;      // the row's class: its threshold screens the algorithms
};

RowSpec spec_of(Row r);

// The legacy API's row of a precision class (std::logic_error for a class it has no row for).
Row row_of(const PrecisionRow& r);

// ---- descriptors for a layer --------------------------------------------------------

void set_filter(const FilterDesc& w, const RowSpec& sp, const Layer& l);
void set_conv(const ConvDesc& c, const RowSpec& sp, const Layer& l);

// The x and y descriptors for one batch size.
struct BatchDescs {
    std::int64_t n = 0;
    TensorDesc x, y;
};

// Sets b for a batch of n images; cs::Skip when cuDNN's output size is not the layer's.
void set_batch(BatchDescs& b, const RowSpec& sp, const Layer& l, std::int64_t n, const ConvDesc& conv,
               const FilterDesc& w);

}  // namespace cs::gpu::variants::cudnn_legacy
