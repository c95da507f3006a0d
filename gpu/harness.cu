#include "harness.hpp"

#include "buffers.hpp"
#include "cuda_check.hpp"
#include "error.hpp"

#include <cuda_fp16.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <new>

namespace cs::gpu {

std::string_view to_string(MemoryMode m) {
    switch (m) {
        case MemoryMode::pageable: return "pageable";
        case MemoryMode::pinned: return "pinned";
        case MemoryMode::managed: return "managed";
        case MemoryMode::managed_prefetch: return "managed-prefetch";
        case MemoryMode::streams: return "streams";
    }
    return "?";
}

const std::vector<MemoryMode>& all_memory_modes() {
    static const std::vector<MemoryMode> m = {MemoryMode::pageable, MemoryMode::pinned, MemoryMode::managed,
                                              MemoryMode::managed_prefetch, MemoryMode::streams};
    return m;
}

std::optional<MemoryMode> parse_memory_mode(std::string_view s) {
    for (auto m : all_memory_modes())
        if (to_string(m) == s) return m;
    if (s == "managed_prefetch") return MemoryMode::managed_prefetch;
    return std::nullopt;
}

std::string memory_mode_names() {
    std::string s;
    for (auto m : all_memory_modes()) s += (s.empty() ? "" : ", ") + std::string(to_string(m));
    return s;
}

std::string_view to_string(Status s) {
    switch (s) {
        case Status::pass: return "PASS";
        case Status::fail: return "FAIL";
        case Status::skip: return "SKIP";
        case Status::error: return "ERROR";
    }
    return "?";
}

Stat Stat::of(std::vector<double> v) {
    Stat s;
    if (v.empty()) return s;
    std::sort(v.begin(), v.end());
    s.count = int(v.size());
    s.min = v.front();
    s.max = v.back();
    const std::size_t h = v.size() / 2;
    s.median = v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
    return s;
}

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

std::string gib(double bytes) {
    char b[32];
    std::snprintf(b, sizeof b, "%.2f GiB", bytes / double(1ull << 30));
    return b;
}

void to_half(const float* src, __half* dst, std::int64_t n) {
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) dst[i] = __float2half_rn(src[i]);
}

void from_half(const __half* src, float* dst, std::int64_t n) {
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) dst[i] = __half2float(src[i]);
}

bool is_sticky(cudaError_t e) {
    switch (e) {
        case cudaErrorIllegalAddress:
        case cudaErrorLaunchFailure:
        case cudaErrorIllegalInstruction:
        case cudaErrorMisalignedAddress:
        case cudaErrorHardwareStackError:
        case cudaErrorInvalidPc:
        case cudaErrorAssert:
        case cudaErrorInvalidAddressSpace:
        case cudaErrorLaunchTimeout: return true;
        default: return false;
    }
}

cudaMemLocation host_location() {
    cudaMemLocation l{};
    l.type = cudaMemLocationTypeHost;
    l.id = 0;
    return l;
}

cudaMemLocation device_location(int dev) {
    cudaMemLocation l{};
    l.type = cudaMemLocationTypeDevice;
    l.id = dev;
    return l;
}

// Everything one run allocates, released when it goes out of scope.
class Run {
public:
    Run(DeviceContext& ctx, const Variant& v, MemoryMode mode, const Problem& p, const HostData& data,
        const RunOptions& opt, RunResult& r)
        : ctx_(ctx), v_(v), mode_(mode), p_(p), data_(data), opt_(opt), r_(r) {}

    void execute();

private:
    bool managed() const { return mode_ == MemoryMode::managed || mode_ == MemoryMode::managed_prefetch; }
    void sizes();  // element counts and bytes; SKIP when the tensors cannot fit
    void stage_host();
    void allocate();
    void make_plans();
    void checked_run();
    void time_copies_mode();
    void time_managed_mode();
    void time_streams_mode();

    DeviceIO io_full() const { return DeviceIO{d_in_.get(), d_w_.get(), d_out_.get(), p_.N}; }
    DeviceIO io_chunk(std::int64_t first, std::int64_t count) const;
    void h2d(cudaStream_t s);
    void d2h(cudaStream_t s);
    void stream_pipeline(bool overlapped);
    void prefetch(const Buffer& b, cudaMemLocation loc, cudaStream_t s);

    DeviceContext& ctx_;
    const Variant& v_;
    MemoryMode mode_;
    const Problem& p_;
    const HostData& data_;
    const RunOptions& opt_;
    RunResult& r_;

