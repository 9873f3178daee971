"""ui.run, the one way a page runs work: the result kept for its inputs across reruns, costly work asked about
first and then run as a job in the queue, Stop remembered for its inputs."""
from streamlit.testing.v1 import AppTest


def _page():
    import streamlit as st

    from explorer import ui

    ss = st.session_state

    def work(progress):
        progress(0.5, "half")
        ss["calls"] = ss.get("calls", 0) + 1  # light work runs on the script thread: session state is there
        return f"done {ss['n']}"

    ask = "this is costly" if ss.get("costly") else None
    heavy_calls = ss.setdefault("heavy_calls", [])

    def heavy(progress):  # a job's thread: no session state, the list is this run's own object
        heavy_calls.append(1)
        return f"job {ss_n}"

    ss_n = ss["n"]
    got = ui.run("demo", ss["n"], heavy if ask else work, ask=ask, running="working")
    st.write(f"result: {got}")


def _app(**state) -> AppTest:
    at = AppTest.from_function(_page, default_timeout=60)
    at.session_state["n"] = 1
    for k, v in state.items():
        at.session_state[k] = v
    return at.run()


def _result(at) -> str:
    return [m.value for m in at.markdown if m.value.startswith("result:")][-1]


def test_light_work_runs_once_and_its_result_survives_reruns():
    at = _app()
    assert not at.exception and _result(at) == "result: done 1" and at.session_state["calls"] == 1
    at.run()
    assert _result(at) == "result: done 1" and at.session_state["calls"] == 1  # kept, not run again
    at.session_state["n"] = 2
    at.run()
    assert _result(at) == "result: done 2" and at.session_state["calls"] == 2  # new inputs: run for them


def test_costly_work_is_asked_about_then_runs_as_a_job():
    at = _app(costly=True)
    assert not at.exception and _result(at) == "result: None" and at.warning[0].value == "this is costly"
    assert at.session_state["heavy_calls"] == []  # nothing ran before the answer
    at.button(key="demo_anyway").click().run()
    assert not at.exception and _result(at) == "result: job 1" and at.session_state["heavy_calls"] == [1]
    at.run()
    assert _result(at) == "result: job 1" and at.session_state["heavy_calls"] == [1]  # kept
