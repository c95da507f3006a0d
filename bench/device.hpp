// The device a run uses: its properties, the metadata every CSV row carries, the L2
// flush buffer, and the fp32 FMA ceiling measured on it (pct_peak divides by that).
#pragma once

#include "buffers.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <optional>
#include <string>

namespace cs::gpu {

struct DeviceInfo {
    int device = 0;
    std::string name;
    int cc_major = 0, cc_minor = 0;
    int sms = 0;
    std::size_t l2_bytes = 0;
    std::size_t global_mem = 0;
    std::size_t smem_per_block_optin = 0;
    int runtime_version = 0;  // e.g. 13000
    int driver_version = 0;
    bool concurrent_managed = false;
    std::string compute_capability() const { return std::to_string(cc_major) + "." + std::to_string(cc_minor); }
    static std::string version_string(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }
};

// Number of CUDA devices; 0 when there is none or no driver (never throws).
int cuda_device_count(std::string* why = nullptr);

class DeviceContext {
public:
    // Throws cs::Error with a plain message when there is no usable CUDA device.
    explicit DeviceContext(int device = 0);

    const cudaDeviceProp& prop() const { return prop_; }
    const DeviceInfo& info() const { return info_; }
    cudaStream_t stream() const { return stream_.get(); }

    // Evicts L2 by writing a buffer twice its size on `s` (not timed by callers).
    void flush_l2(cudaStream_t s);
    // Keeps `s` busy for `us` microseconds (one thread spinning on the global timer), so
    // that the host has enqueued the work that follows before the GPU reaches it: a timed
    // interval then measures the GPU's work, not the host's launch latency (a library
    // call can take tens of microseconds to enqueue; without this, an event recorded on
    // an idle GPU starts the clock before the first kernel is even submitted).
    void hold(cudaStream_t s, unsigned us = 100);
    // fp32 FMA ceiling of this device in TFLOP/s, measured once (a register-only FMA
    // kernel over every SM) and cached.
    double fp32_peak_tflops();
    // Free and total device memory now.
    std::size_t free_bytes() const;

private:
    cudaDeviceProp prop_{};
    DeviceInfo info_;
    Stream stream_;
    Buffer l2_flush_;
    unsigned flush_counter_ = 0;
    std::optional<double> peak_;
};

// The cuDNN library's version as it runs ("9.19.0"; cudnnGetVersion), "" in a build without cuDNN.
std::string cudnn_version();

}  // namespace cs::gpu
