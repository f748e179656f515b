r"""The float64 kernels of one system at a time: per-row and symmetric, serial and parallel.

Every kernel computes the layer map of the package notes (:mod:`sim.attention`) in its numerical
form: shifted weights :math:`e_{ij}\in(0,1]`, log-domain coefficients of :math:`z_i` and
:math:`\hat u_i`, the largest entry divided out before the norm.

- Per row (:func:`_run_serial`, :func:`_run_parallel`): blocks of rows; for each block one pass
  computes the scores and their exponentials (no reassociation, the exp inlined), a second pass
  the row sums (reassociated, so the reductions vectorise).
- Symmetric A (:func:`_run_serial_sym`, :func:`_run_parallel_sym`): one exponential per unordered
  pair of tokens feeds both rows (notes above :data:`_SYM_GAP`); a layer whose shifts are too far
  apart takes the per-row path.
- :func:`_run_batch`: many systems, in parallel over systems, one system per thread at a time.

:func:`sim.attention.api._choose_kernel` is the one place that picks among them.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from sim.attention.exp import FM as _FM
from sim.attention.exp import FM_EXP as _FM_EXP
from sim.attention.exp import exp1 as _exp1


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FM_EXP)
def _weights(i0, rows, Z, BAZT, top, s, mv):
    """s[r*n + j] = exp(beta <z_i, A z_j> - m_i) and mv[r] = m_i, for i = i0 + r, r < rows.

    The shift m_i is the Cauchy-Schwarz bound top[i] = beta |A^T z_i| >= max_j s_ij when it
    is within _SHIFT_GAP of the self score s_ii <= max_j s_ij and at most _NEAR_MAX (so the
    rounding of the scores, about 1e-16 top[i], cannot push a weight above 1 by more than
    1e-7): then every weight is <= 1 and the largest is >= e^{-_SHIFT_GAP} (no overflow, no
    harmful underflow), and scores and exp are computed in one flat pass. Otherwise (very
    large beta |A|) it is the exact row maximum, from stored scores. Softmax is shift-invariant, so
    both give the same weights up to rounding. d = 2 and d = 3 are written out by hand.
    """
    n, d = Z.shape
    for r in range(rows):
        i = i0 + r
        sr = s[r * n : (r + 1) * n]  # a view: indices provably >= 0, so loops vectorise
        sii = 0.0
        for k in range(d):
            sii += Z[i, k] * BAZT[k, i]
        m = top[i]
        near = m - sii <= _SHIFT_GAP and m <= _NEAR_MAX
        if near and d == 3:
            z0, z1, z2 = Z[i, 0], Z[i, 1], Z[i, 2]
            b0, b1, b2 = BAZT[0], BAZT[1], BAZT[2]
            for j in range(n):
                sr[j] = _exp1(z0 * b0[j] + z1 * b1[j] + z2 * b2[j] - m)
        elif near and d == 2:
            z0, z1 = Z[i, 0], Z[i, 1]
            b0, b1 = BAZT[0], BAZT[1]
            for j in range(n):
                sr[j] = _exp1(z0 * b0[j] + z1 * b1[j] - m)
        else:
            for j in range(n):
                sr[j] = 0.0
            for k in range(d):
                zk = Z[i, k]
                bk = BAZT[k]
                for j in range(n):
                    sr[j] += zk * bk[j]
            if not near:
                m = sr[0]
                for j in range(1, n):
                    m = max(m, sr[j])
            for j in range(n):
                sr[j] = _exp1(sr[j] - m)
        mv[r] = m


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FM, inline="always")
def _rows(i0, i1, Z, BAZT, VZT, top, lc0, usa, s, mv, u, Znew):
    """New rows i0 <= i < i1 (at most len(mv) of them) into Znew.

    BAZT[k, j] = beta (A z_j)_k and VZT[k, j] = (V z_j)_k / s_V (both d x n);
    lc0 = log(dt s_V). Two passes over j: the shifted weights of the whole block (one call,
    no reassociation), then the row sums of the weights and weighted values (reassociated, so
    the reductions vectorise). The new row is a z_i + c u with log-domain coefficients (the
    larger is 1) and is normalised after division by its largest entry (package notes).
    """
    n, d = Z.shape
    rows = i1 - i0
    _weights(i0, rows, Z, BAZT, top, s, mv)
    for r in range(rows):
        i = i0 + r
        sr = s[r * n : (r + 1) * n]
        tot = 0.0
        emax = 1.0
        if usa:
            emax = 0.0
            for j in range(n):
                emax = max(emax, sr[j])
        if d == 3:
            v0, v1, v2 = VZT[0], VZT[1], VZT[2]
            a0 = 0.0
            a1 = 0.0
            a2 = 0.0
            for j in range(n):
                e = sr[j]
                tot += e
                a0 += e * v0[j]
                a1 += e * v1[j]
                a2 += e * v2[j]
            u[0] = a0
            u[1] = a1
            u[2] = a2
        elif d == 2:
            v0, v1 = VZT[0], VZT[1]
            a0 = 0.0
            a1 = 0.0
            for j in range(n):
                e = sr[j]
                tot += e
                a0 += e * v0[j]
                a1 += e * v1[j]
            u[0] = a0
            u[1] = a1
        else:
            for j in range(n):
                tot += sr[j]
            for k in range(d):
                vk = VZT[k]
                acc = 0.0
                for j in range(n):
                    acc += sr[j] * vk[j]
                u[k] = acc
        if usa:  # e^{-M} z_i + (dt s_V / n) u / emax, M = m + log(emax) the row maximum
            la = -(mv[r] + np.log(emax))
            lc = lc0 - np.log(n)
            div = emax
        else:  # z_i + dt s_V u / tot
            la = 0.0
            lc = lc0
            div = tot
        hi = max(la, lc)
        a = np.exp(la - hi)
        c = np.exp(lc - hi) / div
        nrm = 0.0
        for k in range(d):
            y = a * Z[i, k] + c * u[k]
            u[k] = y
            nrm += y * y
        if not 1e-280 < nrm < 1e280:  # rare: rescale by the largest entry before the norm
            big = 0.0
            for k in range(d):
                big = max(big, abs(u[k]))
            nrm = 0.0
            for k in range(d):
                y = u[k] / big  # 0/0 -> nan when z_i + dt u_i = 0 (reported by the caller)
                u[k] = y
                nrm += y * y
        nrm = np.sqrt(nrm)
        for k in range(d):
            Znew[i, k] = u[k] / nrm


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FM, inline="always")
def _prep(Z, beta, A, V, BAZT, VZT, top):
    """BAZT = beta A Z^T, VZT = V Z^T (d x n) and top[i] = beta |A^T z_i| (row shift bound)."""
    n, d = Z.shape
    for k in range(d):
        for j in range(n):
            a = 0.0
            v = 0.0
            for l in range(d):
                a += A[k, l] * Z[j, l]
                v += V[k, l] * Z[j, l]
            BAZT[k, j] = beta * a
            VZT[k, j] = v
    for i in range(n):
        q = 0.0
        for l in range(d):
            a = 0.0
            for k in range(d):
                a += A[k, l] * Z[i, k]
            q += a * a
        top[i] = beta * np.sqrt(q)


#: largest gap top[i] - s_ii for which the bound top[i] is used as the softmax shift
_SHIFT_GAP = 600.0
#: largest bound top[i] used as the shift (above it, score rounding could exceed 1e-7)
_NEAR_MAX = 1e8

#: rows per block: the exp pass runs over about this many scores at once
_BLOCK = 1024


@njit(cache=True, nogil=True, error_model="numpy")
def _scaled(V, dt):
    """(V / s_V, log(dt s_V)) with s_V = max |V_kl|; (V, -inf) for V = 0 (then u_i = 0)."""
    sV = 0.0
    for k in range(V.shape[0]):
        for l in range(V.shape[1]):
            sV = max(sV, abs(V[k, l]))
    if sV == 0.0:
        return V.copy(), -np.inf
    return V / sV, np.log(dt) + np.log(sV)


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FM)
def _run_serial(Z0, beta, dt, steps, A, V, usa, record_every, out):
    n, d = Z0.shape
    Z = Z0.copy()
    Znew = np.empty_like(Z)
    BAZT = np.empty((d, n))
    VZT = np.empty((d, n))
    top = np.empty(n)
    R = max(1, min(n, _BLOCK // n))
    s = np.empty(R * n)
    mv = np.empty(R)
    u = np.empty(d)
    Vh, lc0 = _scaled(V, dt)
    out[0] = Z
    for st in range(1, steps + 1):
        _prep(Z, beta, A, Vh, BAZT, VZT, top)
        for i0 in range(0, n, R):
            _rows(i0, min(n, i0 + R), Z, BAZT, VZT, top, lc0, usa, s, mv, u, Znew)
        Z, Znew = Znew, Z
        if st % record_every == 0:
            out[st // record_every] = Z


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FM, parallel=True)
def _run_parallel(Z0, beta, dt, steps, A, V, usa, record_every, out, nchunks):
    n, d = Z0.shape
    Z = Z0.copy()
    Znew = np.empty_like(Z)
    BAZT = np.empty((d, n))
    VZT = np.empty((d, n))
    top = np.empty(n)
    Vh, lc0 = _scaled(V, dt)
    out[0] = Z
    size = (n + nchunks - 1) // nchunks
    R = max(1, min(size, _BLOCK // n))
    for st in range(1, steps + 1):
        _prep(Z, beta, A, Vh, BAZT, VZT, top)
        for c in prange(nchunks):
            s = np.empty(R * n)
            mv = np.empty(R)
            u = np.empty(d)
            hi = min(n, (c + 1) * size)
            for i0 in range(c * size, hi, R):
                _rows(i0, min(hi, i0 + R), Z, BAZT, VZT, top, lc0, usa, s, mv, u, Znew)
        Z, Znew = Znew, Z
        if st % record_every == 0:
            out[st // record_every] = Z


# --------------------------------------------------------------------------- symmetric A
# With A = A^T the score is symmetric, s_ij = s_ji, and one exponential serves both tokens of a
# pair. Write q_i = top_i / 2 (top_i = beta |A z_i| >= s_ij for every j, by Cauchy-Schwarz, and
# so s_ij <= min(top_i, top_j) <= q_i + q_j) and
#     E_ij = exp(s_ij - q_i - q_j) = E_ji in (0, 1],     h_j = exp(q_j - max_k q_k).
# Then exp(s_ij) = E_ij h_j e^{q_i + max q}: the row factor e^{q_i + max q} is common to row i,
# so the SA weights are E_ij h_j / sum_k E_ik h_k, and the USA sum is e^{q_i + max q} times
# sum_j E_ij h_j V z_j. Each unordered pair {i, j} costs one exponential and feeds both rows.
# Used when the gaps top_i - s_ii and the spread max top - min top are at most _SYM_GAP:
# then the largest term of row i, at least E_ii h_i >= e^{-_SYM_GAP - _SYM_GAP/2}, is a normal
# float and nothing underflows that matters; otherwise the step takes the per-row path.

#: largest gap top_i - s_ii and largest spread of top for which the symmetric form is used
_SYM_GAP = 300.0


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FM_EXP)
def _sym_shifts(Z, BAZT, top, q, h):
    """q_i = top_i / 2 and h_i = exp(q_i - max q); False when the symmetric form is not used."""
    n, d = Z.shape
    tmax = top[0]
    tmin = top[0]
    for i in range(n):
        tmax = max(tmax, top[i])
        tmin = min(tmin, top[i])
        sii = 0.0
        for k in range(d):
            sii += Z[i, k] * BAZT[k, i]
        if not top[i] - sii <= _SYM_GAP:
            return False
    if not (tmax <= _NEAR_MAX and tmax - tmin <= _SYM_GAP):
        return False
    qmax = 0.5 * tmax
    for i in range(n):
        q[i] = 0.5 * top[i]
        h[i] = _exp1(q[i] - qmax)
    return True


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FM_EXP)
def _sym_weights(i0, i1, Z, BAZT, q, e):
    """e[(i - i0)*n + j] = E_ij = exp(s_ij - q_i - q_j) for i0 <= i < i1 and j >= i (no
    reassociation: the exponential is inlined here). The loops run over views that start at
    column i, so their indices are provably >= 0 and they vectorise."""
    n, d = Z.shape
    for i in range(i0, i1):
        r = i - i0
        er = e[r * n + i : (r + 1) * n]  # columns j = i .. n-1
        qr = q[i:]
        m = n - i
        qi = q[i]
        if d == 2:
            z0, z1 = Z[i, 0], Z[i, 1]
            b0, b1 = BAZT[0, i:], BAZT[1, i:]
            for j in range(m):
                er[j] = _exp1(z0 * b0[j] + z1 * b1[j] - qi - qr[j])
        elif d == 3:
            z0, z1, z2 = Z[i, 0], Z[i, 1], Z[i, 2]
            b0, b1, b2 = BAZT[0, i:], BAZT[1, i:], BAZT[2, i:]
            for j in range(m):
                er[j] = _exp1(z0 * b0[j] + z1 * b1[j] + z2 * b2[j] - qi - qr[j])
        else:
            for j in range(m):
                er[j] = 0.0
            for k in range(d):
                zk = Z[i, k]
                bk = BAZT[k, i:]
                for j in range(m):
                    er[j] += zk * bk[j]
            for j in range(m):
                er[j] = _exp1(er[j] - qi - qr[j])


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FM, inline="always")
def _sym_accumulate(i0, i1, VZT, h, e, T, U):
    """Add the pairs (i, j), i0 <= i < i1, j >= i, to T_i = sum_j E_ij h_j and
    U[:, i] = sum_j E_ij h_j VZT[:, j], each pair i < j to both rows (views from column i + 1,
    as in :func:`_sym_weights`)."""
    d, n = VZT.shape
    for i in range(i0, i1):
        r = i - i0
        hi = h[i]
        w = e[r * n + i] * hi  # the diagonal term, once
        t = w
        er = e[r * n + i + 1 : (r + 1) * n]  # columns j = i+1 .. n-1
        hr = h[i + 1 :]
        Tr = T[i + 1 :]
        m = n - i - 1
        if d == 2:
            v0, v1 = VZT[0, i + 1 :], VZT[1, i + 1 :]
            u0, u1 = U[0, i + 1 :], U[1, i + 1 :]
            vi0 = VZT[0, i] * hi
            vi1 = VZT[1, i] * hi
            a0 = w * VZT[0, i]
            a1 = w * VZT[1, i]
            for j in range(m):
                ej = er[j]
                wj = ej * hr[j]
                t += wj
                a0 += wj * v0[j]
                a1 += wj * v1[j]
                Tr[j] += ej * hi
                u0[j] += ej * vi0
                u1[j] += ej * vi1
            U[0, i] += a0
            U[1, i] += a1
        elif d == 3:
            v0, v1, v2 = VZT[0, i + 1 :], VZT[1, i + 1 :], VZT[2, i + 1 :]
            u0, u1, u2 = U[0, i + 1 :], U[1, i + 1 :], U[2, i + 1 :]
            vi0 = VZT[0, i] * hi
            vi1 = VZT[1, i] * hi
            vi2 = VZT[2, i] * hi
            a0 = w * VZT[0, i]
            a1 = w * VZT[1, i]
            a2 = w * VZT[2, i]
            for j in range(m):
                ej = er[j]
                wj = ej * hr[j]
                t += wj
                a0 += wj * v0[j]
                a1 += wj * v1[j]
                a2 += wj * v2[j]
                Tr[j] += ej * hi
                u0[j] += ej * vi0
                u1[j] += ej * vi1
                u2[j] += ej * vi2
            U[0, i] += a0
            U[1, i] += a1
            U[2, i] += a2
        else:
            for j in range(m):
                ej = er[j]
                t += ej * hr[j]
                Tr[j] += ej * hi
            for k in range(d):
                vk = VZT[k, i + 1 :]
                uk = U[k, i + 1 :]
                vik = VZT[k, i] * hi
                a = w * VZT[k, i]
                for j in range(m):
                    ej = er[j]
                    a += ej * hr[j] * vk[j]
                    uk[j] += ej * vik
                U[k, i] += a
        T[i] += t


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FM, inline="always")
def _sym_finish(i0, i1, Z, T, U, q, qmax, lc0, usa, u, Znew):
    """New rows i0 <= i < i1 from T and U (log-domain coefficients as in :func:`_rows`)."""
    n, d = Z.shape
    logn = np.log(n)
    a_sa = np.exp(-max(0.0, lc0))  # SA: the coefficients are the same for every row
    c_sa = np.exp(lc0 - max(0.0, lc0))
    for i in range(i0, i1):
        t = T[i]
        if usa:  # z_i + (dt s_V / n) e^{q_i + max q} U_i
            lc = lc0 - logn + q[i] + qmax + np.log(t)
            hi = max(0.0, lc)
            a = np.exp(-hi)
            c = np.exp(lc - hi) / t
        else:  # z_i + dt s_V U_i / T_i
            a = a_sa
            c = c_sa / t
        big = 0.0
        for k in range(d):
            y = a * Z[i, k] + c * U[k, i]
            u[k] = y
            big = max(big, abs(y))
        nrm = 0.0
        for k in range(d):
            y = u[k] / big  # 0/0 -> nan when z_i + dt u_i = 0 (reported by the caller)
            u[k] = y
            nrm += y * y
        nrm = np.sqrt(nrm)
        for k in range(d):
            Znew[i, k] = u[k] / nrm


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FM)
def _run_serial_sym(Z0, beta, dt, steps, A, V, usa, record_every, out):
    """:func:`_run_serial` for a symmetric A: one exponential per unordered pair (the notes above
    _SYM_GAP); a layer whose shifts are too far apart takes the per-row path."""
    n, d = Z0.shape
    Z = Z0.copy()
    Znew = np.empty_like(Z)
    BAZT = np.empty((d, n))
    VZT = np.empty((d, n))
    top = np.empty(n)
    R = max(1, min(n, _BLOCK // n))
    e = np.empty(R * n)
    mv = np.empty(R)
    u = np.empty(d)
    q = np.empty(n)
    h = np.empty(n)
    T = np.empty(n)
    U = np.empty((d, n))
    Vh, lc0 = _scaled(V, dt)
    out[0] = Z
    for st in range(1, steps + 1):
        _prep(Z, beta, A, Vh, BAZT, VZT, top)
        if _sym_shifts(Z, BAZT, top, q, h):
            T[:] = 0.0
            U[:] = 0.0
            for i0 in range(0, n, R):
                i1 = min(n, i0 + R)
                _sym_weights(i0, i1, Z, BAZT, q, e)
                _sym_accumulate(i0, i1, VZT, h, e, T, U)
            _sym_finish(0, n, Z, T, U, q, 0.5 * top.max(), lc0, usa, u, Znew)
        else:
            for i0 in range(0, n, R):
                _rows(i0, min(n, i0 + R), Z, BAZT, VZT, top, lc0, usa, e, mv, u, Znew)
        Z, Znew = Znew, Z
        if st % record_every == 0:
            out[st // record_every] = Z


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FM, parallel=True)
def _run_parallel_sym(Z0, beta, dt, steps, A, V, usa, record_every, out, nchunks):
    """:func:`_run_parallel` for a symmetric A: chunk c owns the rows [lo_c, lo_{c+1}) of the
    upper triangle (about equal numbers of pairs) and adds into its own T and U; the chunks'
    sums are then added."""
    n, d = Z0.shape
    Z = Z0.copy()
    Znew = np.empty_like(Z)
    BAZT = np.empty((d, n))
    VZT = np.empty((d, n))
    top = np.empty(n)
    q = np.empty(n)
    h = np.empty(n)
    Tc = np.empty((nchunks, n))
    Uc = np.empty((nchunks, d, n))
    T = np.empty(n)
    U = np.empty((d, n))
    Vh, lc0 = _scaled(V, dt)
    out[0] = Z
    lo = np.empty(nchunks + 1, dtype=np.int64)
    for c in range(nchunks + 1):  # rows [0, x) hold about n x - x^2/2 of the n^2/2 pairs
        lo[c] = min(n, int(round(n * (1.0 - np.sqrt(max(0.0, 1.0 - c / nchunks))))))
    lo[nchunks] = n
    size = (n + nchunks - 1) // nchunks
    R = max(1, min(n, _BLOCK // n))
    for st in range(1, steps + 1):
        _prep(Z, beta, A, Vh, BAZT, VZT, top)
        if _sym_shifts(Z, BAZT, top, q, h):
            for c in prange(nchunks):
                e = np.empty(R * n)
                Tk = Tc[c]
                Uk = Uc[c]
                Tk[:] = 0.0
                Uk[:] = 0.0
                for i0 in range(lo[c], lo[c + 1], R):
                    i1 = min(lo[c + 1], i0 + R)
                    _sym_weights(i0, i1, Z, BAZT, q, e)
                    _sym_accumulate(i0, i1, VZT, h, e, Tk, Uk)
            T[:] = Tc[0]
            U[:] = Uc[0]
            for c in range(1, nchunks):
                T += Tc[c]
                U += Uc[c]
            qmax = 0.5 * top.max()
            for c in prange(nchunks):
                u = np.empty(d)
                _sym_finish(c * size, min(n, (c + 1) * size), Z, T, U, q, qmax, lc0, usa, u, Znew)
        else:
            Rr = max(1, min(size, _BLOCK // n))
            for c in prange(nchunks):
                s = np.empty(Rr * n)
                mv = np.empty(Rr)
                u = np.empty(d)
                hi = min(n, (c + 1) * size)
                for i0 in range(c * size, hi, Rr):
                    _rows(i0, min(hi, i0 + Rr), Z, BAZT, VZT, top, lc0, usa, s, mv, u, Znew)
        Z, Znew = Znew, Z
        if st % record_every == 0:
            out[st // record_every] = Z


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FM, parallel=True)
def _run_batch(Z0s, beta, dt, steps, A, V, usa, record_every, out, sym):
    for b in prange(Z0s.shape[0]):
        if sym:
            _run_serial_sym(Z0s[b], beta, dt, steps, A, V, usa, record_every, out[b])
        else:
            _run_serial(Z0s[b], beta, dt, steps, A, V, usa, record_every, out[b])
