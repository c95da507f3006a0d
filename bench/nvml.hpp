// The SM clock and board power of the device, read through NVML (the driver's management
// library), for the CSV's sm_clock_mhz_* and power_w_* columns: a row timed while the clocks
// sagged says so. NVML is opened at run time (dlopen of libnvidia-ml.so.1), so the program
// still starts where there is no driver; then every reading is NaN.
#pragma once

#include <cmath>

namespace cs::gpu {

struct ClockPower {
    double sm_mhz = NAN;   // current SM clock
    double power_w = NAN;  // current board power draw
};

// A reading for CUDA device `device` (NaN fields where NVML or the reading is unavailable).
ClockPower read_clock_power(int device);

}  // namespace cs::gpu
