// The items of a list or set, joined by a separator: join(v, ", ") is "a, b, c", join(v, ",")
// one command-line argument "a,b,c"; join(v, sep, f) joins f(item) (a string or string_view)
// for each item, e.g. the names of enum values or numbers. The one joiner of the tool's
// messages, plan command lines, CSV headers and rows.
#pragma once

#include <string>
#include <string_view>

namespace cs {

template <class Items, class Proj>
std::string join(const Items& items, std::string_view sep, Proj f) {
    std::string s;
    bool first = true;
    for (const auto& x : items) {
        if (!first) s += sep;
        s += f(x);
        first = false;
    }
    return s;
}

template <class Items>
std::string join(const Items& items, std::string_view sep) {
    return join(items, sep, [](const auto& x) -> const auto& { return x; });
}

}  // namespace cs
