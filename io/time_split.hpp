// Where a long command's wall time went: named parts, in the order first added, and what no
// part covers ("other"). The sweep prints its split as one closing line, so that a user (and
// the main job's time limit) can see whether plan set-up, the checks, the timing loops or the
// extra processes dominate.
//
//   TimeSplit t;
//   { auto s = t.scope("golden check"); check_golden(...); }
//   t.add("plan set-up", setup_ms);
//   t.text(total_ms)  // the total, then each part with its time and share, then "other"
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cs {

class TimeSplit {
public:
    // Adds ms (>= 0; a negative or non-finite value is ignored) to `part`.
    void add(std::string_view part, double ms);
    // The milliseconds added to `part` so far (0 for a part never added).
    double ms(std::string_view part) const;
    // The sum over every part.
    double covered_ms() const;

    // Adds its own lifetime to `part` when it goes out of scope (also when an exception unwinds).
    class Scope {
    public:
        Scope(TimeSplit& t, std::string part) : t_(&t), part_(std::move(part)), t0_(std::chrono::steady_clock::now()) {}
        Scope(Scope&& o) noexcept : t_(o.t_), part_(std::move(o.part_)), t0_(o.t0_) { o.t_ = nullptr; }
        Scope(const Scope&) = delete;
        Scope& operator=(const Scope&) = delete;
        Scope& operator=(Scope&&) = delete;
        ~Scope();

    private:
        TimeSplit* t_;
        std::string part_;
        std::chrono::steady_clock::time_point t0_;
    };
    Scope scope(std::string part) { return Scope(*this, std::move(part)); }

    // "<total>: <part> <time> (<share>%), ..., other <time> (<share>%)", times as
    // Progress::format_duration writes them; "other" is total_ms minus the parts (never below 0).
    std::string text(double total_ms) const;

private:
    std::vector<std::pair<std::string, double>> parts_;
};

}  // namespace cs
