"""The data's labels against the checkpoint's names: a permuted id2label, found from the one forward pass with
the Data page's Hungarian check (explorer.data.mapping), and how every later check reads the labels."""
from __future__ import annotations

from explorer.data.dataset import sorted_names
from explorer.data.mapping import agreement_mapping, fix_for, permuted_mapping
from explorer.data.names import name_matches
from explorer.scan.base import HEAD, Found, Finding, ScanData, check, labelled_single
from explorer.text.errors import Message


@check("mapping.permutation", labelled_single, cost=0.0, needs=HEAD, deeper="pages/data.py", cause="through")
def find_permutation(data: ScanData, found: Found, progress) -> list[Finding]:
    """Fills `found.label_ids` for every later check: through the mapping the data support when it beats the
    names as they are by PERMUTED_GAIN accuracy, else the names as they are (spellings and ids included)."""
    ck_labels = data.ck.labels
    untrained = found.result("head.untrained") is not None  # a random head's best mapping is noise
    names = sorted_names(list(data.given))
    renames = name_matches(names, ck_labels)
    check_ = agreement_mapping(list(data.given), data.predicted, ck_labels, renames)
    found.mapping = {} if untrained else permuted_mapping(check_, data.ck)
    if found.mapping:
        moved = {a: b for a, b in found.mapping.items() if check_["identity"].get(a) != b}
        found.label_ids = {a: ck_labels.index(b) for a, b in check_["best"].items()}
        fix = fix_for(data.ck, found.mapping)
        return [Finding("mapping.permutation", "major",
                        Message("scan_permuted", n=len(moved), name=data.ck.name, before=f"{check_['before']:.0%}",
                                after=f"{check_['after']:.0%}", side=fix["side"]),
                        {"mapping": found.mapping, "before": check_["before"], "after": check_["after"],
                         "rows": [i for i, g in enumerate(data.given) if g in moved],  # rows whose label moves
                         "fix": {"side": fix["side"], "reason": fix["reason"], "config": fix["config"],
                                 "csv": fix["csv"]}})]
    found.label_ids = {a: ck_labels.index(b) for a, b in check_["identity"].items() if b is not None}
    return []
