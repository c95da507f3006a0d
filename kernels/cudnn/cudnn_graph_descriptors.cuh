// Part of kernels/cudnn/cudnn_graph.cu and kernels/cudnn/cudnn_chain.cu, each of which includes
// it once inside its anonymous namespace (nothing here is visible outside the file that includes
// it). Descriptors (errors and the handle: cudnn_common.hpp): the RAII owners of backend
// descriptors, what a row is, the operation graph of one convolution (with the pointwise ops a
// chain layer appends to it, Epilogue), and the finalized execution plan with its variant pack.

#pragma once

// The handle attributes are marked deprecated in cuDNN 9 (a device-property descriptor is
// the new way) but are still honoured; named by value to keep the build free of warnings.
constexpr auto kAttrOpGraphHandle = static_cast<cudnnBackendAttributeName_t>(800);  // OPERATIONGRAPH_HANDLE
constexpr auto kAttrPlanHandle = static_cast<cudnnBackendAttributeName_t>(400);     // EXECUTION_PLAN_HANDLE

// ---- RAII owners ----------------------------------------------------------------------

class BDesc {
public:
    BDesc() = default;
    explicit BDesc(cudnnBackendDescriptorType_t t) { CS_CUDNN_CHECK(cudnnBackendCreateDescriptor(t, &d_)); }
    ~BDesc() { reset(); }
    BDesc(const BDesc&) = delete;
    BDesc& operator=(const BDesc&) = delete;
    BDesc(BDesc&& o) noexcept : d_(std::exchange(o.d_, nullptr)) {}
    BDesc& operator=(BDesc&& o) noexcept {
        if (this != &o) {
            reset();
            d_ = std::exchange(o.d_, nullptr);
        }
        return *this;
    }
    cudnnBackendDescriptor_t get() const { return d_; }
    explicit operator bool() const { return d_ != nullptr; }

private:
    void reset() noexcept {
        if (d_) (void)cudnnBackendDestroyDescriptor(d_);
        d_ = nullptr;
    }
    cudnnBackendDescriptor_t d_ = nullptr;
};

template <typename T>
cudnnStatus_t set_attr(const BDesc& d, cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type,
                       std::int64_t count, const T* values) {
    return cudnnBackendSetAttribute(d.get(), name, type, count, values);
}
cudnnStatus_t set_desc(const BDesc& d, cudnnBackendAttributeName_t name, const BDesc& value) {
    const cudnnBackendDescriptor_t v = value.get();
    return cudnnBackendSetAttribute(d.get(), name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &v);
}
cudnnStatus_t set_i64(const BDesc& d, cudnnBackendAttributeName_t name, std::int64_t v) {
    return cudnnBackendSetAttribute(d.get(), name, CUDNN_TYPE_INT64, 1, &v);
}

// ---- what the row is --------------------------------------------------------------------

struct RowSpec {
    Precision precision;
    cudnnDataType_t data;
    std::size_t elem_bytes;
    bool allow_tensor_core;
    const char* name;
};

RowSpec spec_of(Precision p) {
    switch (p) {
        case Precision::fp32: return {p, CUDNN_DATA_FLOAT, 4, false, "fp32"};
        case Precision::tf32: return {p, CUDNN_DATA_FLOAT, 4, true, "tf32"};
        case Precision::fp16: return {p, CUDNN_DATA_HALF, 2, true, "fp16"};
        case Precision::bf16: return {p, CUDNN_DATA_BFLOAT16, 2, true, "bf16"};
        case Precision::fp16acc: break;
    }
    throw std::logic_error("cudnn_graph: no row for this precision class");
}


// ---- the operation graph --------------------------------------------------------------

constexpr std::int64_t kUidX = 1, kUidW = 2, kUidY = 3;
// The epilogue's tensors: the bias (in memory), the convolution's and the sum's outputs (virtual).
constexpr std::int64_t kUidBias = 4, kUidConvOut = 5, kUidSum = 6;

// The pointwise ops a graph appends to its convolution: none for the cudnn-<class> rows (their
// graph is the convolution alone); a chain layer's (cudnn_chain.cu) bias and ReLU, fused.
struct Epilogue {
    bool bias = false;  // y = conv + bias, bias 1 x M x 1 x 1 in the row's type (uid kUidBias)
    bool relu = false;  // then y = max(y, 0)
    bool any() const { return bias || relu; }
    // "convolution", "convolution + bias + ReLU", ...: what the graph computes, for messages.
    std::string text() const {
        return std::string("convolution") + (bias ? " + bias" : "") + (relu ? " + ReLU" : "");
    }
};

// Byte alignment a pointer (or an offset from a 256-byte aligned base) guarantees, capped at 16.
std::int64_t alignment_of(std::uintptr_t v) {
    if (v == 0) return 16;
    std::int64_t a = 1;
    while (a < 16 && (v & std::uintptr_t(a)) == 0) a *= 2;
    return a;
}

