"""The chain diagram's HTML (explorer.plots.chain): one box per step in order, each word one unbreakable span, user
text escaped."""
from explorer.plots.chain import chain_html


def test_each_word_is_one_span_and_text_stays_plain():
    html = chain_html([("Text", "43 characters"), ("[CLS] hidden state", "<b>x</b> -2.89, 0.04"), ("Label", "positive")])
    assert html.count('class="he-step"') == 3 and html.count('class="he-arrow"') == 2
    assert '<span class="he-word">-2.89,</span>' in html and '<span class="he-word">[CLS]</span>' in html
    assert "<b>" not in html and "&lt;b&gt;x&lt;/b&gt;" in html
    assert html.index('data-step="0"') < html.index('data-step="1"') < html.index('data-step="2"')
    assert ".he-word {white-space: nowrap;}" in html
