"""The Data page with a misspelt label ("postive" on 5 rows): a merge is offered, the rows are not
listed as disagreements with no checkpoint label, and merging leaves one spelling."""
from streamlit.testing.v1 import AppTest

from conftest import ROOT
from explorer.data.dataset import demo_frame
from explorer.ui.session import DATA_KEY, Upload


def test_data_page_offers_to_merge_a_typo_into_the_frequent_label():
    df = demo_frame(per_class=10, seed=3)
    df.loc[df.index[df["label"] == "positive"][:5], "label"] = "postive"
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.session_state["data_source"] = "upload"
    at.session_state["data_uploaded"] = Upload(df.to_csv(index=False).encode(), "typo.csv")
    at.run()
    at.switch_page("pages/data.py").run()
    assert not at.exception and not at.error
    warnings = " ".join(w.value for w in at.warning)
    assert "'postive' → 'positive'" in warnings and "typo" in warnings
    wrong = at.dataframe[0].value if at.dataframe else None
    assert wrong is None or wrong.iloc[:, 2].notna().all()  # the checkpoint's label is never missing
    at.button(key="data_merge_0").click().run()
    assert not at.exception and "postive" not in " ".join(w.value for w in at.warning)
    assert "postive" not in at.session_state[DATA_KEY].labels