struct Shape {  // what one execution plan is built for
    std::int64_t n;
    std::int64_t align_x, align_w, align_y;
    bool operator<(const Shape& o) const {
        return std::tie(n, align_x, align_w, align_y) < std::tie(o.n, o.align_x, o.align_w, o.align_y);
    }
};

struct Graph {
    BDesc x, w, y, conv, op, graph;
    // The epilogue's descriptors (empty without one): the bias, the virtual conv and sum outputs,
    // the pointwise descriptors and their operations.
    BDesc bias, conv_out, sum, add, add_op, relu, relu_op;
};

// is_virtual: an intermediate of the graph that never reaches memory (no pointer in the pack).
BDesc tensor(std::int64_t uid, cudnnDataType_t t, const std::int64_t (&dims)[4], const std::int64_t (&strides)[4],
             std::int64_t align, bool is_virtual = false) {
    BDesc d(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    CS_CUDNN_CHECK(set_attr(d, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &t));
    CS_CUDNN_CHECK(set_attr(d, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims));
    CS_CUDNN_CHECK(set_attr(d, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides));
    CS_CUDNN_CHECK(set_i64(d, CUDNN_ATTR_TENSOR_UNIQUE_ID, uid));
    CS_CUDNN_CHECK(set_i64(d, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, align));
    if (is_virtual) {
        const bool v = true;
        CS_CUDNN_CHECK(set_attr(d, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &v));
    }
    CS_CUDNN_CHECK(cudnnBackendFinalize(d.get()));
    return d;
}

// A pointwise operation y = mode(x[, b]) computed in float (ReLU: cuDNN's defaults, lower clip 0,
// no upper clip, slope 0); `pw` receives the pointwise descriptor the operation refers to.
BDesc pointwise_op(cudnnPointwiseMode_t mode, BDesc& pw, const BDesc& x, const BDesc* b, const BDesc& y) {
    pw = BDesc(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
    const cudnnDataType_t prec = CUDNN_DATA_FLOAT;
    CS_CUDNN_CHECK(set_attr(pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode));
    CS_CUDNN_CHECK(set_attr(pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &prec));
    CS_CUDNN_CHECK(cudnnBackendFinalize(pw.get()));
    BDesc op(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
    CS_CUDNN_CHECK(set_desc(op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, pw));
    CS_CUDNN_CHECK(set_desc(op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x));
    if (b) CS_CUDNN_CHECK(set_desc(op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, *b));
    CS_CUDNN_CHECK(set_desc(op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y));
    CS_CUDNN_CHECK(cudnnBackendFinalize(op.get()));
    return op;
}

// Dims N,C,H,W (K,C,R,S for filters); strides per layout.
void strides_for(Layout lay, std::int64_t C, std::int64_t H, std::int64_t W, std::int64_t (&s)[4]) {
    if (lay == Layout::nchw) {
        s[0] = C * H * W, s[1] = H * W, s[2] = W, s[3] = 1;
    } else {
        s[0] = H * W * C, s[1] = 1, s[2] = W * C, s[3] = C;
    }
}

// Appends the epilogue's pointwise ops to a graph whose convolution writes the virtual g.conv_out:
// conv_out (+ bias) (ReLU) into g.y, each intermediate a virtual float tensor (the compute type).
void append_epilogue(Graph& g, const Layer& l, Layout lay, cudnnDataType_t t, const Shape& sh, const Epilogue& ep,
                     std::vector<cudnnBackendDescriptor_t>& ops) {
    std::int64_t s[4];
    const BDesc* in = &g.conv_out;
    if (ep.bias) {
        strides_for(lay, l.M, 1, 1, s);
        g.bias = tensor(kUidBias, t, {1, l.M, 1, 1}, s, 16);
        if (ep.relu) {
            strides_for(lay, l.M, l.E(), l.F(), s);
            g.sum = tensor(kUidSum, CUDNN_DATA_FLOAT, {sh.n, l.M, l.E(), l.F()}, s, 16, true);
        }
        g.add_op = pointwise_op(CUDNN_POINTWISE_ADD, g.add, *in, &g.bias, ep.relu ? g.sum : g.y);
        ops.push_back(g.add_op.get());
        in = &g.sum;
    }
    if (ep.relu) {
        g.relu_op = pointwise_op(CUDNN_POINTWISE_RELU_FWD, g.relu, *in, nullptr, g.y);
        ops.push_back(g.relu_op.get());
    }
}

// The operation graph of one convolution, and with an epilogue its pointwise ops after it (the
// bias, 16-byte aligned). Without one (the cudnn-<class> rows), the convolution alone writes y.
std::unique_ptr<Graph> build_graph(cudnnHandle_t h, const Layer& l, Layout lay, cudnnDataType_t t, const Shape& sh,
                                   const Epilogue& ep = {}) {
    auto g = std::make_unique<Graph>();
    std::int64_t s[4];
    strides_for(lay, l.C, l.H, l.W, s);
    g->x = tensor(kUidX, t, {sh.n, l.C, l.H, l.W}, s, sh.align_x);
    strides_for(lay, l.C, l.R, l.S, s);
    g->w = tensor(kUidW, t, {l.M, l.C, l.R, l.S}, s, sh.align_w);
    strides_for(lay, l.M, l.E(), l.F(), s);
    g->y = tensor(kUidY, t, {sh.n, l.M, l.E(), l.F()}, s, sh.align_y);
    if (ep.any()) g->conv_out = tensor(kUidConvOut, CUDNN_DATA_FLOAT, {sh.n, l.M, l.E(), l.F()}, s, 16, true);

    g->conv = BDesc(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
    const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
    const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
    const std::int64_t pad[2] = {l.pad, l.pad}, stride[2] = {l.stride, l.stride}, dil[2] = {1, 1};
    CS_CUDNN_CHECK(set_i64(g->conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, 2));
    CS_CUDNN_CHECK(set_attr(g->conv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute));
    CS_CUDNN_CHECK(set_attr(g->conv, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode));
    CS_CUDNN_CHECK(set_attr(g->conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, pad));
    CS_CUDNN_CHECK(set_attr(g->conv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, pad));
    CS_CUDNN_CHECK(set_attr(g->conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, stride));
    CS_CUDNN_CHECK(set_attr(g->conv, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, dil));
    CS_CUDNN_CHECK(cudnnBackendFinalize(g->conv.get()));

    g->op = BDesc(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
    const float alpha = 1.0f, beta = 0.0f;  // float scaling for float compute
    CS_CUDNN_CHECK(set_desc(g->op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, g->x));
    CS_CUDNN_CHECK(set_desc(g->op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, g->w));
    CS_CUDNN_CHECK(set_desc(g->op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, ep.any() ? g->conv_out : g->y));
    CS_CUDNN_CHECK(set_desc(g->op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, g->conv));
    CS_CUDNN_CHECK(set_attr(g->op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1, &alpha));
    CS_CUDNN_CHECK(set_attr(g->op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 1, &beta));
    CS_CUDNN_CHECK(cudnnBackendFinalize(g->op.get()));

    std::vector<cudnnBackendDescriptor_t> ops = {g->op.get()};
    if (ep.any()) append_epilogue(*g, l, lay, t, sh, ep, ops);

    g->graph = BDesc(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    CS_CUDNN_CHECK(set_attr(g->graph, kAttrOpGraphHandle, CUDNN_TYPE_HANDLE, 1, &h));
    CS_CUDNN_CHECK(set_attr(g->graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                            std::int64_t(ops.size()), ops.data()));
    CS_CUDNN_CHECK(cudnnBackendFinalize(g->graph.get()));
    return g;
}


struct ExecPlan {
    BDesc plan;
    std::size_t ws = 0;
};

// Finalizes an execution plan; nullopt (and the reason) when cuDNN refuses it.
std::optional<ExecPlan> finalize_plan(cudnnHandle_t h, const BDesc& cfg, std::string* why = nullptr) {
    ExecPlan p;
    p.plan = BDesc(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
    cudnnStatus_t st = set_attr(p.plan, kAttrPlanHandle, CUDNN_TYPE_HANDLE, 1, &h);
    if (st == CUDNN_STATUS_SUCCESS) st = set_desc(p.plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, cfg);
    if (st == CUDNN_STATUS_SUCCESS) st = cudnnBackendFinalize(p.plan.get());
    std::int64_t ws = 0, cnt = 0;
    if (st == CUDNN_STATUS_SUCCESS)
        st = cudnnBackendGetAttribute(p.plan.get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1,
                                      &cnt, &ws);
    if (st != CUDNN_STATUS_SUCCESS) {
        if (why) *why = status_text(st);
        (void)cudaGetLastError();
        return std::nullopt;
    }
    p.ws = std::size_t(std::max<std::int64_t>(ws, 0));
    return p;
}

// bias: the epilogue's bias (a graph with one), else null (the pack holds x, w and y only).
BDesc variant_pack(const void* x, const void* w, void* y, void* ws, const void* bias = nullptr) {
    BDesc vp(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    const std::int64_t uids[4] = {kUidX, kUidW, kUidY, kUidBias};
    void* ptrs[4] = {const_cast<void*>(x), const_cast<void*>(w), y, const_cast<void*>(bias)};
    const std::int64_t count = bias ? 4 : 3;
    CS_CUDNN_CHECK(set_attr(vp, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, count, uids));
    CS_CUDNN_CHECK(set_attr(vp, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, count, ptrs));
    CS_CUDNN_CHECK(set_attr(vp, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &ws));
    CS_CUDNN_CHECK(cudnnBackendFinalize(vp.get()));
    return vp;
}
