#include "engine_choice.hpp"

#include <algorithm>
#include <stdexcept>

namespace cs::gpu {

double median_ms(std::vector<float> v) {
    if (v.empty()) throw std::invalid_argument("median of no samples");
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? double(v[n / 2]) : 0.5 * (double(v[n / 2 - 1]) + double(v[n / 2]));
}

EngineChoice choose_engine(const std::vector<TimedConfig>& timed, std::optional<std::int64_t> previous,
                           double keep_band) {
    if (timed.empty()) throw std::invalid_argument("choose_engine: no timed configuration");
    std::vector<double> med(timed.size());
    for (std::size_t i = 0; i < timed.size(); ++i) med[i] = median_ms(timed[i].samples);
    EngineChoice c;
    for (std::size_t i = 1; i < timed.size(); ++i)
        if (med[i] < med[c.fastest]) c.fastest = i;
    c.fastest_ms = med[c.fastest];
    c.chosen = c.fastest;
    if (previous) {
        std::optional<std::size_t> best_of_previous;
        for (std::size_t i = 0; i < timed.size(); ++i)
            if (timed[i].engine == *previous && (!best_of_previous || med[i] < med[*best_of_previous]))
                best_of_previous = i;
        if (best_of_previous && med[*best_of_previous] <= keep_band * c.fastest_ms) {
            c.chosen = *best_of_previous;
            c.kept_previous = true;
        }
    }
    c.chosen_ms = med[c.chosen];
    return c;
}

std::optional<RememberedEngine> EngineChoices::get(const std::string& key) const {
    std::lock_guard<std::mutex> lock(m_);
    auto it = map_.find(key);
    if (it == map_.end()) return std::nullopt;
    return it->second;
}

void EngineChoices::set(const std::string& key, RememberedEngine e) {
    std::lock_guard<std::mutex> lock(m_);
    auto it = map_.find(key);
    if (it != map_.end() && it->second.engine == e.engine && it->second.ms == e.ms && it->second.knobs == e.knobs) return;
    map_[key] = e;
    changed_ = true;
}

std::map<std::string, RememberedEngine> EngineChoices::all() const {
    std::lock_guard<std::mutex> lock(m_);
    return map_;
}

void EngineChoices::replace(std::map<std::string, RememberedEngine> m) {
    std::lock_guard<std::mutex> lock(m_);
    map_ = std::move(m);
    changed_ = false;
}

bool EngineChoices::changed() const {
    std::lock_guard<std::mutex> lock(m_);
    return changed_;
}

void EngineChoices::set_mode(SearchMode m) {
    std::lock_guard<std::mutex> lock(m_);
    mode_ = m;
}

SearchMode EngineChoices::mode() const {
    std::lock_guard<std::mutex> lock(m_);
    return mode_;
}

std::shared_ptr<const void> EngineChoices::search(const std::string& key) const {
    std::lock_guard<std::mutex> lock(m_);
    auto it = searches_.find(key);
    return it == searches_.end() ? nullptr : it->second;
}

void EngineChoices::keep_search(const std::string& key, std::shared_ptr<const void> s) {
    std::lock_guard<std::mutex> lock(m_);
    searches_[key] = std::move(s);
}

void EngineChoices::mark_saved() {
    std::lock_guard<std::mutex> lock(m_);
    changed_ = false;
}

}  // namespace cs::gpu
