"""Browser-less class members over the websocket protocol (``harness/wsclient.py``): an instructor
who signs in with the key, opens a class, moves a slider, pushes the view, asks a question and
reads the answer count; students who join with the link, poll like the browser's fragment timer
and answer. Used by ``bench/abuse.py``, ``scripts/class_latency.py`` (one server) and ``scripts/scale_class.py``
(replicas behind nginx, one killed)."""

from __future__ import annotations

import asyncio
import re
import time
from typing import Any
from urllib.parse import parse_qs

from streamlit.proto.BackMsg_pb2 import BackMsg

from harness.wsclient import RunResult, SessionError, StreamlitSession

CODE_RE = re.compile(r"[?&]class=([A-Z2-9]{6})\b")
N_ANSWERS_RE = re.compile(r"Question (\d+): (\d+) answers")


class ClassSession(StreamlitSession):
    """A session that also records the texts of its last run (markdown, captions, code, alerts)."""

    def __init__(self, *a: Any, **k: Any) -> None:
        super().__init__(*a, **k)
        self.texts: list[str] = []
        self.run_texts: list[str] = []

    def _note_delta(self, msg: Any, res: RunResult, counts: dict[str, int]) -> None:
        d = msg.delta
        if d.WhichOneof("type") == "new_element":
            el = d.new_element
            kind = el.WhichOneof("type")
            if kind == "markdown":
                self.run_texts.append(el.markdown.body)
            elif kind == "code":
                self.run_texts.append(el.code.code_text)
            elif kind == "alert":
                self.run_texts.append(el.alert.body)
        super()._note_delta(msg, res, counts)

    async def _run(self, payload: bytes, timeout: float) -> RunResult:
        self.run_texts = []
        res = await super()._run(payload, timeout)
        self.texts = self.run_texts
        return res

    def query(self, name: str) -> str | None:
        return parse_qs(self.query_string).get(name, [None])[0]

    async def checked(self, coro, what: str) -> RunResult:
        r = await coro
        if not r.ok:
            raise SessionError(f"{what}: {r.error or r.exceptions or r.finished}")
        return r


class Instructor(ClassSession):
    async def sign_in(self, key: str, query: str = "lang=en") -> None:
        """Post the key to the server's sign-in route like the sidebar's form (the server sets its
        signed cookie), then open the websocket with that cookie."""
        await self.load_index("/")
        status, set_cookies = await asyncio.to_thread(self._post_key, key)
        self._take_cookies(set_cookies)
        if status != 303 or "app_instructor" not in self.cookies:
            raise SessionError(f"sign-in refused (HTTP {status}; is APP_INSTRUCTOR_KEY set?)")
        await self.connect()
        await self.checked(self.rerun("", query_string=query), "home page")
        if "_class_open" not in self.widget_values and not any(w.endswith("_class_open") for w in self._elements):
            raise SessionError(f"signed in but no 'Open a class' button: {self.texts[:5]}")

    def _post_key(self, key: str) -> tuple[int, list[str]]:
        import http.client
        from urllib.parse import urlencode, urlsplit

        u = urlsplit(self.base_url)
        conn = http.client.HTTPConnection(u.hostname, u.port, timeout=self.open_timeout)
        hdrs = {**self.headers, "Content-Type": "application/x-www-form-urlencoded"}
        if self.cookies:
            hdrs["Cookie"] = self.cookie_header()
        try:
            conn.request(
                "POST", (u.path.rstrip("/") or "") + "/_app/signin", urlencode({"key": key, "next": "/"}), hdrs
            )
            r = conn.getresponse()
            r.read()
            return r.status, r.headers.get_all("Set-Cookie") or []
        finally:
            conn.close()

    async def open_class(self) -> str:
        self.click("_class_open")
        await self.checked(self.rerun(), "open a class")
        for txt in self.texts:
            m = CODE_RE.search(txt)
            if m:
                return m.group(1)
        raise SessionError(f"no class code shown: {self.texts[:8]}")

    async def resume(self, code: str) -> None:
        """Take over an open class by its code (another instructor session, or after a failover)."""
        self.set_widget("_class_resume_code", code)
        self.click("_class_resume")
        await self.checked(self.rerun(), "resume a class")
        if not any(code in x and "?class=" in x for x in self.texts):
            raise SessionError(f"class {code} not taken over: {self.texts[:8]}")

    async def show(self, page: str, **values: float) -> None:
        """Open ``page`` (if not on it) and set slider values (one rerun each, like a user)."""
        if not any(info["page_script_hash"] == self.page_script_hash and p == page for p, info in self.pages.items()):
            await self.checked(self.rerun(page=page), f"open {page}")
        if values:
            await self.checked(self.rerun(widgets=values), f"move {values}")

    async def push(self) -> float:
        """Press "Push this view"; returns the wall time just before the click was sent."""
        self.click("_class_push")
        t0 = time.time()
        await self.checked(self.rerun(), "push")
        if not any("Pushed" in x for x in self.texts):
            raise SessionError(f"push not confirmed: {self.texts[:8]}")
        return t0

    async def ask(self, qn: int = 1) -> None:
        self.click("_class_ask")
        await self.checked(self.rerun(), "ask")

    async def n_answers(self) -> tuple[int, int] | None:
        """(question number, answers counted) from the live panel, after a fresh run."""
        await self.checked(self.rerun(), "answer count")
        for txt in self.texts:
            m = N_ANSWERS_RE.search(txt)
            if m:
                return int(m.group(1)), int(m.group(2))
        return None


