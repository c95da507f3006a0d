#include "harness.hpp"

#include "buffers.hpp"
#include "convert.hpp"
#include "layout.hpp"
#include "cuda_check.hpp"
#include "error.hpp"
#include "nvtx.hpp"

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
    auto quantile = [&](double q) {
        const double at = q * double(v.size() - 1);
        const std::size_t lo = std::size_t(at);
        const std::size_t hi = std::min(lo + 1, v.size() - 1);
        return v[lo] + (at - double(lo)) * (v[hi] - v[lo]);
    };
    s.p10 = quantile(0.1);
    s.p90 = quantile(0.9);
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
//
// Buffers: x_* are what the copies (or the host, in managed memory) fill and drain: float
// tensors in the problem's layout. k_* are the variant's own tensors when its element
// type is not float (converted on the GPU); otherwise the variant works on x_* directly.
class Run {
public:
    Run(DeviceContext& ctx, const Variant& v, MemoryMode mode, const Problem& p, const HostData& data,
        const RunOptions& opt, RunResult& r)
        : ctx_(ctx), v_(v), mode_(mode), p_(p), data_(data), opt_(opt), r_(r) {}

    void execute();
    // True once a kernel of the run may have been enqueued: a failure after that is ERROR.
    bool started() const { return started_; }

private:
    bool managed() const { return mode_ == MemoryMode::managed || mode_ == MemoryMode::managed_prefetch; }
    bool converts() const { return v_.io != DType::f32; }
    void sizes();  // element counts and bytes; SKIP when the tensors cannot fit
    void stage_host();
    void allocate();
    void make_plans();
    void checked_run();
    std::vector<float> output_nchw() const;

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
    void time_copies_mode(bool chunked);
    void time_managed_mode();
    void time_streams_mode();
    // NVTX names of timing-loop iteration `it` and of its kernel_ms interval (nvtx.hpp).
    const char* phase_name(int it) const { return it < opt_.warmup ? "warm-up" : "timed"; }
    const char* kernels_range_name(int it) const { return it < opt_.warmup ? "warm-up kernels" : nvtx::kTimedKernels; }

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
    std::vector<float> in_perm_, w_perm_;      // host inputs in the problem's layout (nhwc)
    const float* h_in_ = nullptr;              // host source, float, problem's layout
    const float* h_w_ = nullptr;
    Buffer pin_in_, pin_w_, pin_out_;          // pinned / streams host buffers
    std::vector<float> page_out_;              // pageable host output
    float* h_out_ = nullptr;
    Buffer x_in_, x_w_, x_out_;                // float tensors: device or managed
    Buffer k_in_, k_w_, k_out_;                // the variant's half / bf16 tensors
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
    const std::size_t elems = std::size_t(in_elems_ + w_elems_ + out_elems_);
    const std::size_t tensors = elems * 4 + (converts() ? elems * eb_ : 0);
    const std::size_t free = ctx_.free_bytes();
    const std::size_t margin = std::size_t(256) << 20;
    if (tensors + margin > free)
        throw Skip("the tensors need " + gib(double(tensors)) + " of device memory and only " + gib(double(free)) +
                   " is free");
}

void Run::stage_host() {
    if (p_.layout == Layout::nhwc) {
        const Layer& l = p_.layer;
        in_perm_.resize(std::size_t(in_elems_));
        w_perm_.resize(std::size_t(w_elems_));
        nchw_to_nhwc(data_.in, in_perm_.data(), p_.N, l.C, l.H, l.W);
        nchw_to_nhwc(data_.w, w_perm_.data(), l.M, l.C, l.R, l.S);
        h_in_ = in_perm_.data();
        h_w_ = w_perm_.data();
    } else {
        h_in_ = data_.in;
        h_w_ = data_.w;
    }
}

