// GPU test program: exits 77 (ctest: skipped) when there is no CUDA device, so the
// suite passes on machines without a GPU and runs in full on the GPU machine.
#define CATCH_CONFIG_RUNNER
#include "catch.hpp"

#include "device.hpp"

#include <cstdio>
#include <string>

int main(int argc, char** argv) {
    std::string why;
    if (cs::gpu::cuda_device_count(&why) == 0) {
        std::printf("no CUDA device (%s): GPU tests skipped\n", why.c_str());
        return 77;
    }
    return Catch::Session().run(argc, argv);
}
