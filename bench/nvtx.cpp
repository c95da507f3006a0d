#include "nvtx.hpp"

#include <nvtx3/nvToolsExt.h>

namespace cs::gpu::nvtx {

namespace {

nvtxDomainHandle_t domain() {
    static const nvtxDomainHandle_t d = nvtxDomainCreateA(kDomain);
    return d;
}

}  // namespace

std::string timed_kernels_filter() { return std::string(kDomain) + "@" + kTimedKernels + "/"; }

std::string row_name(const std::string& layer, long long N, const std::string& variant, const std::string& layout,
                     const std::string& memory) {
    return layer + " N=" + std::to_string(N) + " " + variant + " " + layout + " " + memory;
}

Range::Range(const char* name) {
    nvtxEventAttributes_t a{};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = name;
    nvtxDomainRangePushEx(domain(), &a);
}

Range::~Range() { nvtxDomainRangePop(domain()); }

}  // namespace cs::gpu::nvtx
