"""A browserless Streamlit session: speaks the app's own websocket protocol (Streamlit's protobuf BackMsg /
ForwardMsg over /_stcore/stream), so a bench can hold 30 sessions on loopback and time what the *server* does.

What a browser does, reduced to what the server sees: connect, ask for a run of a page (BackMsg.rerun_script
with the page's hash and the widget values), read ForwardMsgs until `script_finished`. Widgets are found in
the run's deltas by their key (Streamlit puts the user key at the end of the element id). Nothing is drawn.
"""
from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

RUN_TIMEOUT_S = 300.0  # one run; a bench's loops are bounded by their edit counts, this only ends a stuck one


@dataclass
class Run:
    seconds: float
    errors: list[str]  # exception or error-alert texts the run drew
    infos: list[str]  # info-alert texts (a queued job's place shows here)
    found: bool  # `needle` was in a chart the run drew (the edit really reached the analysis)


@dataclass
class Session:
    url: str  # http://127.0.0.1:PORT
    ws: object = None
    pages: dict[str, str] = field(default_factory=dict)  # url path name -> page script hash
    page: str = ""  # the hash of the page runs ask for
    widgets: dict[str, str] = field(default_factory=dict)  # user key -> element id, from the last runs
    values: dict[str, WidgetState] = field(default_factory=dict)  # element id -> the value this client holds
    inbox: asyncio.Queue = field(default_factory=asyncio.Queue)  # every frame, read as it comes
    reader: asyncio.Task | None = None
    session_id: str = ""  # the server's id for this session, from its first run

    async def connect(self) -> None:
        host = self.url.removeprefix("http://")
        # No client pings: a server busy with 30 runs answers late, and that is what is measured, not a drop.
        self.ws = await websockets.connect(f"ws://{host}/_stcore/stream", subprotocols=["streamlit"],
                                           max_size=None, open_timeout=60, ping_interval=None)
        # Read all the time, as a browser does: frames between runs (a fragment's auto-rerun request)
        # left unread would stall the connection.
        self.reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        try:
            async for raw in self.ws:
                self.inbox.put_nowait(raw)
        except websockets.ConnectionClosed:
            pass

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()
        if self.reader is not None:
            await self.reader

    async def run(self, page: str | None = None, needle: str = "", query: str = "") -> Run:
        """Ask for a run (of `page`, a url path name such as "attention", when given) with the values held,
        and wait for its end. Button presses (trigger values) are sent once, as a browser does. `query` is the
        URL's query string, as a browser sends it."""
        if page is not None:
            self.page = self.pages[page]  # known from the first run's navigation message
        msg = BackMsg()
        cs = msg.rerun_script
        cs.page_script_hash = self.page
        cs.page_name = page or ""
        cs.query_string = query
        cs.widget_states.widgets.extend(self.values.values())
        self.values = {k: v for k, v in self.values.items() if v.WhichOneof("value") != "trigger_value"}
        while not self.inbox.empty():  # what came between runs belongs to none of them
            self._note(self.inbox.get_nowait())
        t0 = time.perf_counter()
        await self.ws.send(msg.SerializeToString())
        errors, infos, found = [], [], not needle
        while True:
            fwd = self._note(await asyncio.wait_for(self.inbox.get(), RUN_TIMEOUT_S))
            kind = fwd.WhichOneof("type")
            if kind == "page_not_found":
                errors.append(f"page not found: {fwd.page_not_found.page_name}")
            elif kind == "delta" and fwd.delta.WhichOneof("type") == "new_element":
                el = fwd.delta.new_element
                what = el.WhichOneof("type")
                if what == "exception":
                    errors.append(el.exception.message)
                elif what == "alert" and el.alert.format == el.alert.ERROR:
                    errors.append(el.alert.body)
                elif what == "alert" and el.alert.format == el.alert.INFO:
                    infos.append(el.alert.body)
                elif what == "plotly_chart" and needle and needle in el.plotly_chart.spec:
                    found = True
                inner = getattr(el, what) if what else None
                wid = getattr(inner, "id", "") if inner is not None else ""
                if isinstance(wid, str) and wid.startswith("$$ID"):
                    self.widgets[wid.rsplit("-", 1)[-1]] = wid
            elif kind == "script_finished":
                # FINISHED_SUCCESSFULLY, FINISHED_WITH_COMPILE_ERROR, FINISHED_EARLY_FOR_RERUN, FINISHED_FRAGMENT_RUN_SUCCESSFULLY
                if fwd.script_finished == ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                    continue  # the app asked for another run (st.rerun): the user waits for that one too
                if fwd.script_finished == ForwardMsg.FINISHED_WITH_COMPILE_ERROR:
                    errors.append("compile error")
                return Run(time.perf_counter() - t0, errors, infos, found)

    def _note(self, raw: bytes) -> ForwardMsg:
        fwd = ForwardMsg()
        fwd.ParseFromString(raw)
        if fwd.WhichOneof("type") == "navigation":  # st.navigation's pages, sent on each run
            self.pages = {p.url_pathname: p.page_script_hash for p in fwd.navigation.app_pages}
        elif fwd.WhichOneof("type") == "new_session":
            self.session_id = fwd.new_session.initialize.session_id
        return fwd

    def set_text(self, key: str, text: str) -> None:
        wid = self.widgets[key]
        self.values[wid] = WidgetState(id=wid, string_value=text)

    def press(self, key: str) -> None:
        wid = self.widgets[key]
        self.values[wid] = WidgetState(id=wid, trigger_value=True)


def run_apart(main):
    """asyncio.run(main()) on a thread of its own, returning its result or raising its error: a caller may
    already run an event loop on its thread (Playwright's sync API does, for a whole test session)."""
    import threading

    out: dict = {}

    def target() -> None:
        try:
            out["result"] = asyncio.run(main())
        except BaseException as err:  # noqa: BLE001 - handed to the caller's thread
            out["error"] = err

    thread = threading.Thread(target=target, name="ws-client")
    thread.start()
    thread.join()
    if "error" in out:
        raise out["error"]
    return out["result"]
