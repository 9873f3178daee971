"""In a real browser: after a head-mode fine-tune and then a full one, "Fine-tuned model to download"
stayed on the first model and the zip held it. The picker moves to the newest, and the zip the browser saves
is the newest model's (its folder and weights), each named for what it is."""
import io
import re
import zipfile

import pytest

from explorer.text import i18n

from conftest import commit, pick_folder_checkpoint, wait_idle

pytestmark = [pytest.mark.browser, pytest.mark.server, pytest.mark.slow]
T = lambda key, **kw: i18n.t(key, "en", **kw)  # noqa: E731


def _set_number(page, label: str, value: int) -> None:
    box = page.get_by_label(label, exact=True)
    commit(box, str(value), "Enter")


def _fine_tune(page, picker, before: str) -> str:
    """Start a fine-tune and wait until the download picker shows a model other than `before`: the new one."""
    page.get_by_role("button", name=T("finetune.start")).click()
    for _ in range(600):
        page.wait_for_timeout(500)
        if picker.count() and picker.input_value() != before:
            break
    wait_idle(page)
    return picker.input_value()


def test_the_zip_downloaded_after_two_fine_tunes_is_the_newest_model(page, tiny_root):
    pick_folder_checkpoint(page, tiny_root / "tiny-bert")  # the picker's workings: no real weights needed
    page.locator("[data-testid=stSidebarNav] a[href$='/fine-tune']").first.click()
    page.wait_for_url("**/fine-tune")
    wait_idle(page)
    _set_number(page, T("finetune.max_length"), 16)
    _set_number(page, T("finetune.epochs"), 2)
    picker = page.locator("[data-testid=stSelectbox]").filter(has_text=T("finetune.download_model")).locator("input")
    first = _fine_tune(page, picker, "")
    assert re.fullmatch(r"tiny-bert-head-demo-2ep-\d{4}-\d{6}", first), first
    page.get_by_text(T("finetune.mode_full")).click()
    wait_idle(page)
    _set_number(page, T("finetune.epochs"), 1)
    newest = _fine_tune(page, picker, first)
    assert re.fullmatch(r"tiny-bert-full-demo-1ep-\d{4}-\d{6}", newest), newest  # the picker moved on
    page.get_by_role("button", name=T("finetune.prepare")).click()
    button = page.get_by_role("button", name=T("finetune.download"))
    button.wait_for(timeout=120_000)
    with page.expect_download(timeout=120_000) as got:
        button.click()
    assert got.value.suggested_filename == f"{newest}.zip"
    with zipfile.ZipFile(io.BytesIO(open(got.value.path(), "rb").read())) as zf:
        folders = {n.split("/")[0] for n in zf.namelist()}
        assert folders == {newest} and f"{newest}/model.safetensors" in zf.namelist(), folders
