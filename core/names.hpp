// A name table: each value of an enum beside its one spelling (the CSV's, the command line's,
// the JSON files'). Typed values travel inside the tool; the tables turn them into text for the
// writers and back for the readers at the edges (the command line, plans, tuning files), so
// that a spelling lives in exactly one place.
//
//     inline constexpr NameTable<Schedule, 2> kScheduleNames{{{Schedule::cooperative, "cooperative"},
//                                                            {Schedule::pingpong, "pingpong"}}};
//     name_of(kScheduleNames, Schedule::pingpong) == "pingpong"
//     value_named(kScheduleNames, "pingpong") == Schedule::pingpong
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cs {

template <class E>
struct NameEntry {
    E value;
    std::string_view name;
};

template <class E, std::size_t K>
using NameTable = std::array<NameEntry<E>, K>;

// The spelling of v ("?" for a value the table lacks, which a CPU test rules out per table).
template <class E, std::size_t K>
constexpr std::string_view name_of(const NameTable<E, K>& t, E v) {
    for (const auto& e : t)
        if (e.value == v) return e.name;
    return "?";
}

// The value spelled `s`, or nothing: the readers turn nothing into an error that names the
// entry and the spellings (names_of).
template <class E, std::size_t K>
constexpr std::optional<E> value_named(const NameTable<E, K>& t, std::string_view s) {
    for (const auto& e : t)
        if (e.name == s) return e.value;
    return std::nullopt;
}

// Every value as an int, in table order (an axis's ids beside names_of's spellings).
template <class E, std::size_t K>
std::vector<int> ids_of(const NameTable<E, K>& t) {
    std::vector<int> v;
    for (const auto& e : t) v.push_back(static_cast<int>(e.value));
    return v;
}

// Every spelling, in table order (the axis values `list` shows, the readers' error messages).
template <class E, std::size_t K>
std::vector<std::string> names_of(const NameTable<E, K>& t) {
    std::vector<std::string> v;
    for (const auto& e : t) v.emplace_back(e.name);
    return v;
}

}  // namespace cs
