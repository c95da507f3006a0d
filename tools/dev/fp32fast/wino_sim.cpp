// wino_sim.cpp — float32 error model of 2-D Winograd F(m x m, r x r) on conv-like statistics, to
// pick interpolation points (matrices from wino_derive.py --header, force-included). U = G g G^T in
// double rounded to float (as wino_filter_kernel), V = B^T d B in float, the sum over C channels
// by fmaf in float, Y = A^T M A in float; against a double direct correlation. Prints
// max|err| / max|ref| (the fp32 class threshold is 1e-4). See wino_derive.py for the build line.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>
#ifndef SEED
#define SEED 1
#endif
int main() {
    const int C = 96, NF = 16, NTILE = 3000;
    std::mt19937 rng(SEED);
    std::uniform_real_distribution<float> u(-1, 1);
    const float sc = std::sqrt(3.0f / (C * R_ * R_));
    std::vector<float> g(std::size_t(NF) * C * R_ * R_), d(std::size_t(NTILE) * C * A_ * A_);
    for (auto& x : g) x = u(rng) * sc;
    for (auto& x : d) x = u(rng);
    std::vector<float> U(std::size_t(NF) * C * A_ * A_);
    for (int f = 0; f < NF; ++f)
        for (int c = 0; c < C; ++c) {
            const float* gg = &g[(std::size_t(f) * C + c) * R_ * R_];
            double t[A_][R_];
            for (int i = 0; i < A_; ++i)
                for (int k = 0; k < R_; ++k) {
                    double s = 0;
                    for (int l = 0; l < R_; ++l) s += G[i][l] * gg[l * R_ + k];
                    t[i][k] = s;
                }
            for (int i = 0; i < A_; ++i)
                for (int j = 0; j < A_; ++j) {
                    double s = 0;
                    for (int k = 0; k < R_; ++k) s += t[i][k] * G[j][k];
                    U[((std::size_t(f) * C + c) * A_ + i) * A_ + j] = float(s);
                }
        }
    float BTf[A_][A_], ATf[M_][A_];
    for (int i = 0; i < A_; ++i)
        for (int j = 0; j < A_; ++j) BTf[i][j] = float(BT[i][j]);
    for (int i = 0; i < M_; ++i)
        for (int j = 0; j < A_; ++j) ATf[i][j] = float(AT[i][j]);
    std::vector<float> V(d.size());
    for (std::size_t t = 0; t < std::size_t(NTILE) * C; ++t) {
        const float* dd = &d[t * A_ * A_];
        float tt[A_][A_];
        for (int i = 0; i < A_; ++i)
            for (int j = 0; j < A_; ++j) {
                float s = 0;
                for (int k = 0; k < A_; ++k)
                    if (BTf[i][k] != 0) s += BTf[i][k] * dd[k * A_ + j];
                tt[i][j] = s;
            }
        for (int i = 0; i < A_; ++i)
            for (int j = 0; j < A_; ++j) {
                float s = 0;
                for (int k = 0; k < A_; ++k)
                    if (BTf[j][k] != 0) s += tt[i][k] * BTf[j][k];
                V[t * A_ * A_ + i * A_ + j] = s;
            }
    }
    double maxerr = 0, maxref = 0;
    for (int t = 0; t < NTILE; ++t)
        for (int f = 0; f < NF; ++f) {
            float Mx[A_][A_] = {};
            for (int c = 0; c < C; ++c)
                for (int x = 0; x < A_ * A_; ++x)
                    Mx[x / A_][x % A_] = std::fma(U[(std::size_t(f) * C + c) * A_ * A_ + x],
                                                  V[(std::size_t(t) * C + c) * A_ * A_ + x], Mx[x / A_][x % A_]);
            float y1[M_][A_];
            for (int i = 0; i < M_; ++i)
                for (int j = 0; j < A_; ++j) {
                    float s = 0;
                    for (int k = 0; k < A_; ++k)
                        if (ATf[i][k] != 0) s += ATf[i][k] * Mx[k][j];
                    y1[i][j] = s;
                }
            for (int i = 0; i < M_; ++i)
                for (int j = 0; j < M_; ++j) {
                    float s = 0;
                    for (int k = 0; k < A_; ++k)
                        if (ATf[j][k] != 0) s += y1[i][k] * ATf[j][k];
                    double ref = 0;
                    for (int c = 0; c < C; ++c)
                        for (int p = 0; p < R_; ++p)
                            for (int q = 0; q < R_; ++q)
                                ref += double(g[((std::size_t(f) * C + c) * R_ + p) * R_ + q]) *
                                       d[(std::size_t(t) * C + c) * A_ * A_ + (i + p) * A_ + j + q];
                    maxerr = std::max(maxerr, std::fabs(s - ref));
                    maxref = std::max(maxref, std::fabs(ref));
                }
        }
    std::printf("F(%d,%d) max|err|/max|ref| = %.3e (max|ref| %.2f, seed %d)\n", M_, R_, maxerr / maxref, maxref, SEED);
}
