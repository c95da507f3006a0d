// Error types shared by every part of convstudy.
//
// cs::Error is a problem the user can fix (a bad file, a bad option, a missing golden
// set); the command-line program prints its message and exits non-zero. Programming
// errors are not reported through it.
#pragma once

#include <stdexcept>
#include <string>

namespace cs {

class Error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// A problem a variant cannot run (too much shared memory, a workspace that cannot fit):
// the harness records SKIP with this reason instead of failing.
class Skip : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

}  // namespace cs