    std::size_t eb_ = 4, in_bytes_ = 0, w_bytes_ = 0, out_bytes_ = 0;
    std::int64_t in_elems_ = 0, w_elems_ = 0, out_elems_ = 0;
    std::vector<__half> in16_, w16_;      // host staging for f16 variants
    const void* h_in_ = nullptr;          // host source in the variant's dtype
    const void* h_w_ = nullptr;
    Buffer pin_in_, pin_w_, pin_out_;     // pinned / streams host buffers
    std::vector<std::byte> page_out_;     // pageable host output
    void* h_out_ = nullptr;
    Buffer d_in_, d_w_, d_out_;           // device or managed tensors
    std::vector<std::unique_ptr<Plan>> plans_;
    std::vector<Stream> streams_;
    std::int64_t chunk_n_ = 0;
};

void Run::sizes() {
    const Layer& l = p_.layer;
    in_elems_ = l.input_elems(p_.N);
    w_elems_ = l.weight_elems();
    out_elems_ = l.output_elems(p_.N);
    eb_ = dtype_bytes(v_.io);
    in_bytes_ = std::size_t(in_elems_) * eb_;
    w_bytes_ = std::size_t(w_elems_) * eb_;
    out_bytes_ = std::size_t(out_elems_) * eb_;
    const std::size_t tensors = in_bytes_ + w_bytes_ + out_bytes_;
    const std::size_t free = ctx_.free_bytes();
    const std::size_t margin = std::size_t(256) << 20;
    if (tensors + margin > free)
        throw Skip("the tensors need " + gib(double(tensors)) + " of device memory and only " + gib(double(free)) +
                   " is free");
}

void Run::stage_host() {
    if (v_.io == DType::f16) {
        // Half variants: the float data is converted on the host before any copy, so the
        // copies carry half values; this conversion is set-up (setup_ms), not kernel time.
        in16_.resize(std::size_t(in_elems_));
        w16_.resize(std::size_t(w_elems_));
        to_half(data_.in, in16_.data(), in_elems_);
        to_half(data_.w, w16_.data(), w_elems_);
        h_in_ = in16_.data();
        h_w_ = w16_.data();
    } else {
        h_in_ = data_.in;
        h_w_ = data_.w;
    }
}

void Run::allocate() {
    if (managed()) {
        d_in_ = Buffer(MemKind::managed, in_bytes_);
        d_w_ = Buffer(MemKind::managed, w_bytes_);
        d_out_ = Buffer(MemKind::managed, out_bytes_);
    } else {
        d_in_ = Buffer(MemKind::device, in_bytes_);
        d_w_ = Buffer(MemKind::device, w_bytes_);
        d_out_ = Buffer(MemKind::device, out_bytes_);
    }
    if (mode_ == MemoryMode::pinned || mode_ == MemoryMode::streams) {
        pin_in_ = Buffer(MemKind::pinned, in_bytes_);
        pin_w_ = Buffer(MemKind::pinned, w_bytes_);
        pin_out_ = Buffer(MemKind::pinned, out_bytes_);
        std::memcpy(pin_in_.get(), h_in_, in_bytes_);
        std::memcpy(pin_w_.get(), h_w_, w_bytes_);
        h_in_ = pin_in_.get();
        h_w_ = pin_w_.get();
        h_out_ = pin_out_.get();
    } else if (mode_ == MemoryMode::pageable) {
        page_out_.resize(out_bytes_);
        h_out_ = page_out_.data();
    }
}

void Run::make_plans() {
    int nplans = 1;
    chunk_n_ = p_.N;
    if (mode_ == MemoryMode::streams) {
        const int s = std::max(1, opt_.streams);
        std::int64_t chunks = opt_.chunks > 0 ? opt_.chunks : 2 * std::int64_t(s);
        chunks = std::clamp<std::int64_t>(chunks, 1, p_.N);
        chunk_n_ = (p_.N + chunks - 1) / chunks;
        chunks = (p_.N + chunk_n_ - 1) / chunk_n_;
        nplans = int(std::min<std::int64_t>(s, chunks));
        r_.streams = nplans;
        r_.chunks = int(chunks);
        for (int i = 0; i < nplans; ++i) streams_.emplace_back();
    }
    std::size_t limit = opt_.workspace_limit;
    if (limit == 0) limit = std::size_t(double(ctx_.free_bytes()) * opt_.workspace_fraction);
    PlanContext pc{ctx_.prop(), ctx_.info().device, limit / std::size_t(nplans), chunk_n_};
    for (int i = 0; i < nplans; ++i) plans_.push_back(v_.make_plan(p_, pc));
    for (const auto& pl : plans_) r_.workspace_bytes += pl->workspace_bytes();
    r_.detail = plans_.front()->detail();
    r_.device_bytes = in_bytes_ + w_bytes_ + out_bytes_ + r_.workspace_bytes;
}

