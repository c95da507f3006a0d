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

class TensorDesc {
public:
    TensorDesc() { CS_CUDNN_CHECK(cudnnCreateTensorDescriptor(&d_)); }
    ~TensorDesc() {
        if (d_) (void)cudnnDestroyTensorDescriptor(d_);
    }
    TensorDesc(const TensorDesc&) = delete;
    TensorDesc& operator=(const TensorDesc&) = delete;
    cudnnTensorDescriptor_t get() const { return d_; }

private:
    cudnnTensorDescriptor_t d_ = nullptr;
};

class FilterDesc {
public:
    FilterDesc() { CS_CUDNN_CHECK(cudnnCreateFilterDescriptor(&d_)); }
    ~FilterDesc() {
        if (d_) (void)cudnnDestroyFilterDescriptor(d_);
    }
    FilterDesc(const FilterDesc&) = delete;
    FilterDesc& operator=(const FilterDesc&) = delete;
    cudnnFilterDescriptor_t get() const { return d_; }

private:
    cudnnFilterDescriptor_t d_ = nullptr;
};

class ConvDesc {
public:
    ConvDesc() { CS_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&d_)); }
    ~ConvDesc() {
        if (d_) (void)cudnnDestroyConvolutionDescriptor(d_);
    }
    ConvDesc(const ConvDesc&) = delete;
    ConvDesc& operator=(const ConvDesc&) = delete;
    cudnnConvolutionDescriptor_t get() const { return d_; }

private:
    cudnnConvolutionDescriptor_t d_ = nullptr;
};

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
