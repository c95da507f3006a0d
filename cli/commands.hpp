// The convstudy command-line program: list, generate, run, sweep.
#pragma once

namespace cs::cli {
int main(int argc, char** argv);
}
