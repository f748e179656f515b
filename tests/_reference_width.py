"""Test-only references for sim/width.py: the network output and the loss gradient written out
plainly, to check the training engines against.
"""

from __future__ import annotations


import numpy as np

from sim.width import _data, _features, _params, _scale


def network(w, a, xs, scaling):
    r"""The network on the inputs: :math:`c\sum_i a_i\tanh(w_i x_m)`, :math:`c = N^{-1/2}` or :math:`N^{-1}`.

    Parameters
    ----------
    w, a : array_like
        Shape ``(N,)``.
    xs : array_like
        Shape ``(M,)``.
    scaling : {"lazy", "mean_field"}

    Returns
    -------
    numpy.ndarray
        Shape ``(M,)``.
    """
    w, a = _params(w, a)
    xs = _data(xs)
    c, _ = _scale(scaling, w.size)
    return c * (a @ np.tanh(np.outer(w, xs)))


def loss_gradient(w, a, xs, ys, scaling):
    r"""The gradient of :math:`L = \tfrac12\sum_m (f(x_m) - y_m)^2` with respect to :math:`w` and :math:`a`.

    .. math::

        \frac{\partial L}{\partial a_i} = c\sum_m r_m \tanh(w_i x_m),\qquad
        \frac{\partial L}{\partial w_i} = c\,a_i\sum_m r_m \tanh'(w_i x_m)\,x_m.

    (The gradient flow is :math:`\dot\theta = -\gamma\,\nabla L` with :math:`\gamma = 1`
    lazy and :math:`\gamma = N` mean-field.)

    Parameters
    ----------
    w, a : array_like
        Shape ``(N,)``.
    xs, ys : array_like
        Shape ``(M,)``.
    scaling : {"lazy", "mean_field"}

    Returns
    -------
    grad_w, grad_a : numpy.ndarray
        Shape ``(N,)`` each.
    """
    w, a = _params(w, a)
    xs, ys = _data(xs, ys)
    c, _ = _scale(scaling, w.size)
    S, D = _features(w, a, xs)
    r = c * (a @ S) - ys
    return c * a * (D @ r), c * (S @ r)
