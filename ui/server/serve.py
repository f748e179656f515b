"""Serve the app: ``python -m ui.server.serve [options]`` is ``streamlit run app.py [options]`` plus nine fixes.

1. **Routing.** Streamlit treats an app with a folder named ``pages/`` beside its main script as a
   legacy (v1) multipage app until some session has executed ``st.navigation`` — a process-wide
   flag decided when the first session starts. The first visitor after a server start therefore ran
   in legacy mode: a deep link ran the page script without app.py, and that session's widget ids
   came from the legacy run, so its first interaction (a slider, the language switch) was silently
   dropped. This app always routes with ``st.navigation``, so the flag is cleared before the server
   starts. (Checked against the pinned streamlit 1.67; ``ui.kit.page`` keeps a fallback for a plain
   ``streamlit run``.)
2. **No cache clearing from the network.** Any websocket client can send the ``clear_cache``
   BackMsg (the "Clear caches" menu item; ``toolbarMode = "viewer"`` only hides the item): the
   server then empties ``st.cache_data`` and ``st.cache_resource`` for *every* session, and the
   whole class pays the cold cost again. The served process refuses it (a warning in the server
   log) unless the development setting ``APP_ALLOW_CLEAR_CACHE=1`` is in its environment.
3. **A thread-safe Numba threading layer.** Several sessions call parallel kernels at once; Numba's
   ``workqueue`` layer (its fallback when neither OpenMP nor TBB loads) aborts the process on
   concurrent use. ``NUMBA_THREADING_LAYER`` is set to ``threadsafe`` (OpenMP or TBB, whichever
   loads) before anything imports numba, and a missing safe layer stops the server at start with
   a message instead of crashing it under load.

4. **No wait for kernel compilation.** The server answers at once; the Numba kernels are compiled
   (or loaded from the on-disk cache) by low-priority child processes, and each is loaded into the
   server from the cache by its first call once its module is ready
   (:func:`sim.warm.start_background`); until then ``sim.attention``, ``sim.depth_sum`` and
   ``sim.width`` take their NumPy reference paths, which give the same numbers.

5. **One client cannot take the server** (:class:`ui.server.budgets.Guard`, installed by
   :func:`ui.server.adapters.install_guards`).
   Every websocket message passes a per-session and a per-browser budget (token buckets: a browser
   is its address plus its cookie, so many tabs share one budget, and a class behind one NAT does
   not). A message over budget is *slowed*: the session's latest rerun is held and delivered when
   the budget allows (earlier held ones are superseded, as Streamlit's own fast reruns do); a
   client that keeps sending far over budget is *disconnected* (close code 1008, with the reason
   as its notice, and a line in the server log). A hand on a slider sends a few reruns a second
   and never reaches either. Widget states with ids Streamlit never made (``_instructor``, a bare
   session-state name) are dropped before the session sees them. Inbound websocket frames are
   capped at :data:`ui.server.budgets.INBOUND_MAX_BYTES` by uvicorn before they are buffered (the app's own are a
   few kB; uploads go over HTTP); outbound messages keep Streamlit's limit.
6. **The instructor's sign-in route** (:mod:`ui.server.signin_routes`): ``POST /_app/signin`` checks the
   key under limits on wrong keys per browser, per address and server-wide
   (:class:`ui.teaching.signin.Attempts`) and sets a
   signed, HttpOnly, expiring cookie (:func:`ui.teaching.signin.make_token`); ``POST /_app/signout`` clears
   it and revokes it on every replica (in the shared class store, :mod:`ui.teaching.class_store`, until the
   cookie's expiry). A short or guessable key stops the server at start (:func:`ui.server.start.check_key_strength`).

7. **Fragment reruns on the page shown** (``ui.server.adapters``: ``_stale_fragment``,
   ``_fragments_on_the_page_shown``):
   a fragment rerun that names a page the session has left (the class poll, in flight while a
   push switched the page) is dropped if timed, or run on the page shown; otherwise Streamlit 1.67
   tells the browser it is on the old page and the browser drops the new page's elements. The
   same wrapper notes where each run came from (widget values from the browser, on the page shown)
   for ``ui.server.runs.settled``, which lets a held key's stale values go before they are computed.

8. **A download made on click lives until it is fetched** (``ui.server.adapters._keep_fresh_downloads``). A
   download button whose data is made on click (``data=callable``: the class results, a figure's
   data) answers the click with the address of a file the browser then fetches. Streamlit 1.67
   stores that file unreferenced, and the end of *any* session's run deletes unreferenced
   downloads on its second pass: in a class, where every student's poll ends a run each second,
   the file could be gone before the browser asked for it (the teacher's results download
   "canceled" in a loaded browser run). Such a file is kept for ``ui.server.adapters.FRESH_DOWNLOAD_S`` seconds.

9. **Ready before the first visit** (:mod:`ui.server.prepare`): the app's and every page's modules are
   imported in a background thread as the server starts (the first page run waits for them
   instead of importing them itself), and every Numba kernel is loaded from the on-disk cache
   once ``sim.warm``'s children have made it current. A fresh server left idle for 10 s, then a
   new Chromium opening a page by its address: drawn 2.9 -> 1.2 s (home), 5.2 -> 3.0 s
   (two_point), 5.8 -> 4.4 s (hemisphere); the server's CPU during that visit 2.0-3.0 -> 0.4-0.7 s.

``make run``, the Docker image, the tests and the benchmarks all start the server this way
(``python -m ui.server`` is the same). This module is only the entry point; the work is done by
:mod:`ui.server.start` (environment, checks, :func:`~ui.server.start.main`), :mod:`ui.server.budgets`,
:mod:`ui.server.signin_routes` and :mod:`ui.server.adapters` (the replacements of Streamlit's
internals).
"""

from __future__ import annotations


# Importing ui.server.start sets NUMBA_THREADING_LAYER and OPENBLAS_NUM_THREADS (safe_threading_layer,
# single_thread_blas): ``python -m ui.server.serve`` imports nothing else before it (ui/__init__ and
# ui/server/__init__ are docstrings), so they are in place before streamlit, the app or sim/ import
# numba or numpy.
from ui.server.start import main, safe_threading_layer, single_thread_blas

__all__ = ["main", "safe_threading_layer", "single_thread_blas"]

if __name__ == "__main__":
    main()
