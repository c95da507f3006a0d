#include "device.hpp"

#include "cuda_check.hpp"

#include <algorithm>
#include <vector>

#ifdef CONVSTUDY_HAVE_CUDNN
extern "C" std::size_t cudnnGetVersion(void);
#endif

namespace cs::gpu {

namespace {

// Why cudaGetDeviceCount failed, in words. The runtime reports a machine with no NVIDIA
// driver at all as cudaErrorInsufficientDriver, the error of a driver too old for the
// runtime; the driver's version tells them apart (cudaDriverGetVersion gives 0 when no
// driver is installed).
std::string no_device_reason(cudaError_t err) {
    const std::string code = std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err);
    if (err == cudaErrorInsufficientDriver) {
        int driver = 0, runtime = 0;
        (void)cudaRuntimeGetVersion(&runtime);
        if (cudaDriverGetVersion(&driver) != cudaSuccess || driver == 0)
            return "no NVIDIA driver is installed: the CUDA driver library (libcuda.so.1) was not found";
        return "the NVIDIA driver supports CUDA " + DeviceInfo::version_string(driver) + ", older than this build's CUDA " +
               DeviceInfo::version_string(runtime) + " runtime: update the driver (" + code + ")";
    }
    if (err == cudaErrorNoDevice) return "the NVIDIA driver is installed but sees no GPU (" + code + ")";
    return code;
}

}  // namespace

int cuda_device_count(std::string* why) {
    int n = 0;
    const cudaError_t err = cudaGetDeviceCount(&n);
    if (err != cudaSuccess) {
        if (why) *why = no_device_reason(err);
        (void)cudaGetLastError();
        return 0;
    }
    if (n == 0 && why) *why = "no CUDA device found";
    return n;
}

namespace {

// Throws a plain cs::Error when `device` cannot be used, then makes it current.
int use_device(int device) {
    std::string why;
    const int n = cuda_device_count(&why);
    if (n == 0)
        throw cs::Error("no CUDA device is available (" + why +
                        "). GPU commands (run, sweep, profile) need an NVIDIA GPU and driver; "
                        "`convstudy list`, `generate`, `verify` (checks golden files), `compare` (two "
                        "result CSVs) and `merge` work without one.");
    if (device < 0 || device >= n)
        throw cs::Error("device " + std::to_string(device) + " does not exist (" + std::to_string(n) +
                        " CUDA device(s))");
    CS_CUDA_CHECK(cudaSetDevice(device));
    return device;
}

}  // namespace

DeviceContext::DeviceContext(int device) : stream_((use_device(device), Stream())) {
    CS_CUDA_CHECK(cudaGetDeviceProperties(&prop_, device));
    info_.device = device;
    info_.name = prop_.name;
    info_.cc_major = prop_.major;
    info_.cc_minor = prop_.minor;
    info_.sms = prop_.multiProcessorCount;
    info_.l2_bytes = std::size_t(prop_.l2CacheSize);
    info_.global_mem = prop_.totalGlobalMem;
    info_.smem_per_block_optin = prop_.sharedMemPerBlockOptin;
    CS_CUDA_CHECK(cudaRuntimeGetVersion(&info_.runtime_version));
    CS_CUDA_CHECK(cudaDriverGetVersion(&info_.driver_version));
    int cma = 0;
    CS_CUDA_CHECK(cudaDeviceGetAttribute(&cma, cudaDevAttrConcurrentManagedAccess, device));
    info_.concurrent_managed = cma != 0;
    const std::size_t flush = std::max<std::size_t>(2 * info_.l2_bytes, std::size_t(8) << 20);
    l2_flush_ = Buffer(MemKind::device, flush);
}

void DeviceContext::flush_l2(cudaStream_t s) {
    CS_CUDA_CHECK(cudaMemsetAsync(l2_flush_.get(), int(++flush_counter_ & 0xff), l2_flush_.bytes(), s));
}

namespace {
__global__ void hold_kernel(unsigned long long ns) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (t - t0 < ns);
}
}  // namespace

void DeviceContext::hold(cudaStream_t s, unsigned us) {
    hold_kernel<<<1, 1, 0, s>>>(static_cast<unsigned long long>(us) * 1000ull);
    CS_CUDA_CHECK(cudaGetLastError());
}

std::size_t DeviceContext::free_bytes() const {
    std::size_t free = 0, total = 0;
    CS_CUDA_CHECK(cudaMemGetInfo(&free, &total));
    return free;
}

namespace {

constexpr int kPeakChains = 16;
constexpr int kPeakIters = 2048;

__global__ void fma_peak_kernel(float* sink, float a, float b) {
    float x[kPeakChains];
#pragma unroll
    for (int i = 0; i < kPeakChains; ++i) x[i] = float(threadIdx.x + i) * 1e-3f;
    for (int it = 0; it < kPeakIters; ++it) {
#pragma unroll
        for (int i = 0; i < kPeakChains; ++i) x[i] = fmaf(x[i], a, b);
    }
    float s = 0;
#pragma unroll
    for (int i = 0; i < kPeakChains; ++i) s += x[i];
    if (s == 12345.678f) sink[threadIdx.x] = s;  // keeps the chains alive, never true
}

}  // namespace

double DeviceContext::fp32_peak_tflops() {
    if (peak_) return *peak_;
    Buffer sink(MemKind::device, 1024 * sizeof(float));
    const int threads = 512;
    const int blocks = info_.sms * 8;
    Event e0, e1;
    std::vector<float> ms;
    for (int rep = 0; rep < 7; ++rep) {
        e0.record(stream());
        fma_peak_kernel<<<blocks, threads, 0, stream()>>>(sink.as<float>(), 0.999999f, 1e-6f);
        CS_CUDA_CHECK_LAUNCH();
        e1.record(stream());
        stream_.sync();
        if (rep >= 2) ms.push_back(elapsed_ms(e0, e1));  // first runs warm the clocks
    }
    std::sort(ms.begin(), ms.end());
    const double flops = 2.0 * kPeakChains * double(kPeakIters) * threads * blocks;
    peak_ = flops / (double(ms[ms.size() / 2]) * 1e-3) / 1e12;
    return *peak_;
}

std::string cudnn_version() {
#ifdef CONVSTUDY_HAVE_CUDNN
    const std::size_t v = cudnnGetVersion();  // major * 10000 + minor * 100 + patch since cuDNN 9
    return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
#else
    return {};
#endif
}

}  // namespace cs::gpu
