#include "harness_run.hpp"

#include "convert.hpp"
#include "cuda_check.hpp"
#include "error.hpp"
#include "join.hpp"
#include "layout.hpp"
#include "nvml.hpp"
#include "nvtx.hpp"
#include "sample_grid.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <new>

namespace cs::gpu::harness_detail {
namespace {

std::string gib(double bytes) {
    char b[32];
    std::snprintf(b, sizeof b, "%.2f GiB", bytes / double(1ull << 30));
    return b;
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

}  // namespace

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
        in_perm_ = Buffer(MemKind::pageable, std::size_t(in_elems_) * 4);
        w_perm_ = Buffer(MemKind::pageable, std::size_t(w_elems_) * 4);
        nchw_to_nhwc(data_.in, in_perm_.as<float>(), p_.N, l.C, l.H, l.W);
        nchw_to_nhwc(data_.w, w_perm_.as<float>(), l.M, l.C, l.R, l.S);
        h_in_ = in_perm_.as<float>();
        h_w_ = w_perm_.as<float>();
    } else {
        h_in_ = data_.in;
        h_w_ = data_.w;
    }
}

void Run::allocate() {
    const MemKind kind = managed() ? MemKind::managed : MemKind::device;
    x_in_ = Buffer(kind, std::size_t(in_elems_) * 4);
    x_w_ = Buffer(kind, std::size_t(w_elems_) * 4);
    x_out_ = Buffer(kind, std::size_t(out_elems_) * 4 + (converts() ? 0 : kGuardBytes));
    if (converts()) {
        k_in_ = Buffer(MemKind::device, std::size_t(in_elems_) * eb_);
        k_w_ = Buffer(MemKind::device, std::size_t(w_elems_) * eb_);
        k_out_ = Buffer(MemKind::device, std::size_t(out_elems_) * eb_ + kGuardBytes);
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
        page_out_ = Buffer(MemKind::pageable, std::size_t(out_elems_) * 4);  // every read follows a write
        h_out_ = page_out_.as<float>();
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
    // Without the caller's engine memory the row's plans share one of their own: a library
    // searches once per row and remembers nothing past it.
    if (!opt_.engines) own_engines_ = std::make_unique<EngineChoices>();
    PlanState state = opt_;
    if (!state.engines) state.engines = own_engines_.get();
    PlanContext pc{state, ctx_.prop(), ctx_.info().device, limit / std::size_t(nplans), chunk_n_};
    for (int i = 0; i < nplans; ++i) plans_.push_back(v_.make_plan(p_, pc));
    for (const auto& pl : plans_) r_.workspace_bytes += pl->workspace_bytes();
    r_.detail = plans_.front()->detail();
    if (nplans == 1) r_.search_ms = plans_.front()->search_ms();  // streams: each plan a chunk
    if (auto c = plans_.front()->config(); !c.empty()) r_.config = c;
    const std::string a = plans_.front()->algo();
    r_.algo = a.empty() ? v_.algo : a;
    r_.device_bytes = x_in_.bytes() + x_w_.bytes() + x_out_.bytes() + k_in_.bytes() + k_w_.bytes() +
                      k_out_.bytes() - kGuardBytes + r_.workspace_bytes;
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
    check_guard("the checked run");
    const Buffer out_nchw = output_nchw();
    const float* outf = out_nchw.as<float>();

    if (data_.golden) {
        r_.err = compare(outf, data_.golden, out_elems_, data_.bound, v_.precision, min_terms(p_.layer));
        r_.check = "golden";
    } else if (data_.sample_count > 0) {
        r_.err = compare_sampled(outf, data_.sample_index, data_.sample_value, data_.sample_bound,
                                 data_.sample_count, data_.sample_max_abs, v_.precision, min_terms(p_.layer));
        r_.check = "sampled(" + std::to_string(data_.sample_count) + ")";
        // The sample checks values; the NaN poison is checked on every element, so an
        // output element that no thread wrote fails even when no sample falls on it.
        std::int64_t nonfinite = 0, first_bad = -1;
#pragma omp parallel for reduction(+ : nonfinite)
        for (std::int64_t i = 0; i < out_elems_; ++i)
            if (!std::isfinite(outf[i])) ++nonfinite;
        if (nonfinite) {
            for (std::int64_t i = 0; i < out_elems_ && first_bad < 0; ++i)
                if (!std::isfinite(outf[i])) first_bad = i;
            r_.err.nonfinite = nonfinite;
            r_.err.worst_index = first_bad;
            r_.err.max_abs_err = r_.err.max_rel_err = r_.err.rel_l2_err = INFINITY;
        }
    } else {
        r_.check = "none";
    }
    if (opt_.keep_output) r_.output.assign(outf, outf + out_elems_);
}

// The checked run's host output in the golden files' layout (NCHW), as float.
Buffer Run::output_nchw() const {
    Buffer outf(MemKind::pageable, std::size_t(out_elems_) * 4);
    if (p_.layout == Layout::nhwc) {
        const Layer& l = p_.layer;
        nhwc_to_nchw(h_out_, outf.as<float>(), p_.N, l.M, l.E(), l.F());
    } else {
        std::memcpy(outf.get(), h_out_, outf.bytes());
    }
    return outf;
}

bool Run::host_timed(int it) const {
    const int j = it - opt_.warmup;
    return j >= 0 && (opt_.host_repeats < 0 || j < opt_.host_repeats);
}

// The NaN poison of the device output (0xFF bytes are NaN in float, half and bf16), before
// every warm-up and timed repeat, outside every interval: an element a later run leaves
// unwritten fails its check as it would the checked run's.
void Run::poison_device(cudaStream_t s) {
    CS_CUDA_CHECK(cudaMemsetAsync(x_out_.get(), 0xFF, x_out_.bytes(), s));
    if (converts()) CS_CUDA_CHECK(cudaMemsetAsync(k_out_.get(), 0xFF, k_out_.bytes(), s));
}

// One iteration in the copies modes: copies in, conversion, kernels, conversion back and
// copies out one after another on one stream, each part between its own events; L2 flushed
// before the copies and again before the kernels, and the stream held busy before each
// (DeviceContext::hold), all outside every interval. Warm-ups and the timed repeats after the
// first host_repeats run the kernels alone (the inputs are on the device since the checked
// run). `chunked`: the kernels run chunk by chunk (the streams mode's serial reference).
void Run::copies_iteration(int it, bool chunked) {
    const cudaStream_t s = ctx_.stream();
    const bool host = host_timed(it) || mode_ == MemoryMode::streams;
    Event* e = e_;
    const nvtx::Range phase(phase_name(it));
    poison_device(s);
    if (host) {
        if (opt_.flush_l2) ctx_.flush_l2(s);
        ctx_.hold(s);
        e[0].record(s);
        h2d_weights(s);
        h2d_input(s, 0, p_.N);
        e[1].record(s);
        convert_weights(s);
        convert_input(s, 0, p_.N);
        e[2].record(s);
    }
    if (opt_.flush_l2) ctx_.flush_l2(s);
    ctx_.hold(s);
    e[3].record(s);
    {
        const nvtx::Range k(kernels_range_name(it));
        kernels(s, chunked);
    }
    e[4].record(s);
    if (host) {
        convert_output(s, 0, p_.N);
        e[5].record(s);
        d2h_output(s, 0, p_.N);
        e[6].record(s);
    }
    CS_CUDA_CHECK(cudaStreamSynchronize(s));
    if (it >= opt_.warmup) {
        tk_.push_back(elapsed_ms(e[3], e[4]));
        if (host) {
            th_.push_back(elapsed_ms(e[0], e[1]));
            tc_.push_back(converts() ? elapsed_ms(e[1], e[2]) + elapsed_ms(e[4], e[5]) : 0.0);
            td_.push_back(elapsed_ms(e[5], e[6]));
            tt_.push_back(th_.back() + tc_.back() + tk_.back() + td_.back());
        }
    }
    verify_run(it, chunked ? "serial" : nullptr);
}

void Run::managed_iteration(int it) {
    const cudaStream_t s = ctx_.stream();
    const auto host = host_location();
    const auto dev = device_location(ctx_.info().device);
    Event* e = e_;
    const nvtx::Range phase(phase_name(it));
    // Untimed: every page back on the host, as after the host wrote the inputs, and the output
    // poisoned there.
    prefetch(x_in_, host, s);
    prefetch(x_w_, host, s);
    prefetch(x_out_, host, s);
    if (converts()) CS_CUDA_CHECK(cudaMemsetAsync(k_out_.get(), 0xFF, k_out_.bytes(), s));
    if (opt_.flush_l2) ctx_.flush_l2(s);
    CS_CUDA_CHECK(cudaStreamSynchronize(s));
    std::memset(x_out_.get(), 0xFF, x_out_.bytes());
    ctx_.hold(s);
    e[0].record(s);
    if (mode_ == MemoryMode::managed_prefetch) {
        prefetch(x_in_, dev, s);
        prefetch(x_w_, dev, s);
        prefetch(x_out_, dev, s);
    }
    e[1].record(s);
    convert_weights(s);
    convert_input(s, 0, p_.N);
    e[2].record(s);
    {
        const nvtx::Range k(kernels_range_name(it));
        kernels(s, false);
    }
    e[3].record(s);
    convert_output(s, 0, p_.N);
    e[4].record(s);
    prefetch(x_out_, host, s);
    e[5].record(s);
    CS_CUDA_CHECK(cudaStreamSynchronize(s));
    if (it >= opt_.warmup) {
        th_.push_back(mode_ == MemoryMode::managed_prefetch ? elapsed_ms(e[0], e[1]) : 0.0);
        tc_.push_back(converts() ? elapsed_ms(e[1], e[2]) + elapsed_ms(e[3], e[4]) : 0.0);
        tk_.push_back(elapsed_ms(e[2], e[3]));
        td_.push_back(elapsed_ms(e[4], e[5]));
        tt_.push_back(th_.back() + tc_.back() + tk_.back() + td_.back());
    }
    verify_run(it, nullptr);
}

// The streams mode's overlapped pipeline, end to end.
void Run::pipeline_iteration(int it) {
    const cudaStream_t s = ctx_.stream();
    const nvtx::Range phase(it < opt_.warmup ? "warm-up pipeline" : "timed pipeline");
    poison_device(s);
    if (opt_.flush_l2) ctx_.flush_l2(s);
    ctx_.hold(s);
    e_[0].record(s);
    stream_pipeline();
    e_[1].record(s);
    CS_CUDA_CHECK(cudaStreamSynchronize(s));
    if (it >= opt_.warmup) tpipe_.push_back(elapsed_ms(e_[0], e_[1]));
    verify_run(it, "pipeline");
}

void Run::iteration(int it) {
    if (managed()) {
        managed_iteration(it);
    } else if (mode_ == MemoryMode::streams) {
        copies_iteration(it, true);  // the parts one after another, chunk by chunk: what the overlap has to hide
        pipeline_iteration(it);
    } else {
        copies_iteration(it, false);
    }
}

std::string Run::run_label(int it) const {
    // The checked run is run 1; iteration it is run it + 2.
    if (it < opt_.warmup)
        return "run " + std::to_string(it + 2) + " (warm-up " + std::to_string(it + 1) + " of " +
               std::to_string(opt_.warmup) + ")";
    return "run " + std::to_string(it + 2) + " (timed repeat " + std::to_string(it - opt_.warmup + 1) + " of " +
           std::to_string(opt_.repeats) + ")";
}

// The check of a later run (bench/output_check.hpp): no non-finite element; for a deterministic
// variant the checked run's bits exactly (checksum), for the others the tile-covering sample
// against the reference at the class threshold.
void Run::verify_run(int it, const char* what) {
    const AddWallTime add{r_.recheck_ms};  // the checks' host wall time, however they end
    const std::string label = run_label(it) + (what ? std::string(" [") + what + "]" : "");
    check_guard(label);
    if (!verifier_) return;  // the checked run compared nothing: the row is UNCHECKED
    const cudaStream_t s = ctx_.stream();
    const OutputDigest d = verifier_->digest(k_out(), s);
    ++r_.checked_runs;
    for (const auto& pl : plans_)
        if (auto why = pl->run_error()) throw cs::Error(label + ": " + *why);
    if (d.nonfinite > 0)
        throw RunMismatch(label + " differs from the checked run: " + std::to_string(d.nonfinite) +
                          " output elements are NaN or Inf (unwritten, or a wrong result)");
    if (deterministic_) {
        if (d.checksum != reference_.checksum) {
            char b[96];
            std::snprintf(b, sizeof b, " (checksum %016llx, the checked run's %016llx)",
                          static_cast<unsigned long long>(d.checksum),
                          static_cast<unsigned long long>(reference_.checksum));
            throw RunMismatch(label + " differs from the checked run bit for bit" + b +
                              "; the variant is declared deterministic");
        }
        return;
    }
    const auto& smp = verifier_->samples();
    const ErrorStats e = compare_sampled(smp.data(), identity_.data(), recheck_value_.data(),
                                         recheck_bound_.empty() ? nullptr : recheck_bound_.data(),
                                         std::int64_t(smp.size()), recheck_max_abs_, v_.precision, min_terms(p_.layer));
    if (!passes(e, v_.precision))
        throw RunMismatch(label + " fails the tile-covering sample (" + std::to_string(smp.size()) +
                          " elements): " + failure_reason(e, v_.precision));
}

// The guard band after the output (kGuardBytes, NaN-poisoned with it) still all 0xFF bytes
// after a run: else the run wrote past the output's last element (RunMismatch: the row FAILs,
// naming the run, before the verifier reads anything the write may have reached).
void Run::check_guard(const std::string& label) const {
    const Buffer& out = converts() ? k_out_ : x_out_;
    const auto* tail = static_cast<const unsigned char*>(out.get()) + (out.bytes() - kGuardBytes);
    std::vector<unsigned char> h(kGuardBytes);
    CS_CUDA_CHECK(cudaMemcpyAsync(h.data(), tail, kGuardBytes, cudaMemcpyDefault, ctx_.stream()));
    CS_CUDA_CHECK(cudaStreamSynchronize(ctx_.stream()));
    std::size_t changed = 0, first = 0;
    for (std::size_t i = 0; i < h.size(); ++i)
        if (h[i] != 0xFF && changed++ == 0) first = i;
    if (changed)
        throw RunMismatch(label + " wrote past its output: " + std::to_string(changed) + " of the " +
                          std::to_string(kGuardBytes) + " bytes after the output's last element changed, the first " +
                          std::to_string(first) + " bytes past it");
}

// What later runs are held to: the checked run's digest, and the tile-covering sample's
// reference values (from the golden output, or the sampled check's own values).
void Run::make_verifier() {
    Plan& pl = *plans_.front();
    deterministic_ = pl.deterministic().value_or(v_.deterministic);
    std::vector<std::int64_t> idx;
    if (data_.golden) {
        idx = tile_covering_indices(p_.layer, p_.N, opt_.sample_seed);
        recheck_value_.resize(idx.size());
        if (data_.bound) recheck_bound_.resize(idx.size());
        for (std::size_t i = 0; i < idx.size(); ++i) {
            recheck_value_[i] = data_.golden[std::size_t(idx[i])];
            if (data_.bound) recheck_bound_[i] = data_.bound[std::size_t(idx[i])];
        }
        recheck_max_abs_ = r_.err.max_abs_golden;
    } else {
        idx.assign(data_.sample_index, data_.sample_index + data_.sample_count);
        recheck_value_.assign(data_.sample_value, data_.sample_value + data_.sample_count);
        if (data_.sample_bound) recheck_bound_.assign(data_.sample_bound, data_.sample_bound + data_.sample_count);
        recheck_max_abs_ = data_.sample_max_abs;
    }
    identity_.resize(idx.size());
    for (std::size_t i = 0; i < idx.size(); ++i) identity_[i] = std::int64_t(i);
    verifier_ = std::make_unique<OutputVerifier>(p_.layer, p_.N, p_.layout, v_.io, idx);
    reference_ = verifier_->digest(k_out(), ctx_.stream());
}

void Run::prepare() {
    r_.axes = p_.axes;
    r_.config = axis_config(v_, p_.axes).str();  // the plan's own, once it is made
    if (auto why = axes_error(v_, p_.axes)) throw Skip(*why);
    if (std::find(v_.layouts.begin(), v_.layouts.end(), p_.layout) == v_.layouts.end())
        throw Skip("runs only in layout " + join(v_.layouts, ", ", [](Layout l) { return to_string(l); }) + ", not " +
                   std::string(to_string(p_.layout)));
    if (auto why = v_.supports(p_, ctx_.prop())) throw Skip(*why);
    if (managed() && !ctx_.info().concurrent_managed)
        throw Skip("this device has no concurrent managed access, so managed pages cannot be prefetched");
    const nvtx::Range plan("plan");
    sizes();
    const auto t0 = Clock::now();
    stage_host();
    allocate();
    make_plans();
    CS_CUDA_CHECK(cudaDeviceSynchronize());
    r_.setup_ms = ms_since(t0);
}

bool Run::check() {
    const nvtx::Range check("check");
    const AddWallTime add{r_.check_ms};  // the checked run's host wall time, however it ends
    checked_run();
    // Data a plan could not represent (the split variants' range flag): an ERROR naming
    // the range, whatever the output looks like.
    for (const auto& pl : plans_)
        if (auto why = pl->run_error()) throw cs::Error(*why);
    if (r_.check == "none") return true;  // timed, but UNCHECKED
    r_.checked_runs = 1;
    if (!passes(r_.err, v_.precision)) {
        r_.status = Status::fail;
        r_.reason = failure_reason(r_.err, v_.precision);
        return false;
    }
    if (opt_.check_every_run && opt_.repeats > 0) make_verifier();
    return true;
}

void Run::note_clock_power(bool start) {
    const ClockPower c = read_clock_power(ctx_.info().device);
    (start ? r_.sm_clock_mhz_start : r_.sm_clock_mhz_end) = c.sm_mhz;
    (start ? r_.power_w_start : r_.power_w_end) = c.power_w;
}

void Run::finish() {
    if (opt_.repeats > 0) {
        r_.kernel = Stat::of(tk_);
        r_.h2d = Stat::of(th_);
        r_.convert = Stat::of(tc_);
        r_.d2h = Stat::of(td_);
        r_.total = Stat::of(mode_ == MemoryMode::streams ? tpipe_ : tt_);
        r_.host_repeats = int(th_.size());
    }
    r_.status = r_.check == "none" ? Status::unchecked : Status::pass;
    if (r_.status == Status::unchecked) r_.reason = "no reference to check the output against";
}

}  // namespace cs::gpu::harness_detail