DeviceIO Run::io_chunk(std::int64_t first, std::int64_t count) const {
    const Layer& l = p_.layer;
    const auto* in = static_cast<const std::byte*>(d_in_.get()) + std::size_t(l.input_elems(first)) * eb_;
    auto* out = static_cast<std::byte*>(d_out_.get()) + std::size_t(l.output_elems(first)) * eb_;
    return DeviceIO{in, d_w_.get(), out, count};
}

void Run::h2d(cudaStream_t s) {
    CS_CUDA_CHECK(cudaMemcpyAsync(d_w_.get(), h_w_, w_bytes_, cudaMemcpyHostToDevice, s));
    CS_CUDA_CHECK(cudaMemcpyAsync(d_in_.get(), h_in_, in_bytes_, cudaMemcpyHostToDevice, s));
}

void Run::d2h(cudaStream_t s) {
    CS_CUDA_CHECK(cudaMemcpyAsync(h_out_, d_out_.get(), out_bytes_, cudaMemcpyDeviceToHost, s));
}

void Run::prefetch(const Buffer& b, cudaMemLocation loc, cudaStream_t s) {
    CS_CUDA_CHECK(cudaMemPrefetchAsync(b.get(), b.bytes(), loc, 0, s));
}

// The streams pipeline: weights first, then each chunk's copy in, kernels and copy out
// on stream (chunk % streams); `overlapped` false runs the same work on one stream.
void Run::stream_pipeline(bool overlapped) {
    const cudaStream_t main = ctx_.stream();
    const Layer& l = p_.layer;
    CS_CUDA_CHECK(cudaMemcpyAsync(d_w_.get(), h_w_, w_bytes_, cudaMemcpyHostToDevice, main));
    Event weights_done;
    weights_done.record(main);
    const int ns = int(streams_.size());
    for (int i = 0; i < ns && overlapped; ++i)
        CS_CUDA_CHECK(cudaStreamWaitEvent(streams_[std::size_t(i)].get(), weights_done.get(), 0));
    int k = 0;
    for (std::int64_t first = 0; first < p_.N; first += chunk_n_, ++k) {
        const std::int64_t count = std::min(chunk_n_, p_.N - first);
        const int si = k % ns;
        const cudaStream_t s = overlapped ? streams_[std::size_t(si)].get() : main;
        const std::size_t in_off = std::size_t(l.input_elems(first)) * eb_;
        const std::size_t out_off = std::size_t(l.output_elems(first)) * eb_;
        CS_CUDA_CHECK(cudaMemcpyAsync(static_cast<std::byte*>(d_in_.get()) + in_off,
                                      static_cast<const std::byte*>(h_in_) + in_off,
                                      std::size_t(l.input_elems(count)) * eb_, cudaMemcpyHostToDevice, s));
        plans_[std::size_t(overlapped ? si : 0)]->run(io_chunk(first, count), s);
        CS_CUDA_CHECK(cudaMemcpyAsync(static_cast<std::byte*>(h_out_) + out_off,
                                      static_cast<const std::byte*>(d_out_.get()) + out_off,
                                      std::size_t(l.output_elems(count)) * eb_, cudaMemcpyDeviceToHost, s));
    }
    if (overlapped) {
        for (int i = 0; i < ns; ++i) {
            Event done;
            done.record(streams_[std::size_t(i)].get());
            CS_CUDA_CHECK(cudaStreamWaitEvent(main, done.get(), 0));
        }
    }
}