void Run::allocate() {
    const MemKind kind = managed() ? MemKind::managed : MemKind::device;
    x_in_ = Buffer(kind, std::size_t(in_elems_) * 4);
    x_w_ = Buffer(kind, std::size_t(w_elems_) * 4);
    x_out_ = Buffer(kind, std::size_t(out_elems_) * 4);
    if (converts()) {
        k_in_ = Buffer(MemKind::device, std::size_t(in_elems_) * eb_);
        k_w_ = Buffer(MemKind::device, std::size_t(w_elems_) * eb_);
        k_out_ = Buffer(MemKind::device, std::size_t(out_elems_) * eb_);
    }
    if (mode_ == MemoryMode::pinned || mode_ == MemoryMode::streams) {
        pin_in_ = Buffer(MemKind::pinned, x_in_.bytes());
        pin_w_ = Buffer(MemKind::pinned, x_w_.bytes());
        pin_out_ = Buffer(MemKind::pinned, x_out_.bytes());
        std::memcpy(pin_in_.get(), h_in_, x_in_.bytes());
        std::memcpy(pin_w_.get(), h_w_, x_w_.bytes());
        h_in_ = pin_in_.as<float>();
        h_w_ = pin_w_.as<float>();
        h_out_ = pin_out_.as<float>();
    } else if (mode_ == MemoryMode::pageable) {
        page_out_.resize(std::size_t(out_elems_));
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
    if (nplans == 1) r_.search_ms = plans_.front()->search_ms();  // streams: each plan a chunk
    if (auto c = plans_.front()->config(); !c.empty()) r_.config = c;
    const std::string a = plans_.front()->algo();
    r_.algo = a.empty() ? v_.algo : a;
    r_.device_bytes = x_in_.bytes() + x_w_.bytes() + x_out_.bytes() + k_in_.bytes() + k_w_.bytes() +
                      k_out_.bytes() + r_.workspace_bytes;
}

DeviceIO Run::io_chunk(std::int64_t first, std::int64_t count) const {
    const Layer& l = p_.layer;
    const auto* in = static_cast<const std::byte*>(k_in()) + std::size_t(l.input_elems(first)) * eb_;
    auto* out = static_cast<std::byte*>(k_out()) + std::size_t(l.output_elems(first)) * eb_;
    return DeviceIO{in, k_w(), out, count};
}

void Run::h2d_weights(cudaStream_t s) {
    CS_CUDA_CHECK(cudaMemcpyAsync(x_w_.get(), h_w_, x_w_.bytes(), cudaMemcpyHostToDevice, s));
}

void Run::h2d_input(cudaStream_t s, std::int64_t first, std::int64_t count) {
    const std::int64_t off = p_.layer.input_elems(first);
    CS_CUDA_CHECK(cudaMemcpyAsync(x_in_.as<float>() + off, h_in_ + off, std::size_t(p_.layer.input_elems(count)) * 4,
                                  cudaMemcpyHostToDevice, s));
}

void Run::d2h_output(cudaStream_t s, std::int64_t first, std::int64_t count) {
    const std::int64_t off = p_.layer.output_elems(first);
    CS_CUDA_CHECK(cudaMemcpyAsync(h_out_ + off, x_out_.as<float>() + off,
                                  std::size_t(p_.layer.output_elems(count)) * 4, cudaMemcpyDeviceToHost, s));
}

void Run::convert_weights(cudaStream_t s) {
    if (converts()) convert_from_float(x_w_.as<float>(), k_w_.get(), v_.io, w_elems_, s);
}

void Run::convert_input(cudaStream_t s, std::int64_t first, std::int64_t count) {
    if (!converts()) return;
    const std::int64_t off = p_.layer.input_elems(first);
    convert_from_float(x_in_.as<float>() + off, static_cast<std::byte*>(k_in_.get()) + std::size_t(off) * eb_, v_.io,
                       p_.layer.input_elems(count), s);
}

void Run::convert_output(cudaStream_t s, std::int64_t first, std::int64_t count) {
    if (!converts()) return;
    const std::int64_t off = p_.layer.output_elems(first);
    convert_to_float(static_cast<const std::byte*>(k_out_.get()) + std::size_t(off) * eb_, v_.io,
                     x_out_.as<float>() + off, p_.layer.output_elems(count), s);
}

// The variant's kernels on the whole batch: one Plan::run, or (chunked: the streams
// mode's serial reference) one per chunk.
void Run::kernels(cudaStream_t s, bool chunked) {
    if (!chunked) {
        plans_[0]->run(io_full(), s);
        return;
    }
    for (std::int64_t first = 0; first < p_.N; first += chunk_n_)
        plans_[0]->run(io_chunk(first, std::min(chunk_n_, p_.N - first)), s);
}

void Run::prefetch(const Buffer& b, cudaMemLocation loc, cudaStream_t s) {
    CS_CUDA_CHECK(cudaMemPrefetchAsync(b.get(), b.bytes(), loc, 0, s));
}

// The streams pipeline: weights first, then each chunk's copy in, conversion, kernels,
// conversion back and copy out on stream (chunk % streams).
void Run::stream_pipeline() {
    const cudaStream_t main = ctx_.stream();
    h2d_weights(main);
    convert_weights(main);
    Event weights_done;
    weights_done.record(main);
    const int ns = int(streams_.size());
    for (int i = 0; i < ns; ++i)
        CS_CUDA_CHECK(cudaStreamWaitEvent(streams_[std::size_t(i)].get(), weights_done.get(), 0));
    int k = 0;
    for (std::int64_t first = 0; first < p_.N; first += chunk_n_, ++k) {
        const std::int64_t count = std::min(chunk_n_, p_.N - first);
        const int si = k % ns;
        const cudaStream_t s = streams_[std::size_t(si)].get();
        h2d_input(s, first, count);
        convert_input(s, first, count);
        plans_[std::size_t(si)]->run(io_chunk(first, count), s);
        convert_output(s, first, count);
        d2h_output(s, first, count);
    }
    for (int i = 0; i < ns; ++i) {
        Event done;
        done.record(streams_[std::size_t(i)].get());
        CS_CUDA_CHECK(cudaStreamWaitEvent(main, done.get(), 0));
    }
}

void Run::checked_run() {
    const cudaStream_t s = ctx_.stream();
    started_ = true;
    if (managed()) {
        // Host writes put every page on the host, as a program filling its buffers would.
        std::memcpy(x_in_.get(), h_in_, x_in_.bytes());
        std::memcpy(x_w_.get(), h_w_, x_w_.bytes());
        std::memset(x_out_.get(), 0xFF, x_out_.bytes());  // NaN poison
        if (converts()) CS_CUDA_CHECK(cudaMemsetAsync(k_out_.get(), 0xFF, k_out_.bytes(), s));
        if (mode_ == MemoryMode::managed_prefetch) {
            const auto dev = device_location(ctx_.info().device);
            prefetch(x_in_, dev, s);
            prefetch(x_w_, dev, s);
            prefetch(x_out_, dev, s);
        }
        convert_weights(s);
        convert_input(s, 0, p_.N);
        kernels(s, false);
        convert_output(s, 0, p_.N);
        CS_CUDA_CHECK(cudaStreamSynchronize(s));
        h_out_ = x_out_.as<float>();
    } else {
        // NaN poison (0xFF bytes are NaN in float, half and bf16) on the device and on
        // the host: an element that no kernel or copy wrote fails the check.
        CS_CUDA_CHECK(cudaMemsetAsync(x_out_.get(), 0xFF, x_out_.bytes(), s));
        if (converts()) CS_CUDA_CHECK(cudaMemsetAsync(k_out_.get(), 0xFF, k_out_.bytes(), s));
        std::memset(h_out_, 0xFF, std::size_t(out_elems_) * 4);
        if (mode_ == MemoryMode::streams) {
            CS_CUDA_CHECK(cudaStreamSynchronize(s));
            stream_pipeline();
        } else {
            h2d_weights(s);
            h2d_input(s, 0, p_.N);
            convert_weights(s);
            convert_input(s, 0, p_.N);
            kernels(s, false);
            convert_output(s, 0, p_.N);
            d2h_output(s, 0, p_.N);
        }
        CS_CUDA_CHECK(cudaStreamSynchronize(s));
    }
    std::vector<float> outf = output_nchw();

    if (data_.golden) {
        r_.err = compare(outf.data(), data_.golden, out_elems_, data_.bound, v_.precision, min_terms(p_.layer));
        r_.check = "golden";
    } else if (data_.sample_count > 0) {
        r_.err = compare_sampled(outf.data(), data_.sample_index, data_.sample_value, data_.sample_bound,
                                 data_.sample_count, data_.sample_max_abs, v_.precision, min_terms(p_.layer));
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

// The checked run's host output in the golden files' layout (NCHW), as float.
std::vector<float> Run::output_nchw() const {
    std::vector<float> outf(static_cast<std::size_t>(out_elems_));
    if (p_.layout == Layout::nhwc) {
        const Layer& l = p_.layer;
        nhwc_to_nchw(h_out_, outf.data(), p_.N, l.M, l.E(), l.F());
    } else {
        std::memcpy(outf.data(), h_out_, outf.size() * 4);
    }
    return outf;
}

// Copies in, conversion, kernels, conversion back and copies out one after another on
// one stream, each part between its own events; L2 flushed before the copies and again
// before the kernels, and the stream held busy before each (DeviceContext::hold), all
// outside every interval. `chunked`: the kernels run chunk by chunk
// (the streams mode's serial reference).
void Run::time_copies_mode(bool chunked) {
    const cudaStream_t s = ctx_.stream();
    Event e0, e1, e2, e3, e4, e5, e6;
    std::vector<double> th, tc, tk, td, tt;
    for (int it = 0; it < opt_.warmup + opt_.repeats; ++it) {
        const nvtx::Range phase(phase_name(it));
        if (opt_.flush_l2) ctx_.flush_l2(s);
        ctx_.hold(s);
        e0.record(s);
        h2d_weights(s);
        h2d_input(s, 0, p_.N);
        e1.record(s);
        convert_weights(s);
        convert_input(s, 0, p_.N);
        e2.record(s);
        if (opt_.flush_l2) ctx_.flush_l2(s);
        ctx_.hold(s);
        e3.record(s);
        {
            const nvtx::Range k(kernels_range_name(it));
            kernels(s, chunked);
        }
        e4.record(s);
        convert_output(s, 0, p_.N);
        e5.record(s);
        d2h_output(s, 0, p_.N);
        e6.record(s);
        CS_CUDA_CHECK(cudaStreamSynchronize(s));
        if (it < opt_.warmup) continue;
        th.push_back(elapsed_ms(e0, e1));
        tc.push_back(converts() ? elapsed_ms(e1, e2) + elapsed_ms(e4, e5) : 0.0);
        tk.push_back(elapsed_ms(e3, e4));
        td.push_back(elapsed_ms(e5, e6));
        tt.push_back(th.back() + tc.back() + tk.back() + td.back());
    }
    r_.h2d = Stat::of(th);
    r_.convert = Stat::of(tc);
    r_.kernel = Stat::of(tk);
    r_.d2h = Stat::of(td);
    r_.total = Stat::of(tt);
}

void Run::time_managed_mode() {
    const cudaStream_t s = ctx_.stream();
    const auto host = host_location();
    const auto dev = device_location(ctx_.info().device);
    Event e0, e1, e2, e3, e4, e5;
    std::vector<double> th, tc, tk, td, tt;
    for (int it = 0; it < opt_.warmup + opt_.repeats; ++it) {
        const nvtx::Range phase(phase_name(it));
        // Untimed: every page back on the host, as after the host wrote the inputs.
        prefetch(x_in_, host, s);
        prefetch(x_w_, host, s);
        prefetch(x_out_, host, s);
        if (opt_.flush_l2) ctx_.flush_l2(s);
        CS_CUDA_CHECK(cudaStreamSynchronize(s));
        ctx_.hold(s);
        e0.record(s);
        if (mode_ == MemoryMode::managed_prefetch) {
            prefetch(x_in_, dev, s);
            prefetch(x_w_, dev, s);
            prefetch(x_out_, dev, s);
        }
        e1.record(s);
        convert_weights(s);
        convert_input(s, 0, p_.N);
        e2.record(s);
        {
            const nvtx::Range k(kernels_range_name(it));
            kernels(s, false);
        }
        e3.record(s);
        convert_output(s, 0, p_.N);
        e4.record(s);
        prefetch(x_out_, host, s);
        e5.record(s);
        CS_CUDA_CHECK(cudaStreamSynchronize(s));
        if (it < opt_.warmup) continue;
        th.push_back(mode_ == MemoryMode::managed_prefetch ? elapsed_ms(e0, e1) : 0.0);
        tc.push_back(converts() ? elapsed_ms(e1, e2) + elapsed_ms(e3, e4) : 0.0);
        tk.push_back(elapsed_ms(e2, e3));
        td.push_back(elapsed_ms(e4, e5));
        tt.push_back(th.back() + tc.back() + tk.back() + td.back());
    }
    r_.h2d = Stat::of(th);
    r_.convert = Stat::of(tc);
    r_.kernel = Stat::of(tk);
    r_.d2h = Stat::of(td);
    r_.total = Stat::of(tt);
}

void Run::time_streams_mode() {
    // The parts one after another on one stream, chunk by chunk: what the overlap has to hide.
    time_copies_mode(true);
    // The overlapped pipeline, end to end.
    const cudaStream_t s = ctx_.stream();
    Event e0, e1;
    std::vector<double> tt;
    for (int it = 0; it < opt_.warmup + opt_.repeats; ++it) {
        const nvtx::Range phase(it < opt_.warmup ? "warm-up pipeline" : "timed pipeline");
        if (opt_.flush_l2) ctx_.flush_l2(s);
        ctx_.hold(s);
        e0.record(s);
        stream_pipeline();
        e1.record(s);
        CS_CUDA_CHECK(cudaStreamSynchronize(s));
        if (it < opt_.warmup) continue;
        tt.push_back(elapsed_ms(e0, e1));
    }
    r_.total = Stat::of(tt);
}

void Run::execute() {
    r_.axes = r_.config = p_.config.str();
    if (auto why = config_error(v_, p_.config)) throw Skip(*why);
    if (std::find(v_.layouts.begin(), v_.layouts.end(), p_.layout) == v_.layouts.end()) {
        std::string ls;
        for (auto l : v_.layouts) ls += (ls.empty() ? "" : ", ") + std::string(to_string(l));
        throw Skip("runs only in layout " + ls + ", not " + std::string(to_string(p_.layout)));
    }
    if (auto why = v_.supports(p_, ctx_.prop())) throw Skip(*why);
    if (managed() && !ctx_.info().concurrent_managed)
        throw Skip("this device has no concurrent managed access, so managed pages cannot be prefetched");
    {
        const nvtx::Range plan("plan");
        sizes();
        const auto t0 = Clock::now();
        stage_host();
        allocate();
        make_plans();
        CS_CUDA_CHECK(cudaDeviceSynchronize());
        r_.setup_ms = ms_since(t0);
    }
    {
        const nvtx::Range check("check");
        checked_run();
        // Data a plan could not represent (the split variants' range flag): an ERROR naming
        // the range, whatever the output looks like.
        for (const auto& pl : plans_)
            if (auto why = pl->run_error()) throw cs::Error(*why);
    }
    if (r_.check != "none" && !passes(r_.err, v_.precision)) {
        r_.status = Status::fail;
        r_.reason = failure_reason(r_.err, v_.precision);
        return;
    }
    if (opt_.repeats > 0) {
        if (managed())
            time_managed_mode();
        else if (mode_ == MemoryMode::streams)
            time_streams_mode();
        else
            time_copies_mode(false);
    }
    r_.status = Status::pass;
}

}  // namespace

RunResult run_variant(DeviceContext& ctx, const Variant& v, MemoryMode mode, const Problem& p, const HostData& data,
                      const RunOptions& opt) {
    RunResult r;
    r.threshold = threshold(v.precision);
    r.algo = v.algo;
    {  // the run's buffers are released at the end of this block, before the error reset
        const nvtx::Range row(nvtx::row_name(p.layer.name, static_cast<long long>(p.N), v.name,
                                             std::string(to_string(p.layout)), std::string(to_string(mode))));
        Run run(ctx, v, mode, p, data, opt, r);
        // SKIP is for a variant that refused, or tensors that cannot be had, before any of its
        // kernels ran; once one may have run, every failure is an ERROR (a SKIP would hide it).
        auto skip_or_error = [&](std::string why) {
            if (run.started()) {
                r.status = Status::error;
                r.reason = "after the variant's kernels started: " + why;
            } else {
                r.status = Status::skip;
                r.reason = std::move(why);
            }
        };
        try {
            run.execute();
        } catch (const Skip& e) {
            skip_or_error(e.what());
        } catch (const CudaError& e) {
            r.status = Status::error;
            r.reason = e.what();
            r.fatal = is_sticky(e.code());
            if (!r.fatal && e.code() == cudaErrorMemoryAllocation)
                skip_or_error(std::string("out of device memory: ") + e.what());
        } catch (const std::bad_alloc&) {
            skip_or_error("out of host memory");
        } catch (const std::exception& e) {
            r.status = Status::error;
            r.reason = e.what();
        }
    }
    // A failed launch or allocation must not leak into the next run's error checks.
    if (!r.fatal) (void)cudaGetLastError();
    return r;
}

}  // namespace cs::gpu
