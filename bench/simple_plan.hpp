// A Plan for variants that need no workspace and no set-up: it holds the launch as a
// callable and a one-line description of the geometry it chose.
#pragma once

#include "variant.hpp"

#include <functional>
#include <memory>
#include <string>
#include <utility>

namespace cs::gpu {

class SimplePlan final : public Plan {
public:
    using Launch = std::function<void(const DeviceIO&, cudaStream_t)>;
    SimplePlan(Launch launch, std::string detail) : launch_(std::move(launch)), detail_(std::move(detail)) {}
    void run(const DeviceIO& io, cudaStream_t stream) override { launch_(io, stream); }
    std::string detail() const override { return detail_; }

private:
    Launch launch_;
    std::string detail_;
};

inline std::unique_ptr<Plan> make_simple_plan(SimplePlan::Launch launch, std::string detail) {
    return std::make_unique<SimplePlan>(std::move(launch), std::move(detail));
}

}  // namespace cs::gpu