void Run::checked_run() {
    const cudaStream_t s = ctx_.stream();
    if (managed()) {
        // Host writes put every page on the host, as a program filling its buffers would.
        std::memcpy(d_in_.get(), h_in_, in_bytes_);
        std::memcpy(d_w_.get(), h_w_, w_bytes_);
        std::memset(d_out_.get(), 0xFF, out_bytes_);  // NaN poison (float and half)
        if (mode_ == MemoryMode::managed_prefetch) {
            const auto dev = device_location(ctx_.info().device);
            prefetch(d_in_, dev, s);
            prefetch(d_w_, dev, s);
            prefetch(d_out_, dev, s);
        }
        plans_[0]->run(io_full(), s);
        CS_CUDA_CHECK(cudaStreamSynchronize(s));
        h_out_ = d_out_.get();
    } else {
        CS_CUDA_CHECK(cudaMemsetAsync(d_out_.get(), 0xFF, out_bytes_, s));  // NaN poison
        if (mode_ == MemoryMode::streams) {
            std::memset(h_out_, 0, out_bytes_);
            stream_pipeline(true);
        } else {
            h2d(s);
            plans_[0]->run(io_full(), s);
            d2h(s);
        }
        CS_CUDA_CHECK(cudaStreamSynchronize(s));
    }
    std::vector<float> outf(static_cast<std::size_t>(out_elems_));
    if (v_.io == DType::f16)
        from_half(static_cast<const __half*>(h_out_), outf.data(), out_elems_);
    else
        std::memcpy(outf.data(), h_out_, out_bytes_);

    if (data_.golden) {
        r_.err = compare(outf.data(), data_.golden, out_elems_);
        r_.check = "golden";
    } else if (data_.sample_count > 0) {
        r_.err = compare_sampled(outf.data(), data_.sample_index, data_.sample_value, data_.sample_count,
                                 data_.sample_max_abs);
        r_.check = "sampled(" + std::to_string(data_.sample_count) + ")";
        // The sample checks values; the NaN poison is checked on every element, so an
        // output element that no thread wrote fails even when no sample falls on it.
        std::int64_t nonfinite = 0, first_bad = -1;
#pragma omp parallel for reduction(+ : nonfinite)
        for (std::int64_t i = 0; i < out_elems_; ++i)
            if (!std::isfinite(outf[std::size_t(i)])) ++nonfinite;
        if (nonfinite) {
            for (std::int64_t i = 0; i < out_elems_ && first_bad < 0; ++i)
                if (!std::isfinite(outf[std::size_t(i)])) first_bad = i;
            r_.err.nonfinite = nonfinite;
            r_.err.worst_index = first_bad;
            r_.err.max_abs_err = r_.err.max_rel_err = r_.err.rel_l2_err = INFINITY;
        }
    } else {
        r_.check = "none";
    }
    if (opt_.keep_output) r_.output = std::move(outf);
}

void Run::time_copies_mode() {
    const cudaStream_t s = ctx_.stream();
    Event e0, e1, e2, e3, e4;
    std::vector<double> th, tk, td, tt;
    for (int it = 0; it < opt_.warmup + opt_.repeats; ++it) {
        if (opt_.flush_l2) ctx_.flush_l2(s);
        e0.record(s);
        h2d(s);
        e1.record(s);
        if (opt_.flush_l2) ctx_.flush_l2(s);
        e2.record(s);
        plans_[0]->run(io_full(), s);
        e3.record(s);
        d2h(s);
        e4.record(s);
        CS_CUDA_CHECK(cudaStreamSynchronize(s));
        if (it < opt_.warmup) continue;
        th.push_back(elapsed_ms(e0, e1));
        tk.push_back(elapsed_ms(e2, e3));
        td.push_back(elapsed_ms(e3, e4));
        tt.push_back(th.back() + tk.back() + td.back());
    }
    r_.h2d = Stat::of(th);
    r_.kernel = Stat::of(tk);
    r_.d2h = Stat::of(td);
    r_.total = Stat::of(tt);
}

void Run::time_managed_mode() {
    const cudaStream_t s = ctx_.stream();
    const auto host = host_location();
    const auto dev = device_location(ctx_.info().device);
    Event e0, e1, e2, e3;
    std::vector<double> th, tk, td, tt;
    for (int it = 0; it < opt_.warmup + opt_.repeats; ++it) {
        // Untimed: every page back on the host, as after the host wrote the inputs.
        prefetch(d_in_, host, s);
        prefetch(d_w_, host, s);
        prefetch(d_out_, host, s);
        if (opt_.flush_l2) ctx_.flush_l2(s);
        CS_CUDA_CHECK(cudaStreamSynchronize(s));
        e0.record(s);
        if (mode_ == MemoryMode::managed_prefetch) {
            prefetch(d_in_, dev, s);
            prefetch(d_w_, dev, s);
            prefetch(d_out_, dev, s);
        }
        e1.record(s);
        plans_[0]->run(io_full(), s);
        e2.record(s);
        prefetch(d_out_, host, s);
        e3.record(s);
        CS_CUDA_CHECK(cudaStreamSynchronize(s));
        if (it < opt_.warmup) continue;
        th.push_back(mode_ == MemoryMode::managed_prefetch ? elapsed_ms(e0, e1) : 0.0);
        tk.push_back(elapsed_ms(e1, e2));
        td.push_back(elapsed_ms(e2, e3));
        tt.push_back(th.back() + tk.back() + td.back());
    }
    r_.h2d = Stat::of(th);
    r_.kernel = Stat::of(tk);
    r_.d2h = Stat::of(td);
    r_.total = Stat::of(tt);
}