class Student(ClassSession):
    async def join(self, code: str, lang: str = "en") -> RunResult:
        await self.load_index(f"/?class={code}")
        await self.connect()
        return await self.checked(self.rerun("", query_string=f"class={code}&lang={lang}"), "join")

    @property
    def poll_fragment(self) -> str | None:
        """The timed fragment a browser polls now: the one registered last (its id can change
        between runs, e.g. from a run on the home page to one on the pushed page; the server
        answers a stale id with nothing, which left some students of the class check without the
        question)."""
        return next(reversed(self.auto_reruns), None)

    async def poll(self, timeout: float = 5.0) -> RunResult:
        """What the browser does every ``run_every`` seconds: rerun the timed fragment.

        The server may drop a fragment request that reaches it during a full run (Streamlit
        re-registers the fragment in that run); no answer comes. The browser's timer just fires
        again, so a poll gives up after ``timeout`` (``error`` starts with "timeout"): not an error;
        what still arrives is read by the next call."""
        if not self.connected:
            raise SessionError("not connected")
        back = BackMsg()
        rs = back.rerun_script
        rs.query_string = self.query_string
        rs.page_script_hash = self.page_script_hash
        rs.fragment_id = self.poll_fragment or ""
        rs.is_auto_rerun = True
        rs.widget_states.widgets.extend(self._states.values())
        url_path = next((p for p, i in self.pages.items() if i["page_script_hash"] == self.page_script_hash), "")
        self._fill_context_info(rs.context_info, url_path)
        return await self._run(back.SerializeToString(), timeout)

    def question_shown(self) -> int | None:
        """The id of the live question whose answer box is on screen (None: no box)."""
        ids = [int(w.rsplit("_", 1)[1]) for w in map(str, self.widget_values) if w.startswith("_class_send_")]
        ids += [int(k.rsplit("_", 1)[1]) for k in self._element_keys() if k.startswith("_class_send_")]
        return max(ids) if ids else None

    def _element_keys(self) -> list[str]:
        from harness.wsclient import widget_key

        return [k for k in map(widget_key, self._elements) if k]

    async def drain(self, quiet: float = 0.3, limit: float = 10.0) -> None:
        """Read what is still on its way (a late poll answer) until ``quiet`` s pass without a run."""
        t_end = time.monotonic() + limit
        while self.connected and time.monotonic() < t_end:
            r = await self._run(b"", quiet)
            if r.error:
                return

    async def answer(self, qid: int, value: float) -> RunResult:
        await self.drain()
        self.set_widget(f"_class_ans_{qid}", value)
        self.click(f"_class_send_{qid}")
        r = await self.checked(self.rerun(), "send an answer")
        if not self.answer_sent():
            await self.drain()  # our run's output may come after a late one
        return r

    def answer_sent(self) -> bool:
        return any("Answer sent" in x for x in self.texts)
