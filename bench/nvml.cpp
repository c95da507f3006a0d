#include "nvml.hpp"

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <map>
#include <mutex>

namespace cs::gpu {

namespace {

// The few NVML entry points used, declared here (the toolkit on the build machines ships no
// nvml.h); their ABI has been stable since NVML's _v2 names.
using nvmlDevice = struct nvmlDevice_st*;
using InitFn = int (*)();
using HandleFn = int (*)(const char*, nvmlDevice*);
using ClockFn = int (*)(nvmlDevice, int, unsigned int*);
using PowerFn = int (*)(nvmlDevice, unsigned int*);
constexpr int kNvmlSuccess = 0;
constexpr int kNvmlClockSm = 1;

struct Nvml {
    HandleFn handle = nullptr;
    ClockFn clock = nullptr;
    PowerFn power = nullptr;
    bool ok = false;
    std::map<int, nvmlDevice> devices;
};

Nvml& nvml() {
    static Nvml n = [] {
        Nvml r;
        void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!lib) return r;
        auto init = reinterpret_cast<InitFn>(dlsym(lib, "nvmlInit_v2"));
        r.handle = reinterpret_cast<HandleFn>(dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2"));
        r.clock = reinterpret_cast<ClockFn>(dlsym(lib, "nvmlDeviceGetClockInfo"));
        r.power = reinterpret_cast<PowerFn>(dlsym(lib, "nvmlDeviceGetPowerUsage"));
        r.ok = init && r.handle && r.clock && r.power && init() == kNvmlSuccess;
        return r;
    }();
    return n;
}

std::mutex g_mutex;

}  // namespace

ClockPower read_clock_power(int device) {
    ClockPower out;
    std::lock_guard<std::mutex> lock(g_mutex);
    Nvml& n = nvml();
    if (!n.ok) return out;
    auto it = n.devices.find(device);
    if (it == n.devices.end()) {
        char bus[32] = {};
        nvmlDevice d = nullptr;
        if (cudaDeviceGetPCIBusId(bus, int(sizeof bus), device) != cudaSuccess || n.handle(bus, &d) != kNvmlSuccess)
            d = nullptr;
        it = n.devices.emplace(device, d).first;
    }
    if (!it->second) return out;
    unsigned int mhz = 0, mw = 0;
    if (n.clock(it->second, kNvmlClockSm, &mhz) == kNvmlSuccess) out.sm_mhz = mhz;
    if (n.power(it->second, &mw) == kNvmlSuccess) out.power_w = mw / 1000.0;
    return out;
}

}  // namespace cs::gpu
