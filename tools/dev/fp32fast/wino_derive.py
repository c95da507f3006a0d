#!/usr/bin/env python3
"""wino_derive.py - Toom-Cook matrices of Winograd F(m, r) for given interpolation points, exact.

The transforms in kernels/fp32fast/winograd_fused.cuh (Wino<m, r>) were written from this output:
  A^T (m x a):  A^T[i][j] = p_j^i, the last column (the point at infinity) e_{m-1};
  G   (a x r):  G[j][k] = p_j^k / prod_{l != j} (p_j - p_l), the last row e_{r-1};
  B^T (a x a):  solved from the identity  sum_j A^T[i][j] G[j][k] B^T[j][l] = [l == i + k]
                (the 1-D correlation y_i = sum_k g_k d_{i+k}), and checked to satisfy it.
With the points 0, 1, -1, 2, -2 it reproduces Lavin & Gray's F(4,3) exactly.

  python3 wino_derive.py M R P1 P2 ...           print A^T, G, B^T (fractions)
  python3 wino_derive.py M R P1 P2 ... --header  a C header (const double AT, G, BT) for
                                                 wino_sim.cpp, the float32 error model:
    python3 wino_derive.py 2 5 0 1 -1 2 -1/2 --header > /tmp/wino_mats.h
    g++ -O2 -std=c++17 -DSEED=1 -include /tmp/wino_mats.h tools/dev/fp32fast/wino_sim.cpp -o /tmp/wsim && /tmp/wsim

Error of that model on conv2's statistics (C = 96, inputs in [-1,1), weights scaled by
sqrt(3/(C*r*r)), 3000 tiles x 16 filters, max|err|/max|ref| over seeds 1-4):
  F(2,5) {0, +-1, +-2}        4.2-5.3e-6     F(2,5) {0, +-1, +-1/2}    4.0-5.7e-6
  F(2,5) {0, +-1, 2, -1/2}    1.9-2.6e-6  <- Wino<2,5> (mirror {0, +-1, 1/2, -2}: 1.9-2.2e-6)
  F(2,5) {0, +-1, 1/2, 2}     5.8e-6
  F(3,5) {0, +-1, +-2, 1/2}   6.3-6.6e-6  <- Wino<3,5> ({0, +-1, +-2, -1/2}: 5.9-6.7e-6)
  F(3,5) {0, +-1, +-1/2, -2}  7.1-7.6e-6     F(3,5) {0, +-1, +-1/2, 2} 7.8-8.6e-6
  F(3,5) {0, +-1, 2, +-1/2}   8.3-8.6e-6     F(3,5) {0, +-1, 2, -2, 3} 1.8e-4 (over 1e-4)
  F(4,3) {0, +-1, +-2}        8.3e-6 (the GPU measured 1.6-1.7e-5 on conv3-5 with FMA contraction)
(the point at infinity is always the last.)
"""
import sys
from fractions import Fraction as Fr


def derive(m, r, pts):
    a = m + r - 1
    assert len(pts) == a - 1, "need a - 1 = m + r - 2 finite points"
    f = []
    for j, p in enumerate(pts):
        v = Fr(1)
        for l, q in enumerate(pts):
            if l != j:
                v *= p - q
        f.append(v)
    AT = [[(pts[j] ** i if j < a - 1 else Fr(1 if i == m - 1 else 0)) for j in range(a)] for i in range(m)]
    G = [[(pts[j] ** k / f[j] if j < a - 1 else Fr(1 if k == r - 1 else 0)) for k in range(r)] for j in range(a)]
    BT = [[Fr(0)] * a for _ in range(a)]
    for l in range(a):  # column l of B^T: m*r equations in a unknowns (consistent)
        M = []
        for i in range(m):
            for k in range(r):
                M.append([AT[i][j] * G[j][k] for j in range(a)] + [Fr(1 if l == i + k else 0)])
        piv, rr = [], 0
        for c in range(a):
            p = next((i for i in range(rr, len(M)) if M[i][c] != 0), None)
            if p is None:
                continue
            M[rr], M[p] = M[p], M[rr]
            pv = M[rr][c]
            M[rr] = [x / pv for x in M[rr]]
            for i in range(len(M)):
                if i != rr and M[i][c] != 0:
                    fac = M[i][c]
                    M[i] = [x - fac * y for x, y in zip(M[i], M[rr])]
            piv.append(c)
            rr += 1
        assert all(M[i][a] == 0 for i in range(rr, len(M))), "inconsistent"
        assert len(piv) == a, "underdetermined"
        for i, c in enumerate(piv):
            BT[c][l] = M[i][a]
    # check the identity
    for i in range(m):
        for k in range(r):
            for l in range(a):
                assert sum(AT[i][j] * G[j][k] * BT[j][l] for j in range(a)) == (1 if l == i + k else 0)
    return AT, G, BT


def main():
    args = [x for x in sys.argv[1:] if not x.startswith("--")]
    m, r = int(args[0]), int(args[1])
    pts = [Fr(x) for x in args[2:]]
    AT, G, BT = derive(m, r, pts)
    if "--header" in sys.argv:
        def arr(X):
            return "{" + ",".join("{" + ",".join("%d.0/%d.0" % (x.numerator, x.denominator) for x in row) + "}"
                                  for row in X) + "}"
        a = m + r - 1
        print(f"constexpr int M_ = {m}, R_ = {r}, A_ = {a};")
        print(f"const double AT[{m}][{a}] = {arr(AT)};")
        print(f"const double G[{a}][{r}] = {arr(G)};")
        print(f"const double BT[{a}][{a}] = {arr(BT)};")
        return
    for name, X in (("A^T", AT), ("G", G), ("B^T", BT)):
        print(name)
        for row in X:
            print("  [" + " ".join("%6s" % str(x) for x in row) + "]")


if __name__ == "__main__":
    main()
