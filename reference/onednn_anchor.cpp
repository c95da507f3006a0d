// oneDNN's fp32 convolution on the reference's buffers (compiled only with oneDNN).
// Written against oneDNN 2.6 (Debian 12); the 3.x branch follows the v3 API but was not
// compiled here.
#include "onednn_internal.hpp"

#include "error.hpp"

#include <oneapi/dnnl/dnnl.hpp>

#include <memory>
#include <unordered_map>

namespace cs::detail {

std::string onednn_version_string() {
    const dnnl_version_t* v = dnnl_version();
    return "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
}

namespace {

struct OnednnConv {
    dnnl::engine eng{dnnl::engine::kind::cpu, 0};
    dnnl::stream strm{eng};
    dnnl::memory user_src, user_wei, user_dst;  // NCHW / OIHW / NCHW on the caller's buffers
    dnnl::memory src, wei, dst;                 // the primitive's layouts (may be the user's)
    dnnl::convolution_forward conv;
    dnnl::reorder src_reorder, wei_reorder, dst_reorder;
    bool reorder_src = false, reorder_wei = false, reorder_dst = false;

    void run() {
        if (reorder_src) src_reorder.execute(strm, user_src, src);
        if (reorder_wei) wei_reorder.execute(strm, user_wei, wei);
        conv.execute(strm, {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, dst}});
        if (reorder_dst) dst_reorder.execute(strm, dst, user_dst);
        strm.wait();
    }
};

}  // namespace

std::function<void()> make_onednn_conv(const Layer& l, std::int64_t N, const float* in, const float* w,
                                       float* out) {
    using dnnl::memory;
    using tag = memory::format_tag;
    using dt = memory::data_type;
    try {
        auto c = std::make_shared<OnednnConv>();
        const memory::dims src_dims{N, l.C, l.H, l.W};
        const memory::dims wei_dims{l.M, l.C, l.R, l.S};
        const memory::dims dst_dims{N, l.M, l.E(), l.F()};
        const memory::dims strides{l.stride, l.stride};
        const memory::dims pad{l.pad, l.pad};

        const memory::desc user_src_md(src_dims, dt::f32, tag::nchw);
        const memory::desc user_wei_md(wei_dims, dt::f32, tag::oihw);
        const memory::desc user_dst_md(dst_dims, dt::f32, tag::nchw);
        c->user_src = memory(user_src_md, c->eng, const_cast<float*>(in));
        c->user_wei = memory(user_wei_md, c->eng, const_cast<float*>(w));
        c->user_dst = memory(user_dst_md, c->eng, out);

        const memory::desc src_any(src_dims, dt::f32, tag::any), wei_any(wei_dims, dt::f32, tag::any),
            dst_any(dst_dims, dt::f32, tag::any);
#if DNNL_VERSION_MAJOR >= 3  // v3 dropped op descriptors (Ubuntu 24.04 ships 3.x, Debian 12 2.6)
        const dnnl::convolution_forward::primitive_desc pd(c->eng, dnnl::prop_kind::forward_inference,
                                                           dnnl::algorithm::convolution_direct, src_any, wei_any,
                                                           dst_any, strides, pad, pad);
#else
        const dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference,
                                                   dnnl::algorithm::convolution_direct, src_any, wei_any, dst_any,
                                                   strides, pad, pad);
        const dnnl::convolution_forward::primitive_desc pd(desc, c->eng);
#endif
        c->conv = dnnl::convolution_forward(pd);

        c->reorder_src = pd.src_desc() != user_src_md;
        c->reorder_wei = pd.weights_desc() != user_wei_md;
        c->reorder_dst = pd.dst_desc() != user_dst_md;
        c->src = c->reorder_src ? memory(pd.src_desc(), c->eng) : c->user_src;
        c->wei = c->reorder_wei ? memory(pd.weights_desc(), c->eng) : c->user_wei;
        c->dst = c->reorder_dst ? memory(pd.dst_desc(), c->eng) : c->user_dst;
        if (c->reorder_src) c->src_reorder = dnnl::reorder(c->user_src, c->src);
        if (c->reorder_wei) c->wei_reorder = dnnl::reorder(c->user_wei, c->wei);
        if (c->reorder_dst) c->dst_reorder = dnnl::reorder(c->dst, c->user_dst);
        return [c] { c->run(); };
    } catch (const dnnl::error& e) {
        throw Error("oneDNN convolution for layer '" + l.name + "' (" + l.shape_string() + ", N=" +
                    std::to_string(N) + "): " + e.what());
    }
}

}  // namespace cs::detail
