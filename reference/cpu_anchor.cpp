// CPU timings: our float32 reference, and oneDNN when it was built in.
#include "cpu_anchor.hpp"

#include "conv_ref.hpp"
#ifdef CONVSTUDY_HAVE_DNNL
#include "onednn_internal.hpp"
#endif

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <functional>
#include <vector>

namespace cs {

namespace {

// A warm-up call, then calls until min_seconds have passed or max_repeats were made.
CpuTiming time_calls(const std::function<void()>& call, double min_seconds, int max_repeats) {
    using clock = std::chrono::steady_clock;
    call();  // warm-up: first touch, caches, thread pool
    std::vector<double> ms;
    const auto start = clock::now();
    const int limit = std::max(1, max_repeats);
    while (int(ms.size()) < limit) {
        const auto t0 = clock::now();
        call();
        const auto t1 = clock::now();
        ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
        if (std::chrono::duration<double>(t1 - start).count() >= min_seconds) break;
    }
    std::sort(ms.begin(), ms.end());
    CpuTiming t;
    const std::size_t n = ms.size();
    t.ms = n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
    t.min_ms = ms.front();
    t.repeats = int(n);
    t.threads = omp_get_max_threads();
    return t;
}

}  // namespace

std::string cpu_model() {
    std::ifstream f("/proc/cpuinfo");
    std::string line;
    while (std::getline(f, line)) {
        if (line.rfind("model name", 0) != 0) continue;
        const auto colon = line.find(':');
        if (colon == std::string::npos) continue;
        auto b = line.find_first_not_of(" \t", colon + 1);
        auto e = line.find_last_not_of(" \t\r");
        if (b == std::string::npos) continue;
        return line.substr(b, e - b + 1);
    }
    return "unknown";
}

int cpu_threads() { return omp_get_max_threads(); }

CpuTiming time_cpu_reference(const Layer& layer, std::int64_t N, const float* in, const float* w, float* out,
                             double min_seconds, int max_repeats) {
    return time_calls([&] { conv2d_ref<float>(layer, N, in, w, out); }, min_seconds, max_repeats);
}

bool onednn_available() {
#ifdef CONVSTUDY_HAVE_DNNL
    return true;
#else
    return false;
#endif
}

std::string onednn_version() {
#ifdef CONVSTUDY_HAVE_DNNL
    return detail::onednn_version_string();
#else
    return "";
#endif
}

std::optional<CpuTiming> time_onednn(const Layer& layer, std::int64_t N, const float* in, const float* w, float* out,
                                     double min_seconds, int max_repeats) {
#ifdef CONVSTUDY_HAVE_DNNL
    const auto call = detail::make_onednn_conv(layer, N, in, w, out);
    return time_calls(call, min_seconds, max_repeats);
#else
    (void)layer, (void)N, (void)in, (void)w, (void)out, (void)min_seconds, (void)max_repeats;
    return std::nullopt;
#endif
}

}  // namespace cs
