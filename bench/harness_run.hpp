// One row's run in the harness (harness.cpp's run_group drives the rows of a timing group
// round-robin): internal to the harness.
#pragma once

#include "buffers.hpp"
#include "engine_choice.hpp"
#include "harness.hpp"
#include "nvtx.hpp"
#include "output_check.hpp"

#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace cs::gpu::harness_detail {

// A later run whose output differs from the checked run's: the row FAILs, naming the run.
struct RunMismatch : std::runtime_error {
    using std::runtime_error::runtime_error;
};

using Clock = std::chrono::steady_clock;
inline double ms_since(Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// Adds the host wall time of its scope to `total` when it goes out of scope, however it ends.
struct AddWallTime {
    double& total;
    Clock::time_point t0 = Clock::now();
    ~AddWallTime() { total += ms_since(t0); }
};

// Errors after which the CUDA context is unusable (the sweep stops).
bool is_sticky(cudaError_t e);

// Everything one row allocates, released when it goes out of scope, and its timing state.
//
// Buffers: x_* are what the copies (or the host, in managed memory) fill and drain: float
// tensors in the problem's layout. k_* are the variant's own tensors when its element
// type is not float (converted on the GPU); otherwise the variant works on x_* directly.
//
// A row's life: prepare() (refusals, allocation, plans: SKIP), check() (the NaN-poisoned
// checked run against the reference: FAIL), then iteration(it) for every warm-up and timed
// repeat (run_group interleaves the rows of a group, one iteration each per round), each one
// re-poisoned before and checked after (RunMismatch when it differs), and finish().
class Run {
public:
    Run(DeviceContext& ctx, const Variant& v, MemoryMode mode, const Problem& p, const HostData& data,
        const RunOptions& opt, RunResult& r)
        : ctx_(ctx), v_(v), mode_(mode), p_(p), data_(data), opt_(opt), r_(r) {}

    void prepare();
    // The checked run; false when it failed (r_ says why): the row leaves the rotation.
    bool check();
    // Warm-up (it < warmup) or timed repeat it - warmup, then its check.
    void iteration(int it);
    void finish();
    // True once a kernel of the run may have been enqueued: a failure after that is ERROR.
    bool started() const { return started_; }
    // Reads the SM clock and power into r_ (start: before the first timed repeat; else after the last).
    void note_clock_power(bool start);

private:
    bool managed() const { return mode_ == MemoryMode::managed || mode_ == MemoryMode::managed_prefetch; }
    bool converts() const { return v_.io != DType::f32; }
    void sizes();  // element counts and bytes; SKIP when the tensors cannot fit
    void stage_host();
    void allocate();
    void make_plans();
    void checked_run();
    void make_verifier();
    void verify_run(int it, const char* what);
    void check_guard(const std::string& label) const;
    std::string run_label(int it) const;
    Buffer output_nchw() const;

    const void* k_in() const { return converts() ? k_in_.get() : x_in_.get(); }
    const void* k_w() const { return converts() ? k_w_.get() : x_w_.get(); }
    void* k_out() const { return converts() ? k_out_.get() : x_out_.get(); }
    DeviceIO io_full() const { return DeviceIO{k_in(), k_w(), k_out(), p_.N}; }
    DeviceIO io_chunk(std::int64_t first, std::int64_t count) const;
    void h2d_weights(cudaStream_t s);
    void h2d_input(cudaStream_t s, std::int64_t first, std::int64_t count);
    void d2h_output(cudaStream_t s, std::int64_t first, std::int64_t count);
    void convert_weights(cudaStream_t s);
    void convert_input(cudaStream_t s, std::int64_t first, std::int64_t count);
    void convert_output(cudaStream_t s, std::int64_t first, std::int64_t count);
    void kernels(cudaStream_t s, bool chunked);
    void stream_pipeline();
    void prefetch(const Buffer& b, cudaMemLocation loc, cudaStream_t s);
    void poison_device(cudaStream_t s);
    void copies_iteration(int it, bool chunked);
    void managed_iteration(int it);
    void pipeline_iteration(int it);
    // NVTX names of timing-loop iteration `it` and of its kernel_ms interval (nvtx.hpp).
    const char* phase_name(int it) const { return it < opt_.warmup ? "warm-up" : "timed"; }
    const char* kernels_range_name(int it) const { return it < opt_.warmup ? "warm-up kernels" : nvtx::kTimedKernels; }
    // Whether timed iteration `it` includes the host copies (copies modes: the first host_repeats).
    bool host_timed(int it) const;

    DeviceContext& ctx_;
    const Variant& v_;
    MemoryMode mode_;
    const Problem& p_;
    const HostData& data_;
    const RunOptions& opt_;
    RunResult& r_;
    bool started_ = false;

    std::size_t eb_ = 4;                       // bytes per element of the variant's tensors
    std::int64_t in_elems_ = 0, w_elems_ = 0, out_elems_ = 0;
    Buffer in_perm_, w_perm_;                  // host inputs in the problem's layout (nhwc), pageable
    const float* h_in_ = nullptr;              // host source, float, problem's layout
    const float* h_w_ = nullptr;
    Buffer pin_in_, pin_w_, pin_out_;          // pinned / streams host buffers
    Buffer page_out_;                          // pageable host output
    float* h_out_ = nullptr;
    Buffer x_in_, x_w_, x_out_;                // float tensors: device or managed
    Buffer k_in_, k_w_, k_out_;                // the variant's half / bf16 tensors
    // The guard band: kGuardBytes after the last element of the buffer the kernels write
    // (k_out_, or x_out_ when the variant works in float), NaN-poisoned with the output
    // (every poison covers the Buffer's bytes()) and checked after every checked run, so that
    // a kernel writing past its output FAILs its row (check_guard) instead of corrupting the
    // next allocation, the verifier's among them.
    static constexpr std::size_t kGuardBytes = std::size_t(1) << 20;
    std::vector<std::unique_ptr<Plan>> plans_;
    std::unique_ptr<EngineChoices> own_engines_;  // the row's plans' memory when the caller has none
    std::vector<Stream> streams_;
    std::int64_t chunk_n_ = 0;

    // The every-run check: the checked run's digest, and the sample later runs are held to.
    std::unique_ptr<OutputVerifier> verifier_;
    OutputDigest reference_;
    bool deterministic_ = true;
    std::vector<std::int64_t> identity_;       // 0..count-1: the gathered samples in order
    std::vector<double> recheck_value_, recheck_bound_;
    double recheck_max_abs_ = 0;
    Event e_[7];
    std::vector<double> th_, tc_, tk_, td_, tt_, tpipe_;
};

}  // namespace cs::gpu::harness_detail
