#include "time_split.hpp"

#include "progress.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace cs {

void TimeSplit::add(std::string_view part, double ms) {
    if (!(ms >= 0) || !std::isfinite(ms)) return;
    for (auto& [name, total] : parts_)
        if (name == part) {
            total += ms;
            return;
        }
    parts_.emplace_back(std::string(part), ms);
}

double TimeSplit::ms(std::string_view part) const {
    for (const auto& [name, total] : parts_)
        if (name == part) return total;
    return 0;
}

double TimeSplit::covered_ms() const {
    double s = 0;
    for (const auto& p : parts_) s += p.second;
    return s;
}

TimeSplit::Scope::~Scope() {
    if (t_) t_->add(part_, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0_).count());
}

std::string TimeSplit::text(double total_ms) const {
    auto item = [&](const std::string& name, double ms) {
        char pct[16];
        std::snprintf(pct, sizeof pct, "%.0f", total_ms > 0 ? 100.0 * ms / total_ms : 0.0);
        return name + " " + Progress::format_duration(ms / 1e3) + " (" + pct + "%)";
    };
    std::string s = Progress::format_duration(total_ms / 1e3) + ":";
    const char* sep = " ";
    for (const auto& [name, ms] : parts_) {
        s += sep + item(name, ms);
        sep = ", ";
    }
    return s + sep + item("other", std::max(0.0, total_ms - covered_ms()));
}

}  // namespace cs