void Run::time_streams_mode() {
    const cudaStream_t s = ctx_.stream();
    Event e0, e1, e2, e3, e4;
    std::vector<double> th, tk, td, tt;
    // The parts one after another on one stream: what the overlap has to hide.
    for (int it = 0; it < opt_.warmup + opt_.repeats; ++it) {
        if (opt_.flush_l2) ctx_.flush_l2(s);
        e0.record(s);
        h2d(s);
        e1.record(s);
        if (opt_.flush_l2) ctx_.flush_l2(s);
        e2.record(s);
        for (std::int64_t first = 0; first < p_.N; first += chunk_n_)
            plans_[0]->run(io_chunk(first, std::min(chunk_n_, p_.N - first)), s);
        e3.record(s);
        d2h(s);
        e4.record(s);
        CS_CUDA_CHECK(cudaStreamSynchronize(s));
        if (it < opt_.warmup) continue;
        th.push_back(elapsed_ms(e0, e1));
        tk.push_back(elapsed_ms(e2, e3));
        td.push_back(elapsed_ms(e3, e4));
    }
    // The overlapped pipeline, end to end.
    for (int it = 0; it < opt_.warmup + opt_.repeats; ++it) {
        if (opt_.flush_l2) ctx_.flush_l2(s);
        e0.record(s);
        stream_pipeline(true);
        e1.record(s);
        CS_CUDA_CHECK(cudaStreamSynchronize(s));
        if (it < opt_.warmup) continue;
        tt.push_back(elapsed_ms(e0, e1));
    }
    r_.h2d = Stat::of(th);
    r_.kernel = Stat::of(tk);
    r_.d2h = Stat::of(td);
    r_.total = Stat::of(tt);
}

void Run::execute() {
    if (auto why = v_.supports(p_, ctx_.prop())) throw Skip(*why);
    if (managed() && !ctx_.info().concurrent_managed)
        throw Skip("this device has no concurrent managed access, so managed pages cannot be prefetched");
    sizes();
    const auto t0 = Clock::now();
    stage_host();
    allocate();
    make_plans();
    CS_CUDA_CHECK(cudaDeviceSynchronize());
    r_.setup_ms = ms_since(t0);

    checked_run();
    if (r_.check != "none" && !passes(r_.err, v_.precision)) {
        r_.status = Status::fail;
        char b[256];
        if (r_.err.nonfinite)
            std::snprintf(b, sizeof b, "%lld outputs are NaN/Inf (unwritten or overflowed), first at index %lld",
                          static_cast<long long>(r_.err.nonfinite), static_cast<long long>(r_.err.worst_index));
        else
            std::snprintf(b, sizeof b, "max_rel_err %.3g > threshold %.3g (max_abs_err %.3g at index %lld)",
                          r_.err.max_rel_err, r_.threshold, r_.err.max_abs_err,
                          static_cast<long long>(r_.err.worst_index));
        r_.reason = b;
        return;
    }
    if (opt_.repeats > 0) {
        if (managed())
            time_managed_mode();
        else if (mode_ == MemoryMode::streams)
            time_streams_mode();
        else
            time_copies_mode();
    }
    r_.status = Status::pass;
}

}  // namespace

RunResult run_variant(DeviceContext& ctx, const Variant& v, MemoryMode mode, const Problem& p, const HostData& data,
                      const RunOptions& opt) {
    RunResult r;
    r.threshold = threshold(v.precision);
    try {
        Run run(ctx, v, mode, p, data, opt, r);
        run.execute();
    } catch (const Skip& e) {
        r.status = Status::skip;
        r.reason = e.what();
    } catch (const CudaError& e) {
        r.status = Status::error;
        r.reason = e.what();
        r.fatal = is_sticky(e.code());
        if (!r.fatal && e.code() == cudaErrorMemoryAllocation) {
            r.status = Status::skip;
            r.reason = std::string("out of device memory: ") + e.what();
        }
    } catch (const std::bad_alloc&) {
        r.status = Status::skip;
        r.reason = "out of host memory";
    } catch (const std::exception& e) {
        r.status = Status::error;
        r.reason = e.what();
    }
    // A failed launch or allocation must not leak into the next run's error checks.
    if (!r.fatal) (void)cudaGetLastError();
    return r;
}

}  // namespace cs::gpu
