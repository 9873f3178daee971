"""The Pipeline page for a token classifier (Checkpoint.task == "token-classification"): a toggle between the
token view (token × label heatmap, each token's tag, the subword that carries its word's label) and the entity
view (the text with entity spans highlighted, as pipeline() groups them, with a legend)."""
from __future__ import annotations

import streamlit as st

from explorer.model.checkpoints import TOKEN_CLASSIFICATION
from explorer.model.token_analysis import AGGREGATIONS, WORD_AGGREGATIONS, TokenAnalysis, analyze_tokens
from explorer.plots.token_labels import entity_html, label_heatmap
from explorer.text.errors import ExplorerError
from explorer.text import i18n
from explorer.ui.cache import ANALYSES, checkpoint, head, memo
from explorer.ui import panels
from explorer.ui.render import cancelled, chart, error, headers, plain, run_or_queue, table
from explorer.ui import session
from explorer.ui.session import lang, other_is_empty, selection, sticky, t


def is_token_model() -> bool:
    """The sidebar's checkpoint is a token classifier (False where it cannot load: the page says why)."""
    if other_is_empty():  # current_analysis prompts for the path
        return False
    sel = selection()
    try:  # a session model (a token fine-tune) too, not only the shared ones
        return checkpoint(sel.name, sel.seed).task == TOKEN_CLASSIFICATION
    except ExplorerError:
        return False


def current_token_analysis() -> TokenAnalysis | None:
    """The token analysis of the sidebar's picks, every strategy grouped (the page switches between them),
    cached with the other analyses; None after a one-line st.error."""
    sel = selection()
    try:
        return ANALYSES.get_or_compute(("tokens", sel.name, sel.head_name, sel.text, sel.seed), lambda: analyze_tokens(
            checkpoint(sel.name, sel.seed), head(sel.name, sel.head_name, sel.seed), sel.text, strategies=AGGREGATIONS))
    except ExplorerError as err:
        error(err)
        return None


def token_pipeline() -> bool:
    """Draw the token view or the entity view when the checkpoint is a token classifier; False otherwise
    (the page then draws the sentence classifier's pipeline)."""
    if not is_token_model():
        return False
    a = current_token_analysis()
    if a is None:
        return True
    st.caption(t("tokenhead.intro"))
    if a.truncated_tokens:
        st.warning(t("tokenhead.truncated", n=a.truncated_tokens, limit=a.max_length))
    left, right = st.columns(2)
    view = left.radio(t("tokenhead.view"), ("entities", "tokens"), horizontal=True,
                      format_func=lambda v, lg=lang(): i18n.t(f"tokenhead.view_{v}", lg), **sticky("tokenhead_view", "entities"))
    strategy = right.selectbox(t("tokenhead.aggregation"), AGGREGATIONS, help=t("tokenhead.aggregation_help"),
                               **sticky("tokenhead_aggregation", a.aggregation))
    found = a.entities[strategy]
    if view == "entities":
        st.html(entity_html(a.text, found, a.labels, t("tokenhead.legend"), t("tokenhead.no_entities")))
        table(headers([{"word": e.word, "entity": e.label, "score": round(e.score, 4), "start": e.start,
                        "end": e.end} for e in found], "tokenhead.col_"))
        return True
    chart(label_heatmap(a.shown, a.labels, a.softmax, t("tokenhead.heatmap_title"), t("tokenhead.token_axis"),
                        t("tokenhead.label_axis"), t("tokenhead.prob_axis")), "tokenhead_heatmap")
    if strategy in WORD_AGGREGATIONS:
        st.caption(t(f"tokenhead.carrier_{strategy}"))
    table(headers(_token_rows(a, strategy), "tokenhead.col_"))
    return True


def _token_rows(a: TokenAnalysis, strategy: str) -> list[dict]:
    """One row per token, special tokens as the model sees them: its tag and score, its word (pipeline()'s),
    and whether it carries that word's label under `strategy` (first/average/max; never for none/simple)."""
    rows = []
    for i, (tok, tag) in enumerate(zip(a.shown, a.tags)):
        w = a.token_word[i]
        carries = w is not None and strategy in WORD_AGGREGATIONS and i in a.words[w].carriers(strategy)
        rows.append({"position": i, "token": tok, "special": a.special[i], "tag": tag,
                     "score": round(float(a.softmax[i].max()), 4),
                     "word": a.words[w].text if w is not None else "", "carries": carries})
    return rows


def token_table() -> bool:
    """The Tokens page on a token classifier: every token with its id, offsets, tag and word, special tokens
    included (the page's [CLS] attention views read a sentence head); False for a sentence classifier."""
    if not is_token_model():
        return False
    a = current_token_analysis()
    if a is None:
        return True
    st.info(t("tokenhead.tokens_page"))
    rows = [{**row, "id": tid, "offsets": "" if o is None else f"{o[0]}–{o[1]}"}
            for row, tid, o in zip(_token_rows(a, "first"), a.token_ids, a.offsets)]
    table(headers(rows, "tokenhead.col_"))
    return True


def token_lesson() -> bool:
    """The lesson on a token classifier: the steps about heads with the checkpoint's real token head: step 4
    (the head's steps, applied to every token), step 6 (its parameters, and which are new) and step 8
    (sequence vs token heads, live: one vector for the text against one vector per token). The other steps
    need a sentence head, which the page says; False where the checkpoint is a sentence classifier (the page
    draws every step)."""
    if not is_token_model():
        return False
    a = current_token_analysis()
    if a is None:
        return True
    from explorer.plots import lesson as lesson_plots
    from explorer.ui import lesson_view

    st.info(t("tokenhead.lesson_only"))
    st.subheader(t("lesson.head.title"))
    st.write(t("tokenhead.lesson_head_body"))
    lesson_view.head_table(_head_sizes())
    st.subheader(t("lesson.new_head.title"))
    st.write(t("lesson.new_head.body"))
    lesson_view.new_head_table(a.new_weights)
    st.subheader(t("lesson.token_heads.title"))
    st.write(t("tokenhead.lesson_body"))
    seq = len(a.tokens)
    table(headers([
        {"head": t("tokenhead.lesson_sequence"), "vectors": 1, "predictions": 1},
        {"head": t("tokenhead.lesson_token"), "vectors": seq, "predictions": seq},
    ], "tokenhead.col_"))
    chart(lesson_plots.token_label_heatmap(a.logits, a.shown, a.labels, t("tokenhead.lesson_heatmap_title"),
                                           t("lesson.panel.token"), t("tokenhead.label_axis"),
                                           t("tokenhead.logit_axis")), "lesson_real_tokens")
    st.caption(t("tokenhead.lesson_tags", tags=" ".join(
        f"{tok}/{tag}" for tok, tag, sp in zip(a.shown, a.tags, a.special) if not sp)))
    return True


def _head_sizes() -> list[tuple[str, int]]:
    """Each step of the sidebar's token head and the size of the vector it gives each token: the head run on
    one zero vector, since only the shapes are shown (run_head is the one definition of the steps)."""
    import torch

    from explorer.model.heads import run_head

    sel = selection()
    ck, hd = checkpoint(sel.name, sel.seed), head(sel.name, sel.head_name, sel.seed)
    zero = torch.zeros(1, 1, ck.model.config.hidden_size, dtype=ck.model.dtype, device=ck.model.device)
    with torch.inference_mode():
        steps = run_head(hd, zero, torch.ones(1, 1, dtype=torch.long, device=ck.model.device))
    return [(name, v.shape[-1]) for name, v in steps]


def token_logits() -> bool:
    """The Logits page on a token classifier: every token's logits (token × label) and the head read out at
    every layer for every token; False for a sentence classifier."""
    if not is_token_model():
        return False
    a = current_token_analysis()
    if a is None:
        return True
    from explorer.plots import lesson as lesson_plots
    from explorer.plots.token_labels import layer_readout

    chart(lesson_plots.token_label_heatmap(a.logits, a.shown, a.labels, t("tokenhead.logits_title"),
                                           t("tokenhead.token_axis"), t("tokenhead.label_axis"),
                                           t("tokenhead.logit_axis")), "tokenhead_logits")
    chart(layer_readout(a.shown, a.labels, a.layer_logits, t("tokenhead.layers_title"), t("tokenhead.token_axis"),
                        t("tokenhead.layer_axis"), t("tokenhead.prob_axis")), "tokenhead_layers")
    st.caption(t("tokenhead.layers_help"))
    return True


def _token_choices(a: TokenAnalysis, strategy: str) -> dict[str, int]:
    """What the Attributions page offers to explain, as label -> token position: each entity (as pipeline()
    groups it under `strategy`), then every token, special tokens included."""
    from explorer.explain.token_attribution import entity_token

    found = {t("tokenhead.pick_entity", word=e.word, entity=e.label, token=a.shown[k], position=k): k
             for e in a.entities[strategy] for k in [entity_token(a, e, strategy)]}
    return {**found, **{t("tokenhead.pick_token", token=tok, position=i, tag=tag): i
                        for i, (tok, tag) in enumerate(zip(a.shown, a.tags))}}


def token_attributions() -> bool:
    """The Attributions page on a token classifier: a token (or an entity: the token carrying its label under
    the Pipeline page's aggregation) and a label; the chosen method explains that token's logit or
    probability, with the completeness check, and "every label at this token" as a grid. False for a
    sentence classifier (the page draws its own)."""
    if not is_token_model():
        return False
    a = current_token_analysis()
    if a is None:
        return True
    from explorer.explain import attribution as attr, cost
    from explorer.explain.token_attribution import every_label
    from explorer.plots import attribution as attribution_plots
    from explorer.text.highlight import highlight_html
    from explorer.plots.token_labels import label_grid

    sel = selection()
    strategy = st.session_state.get("tokenhead_aggregation", a.aggregation)
    choices = _token_choices(a, strategy)
    st.caption(t("tokenhead.attr_intro", aggregation=strategy))
    c1, c2, c3 = st.columns([3, 2, 2])
    picked = c1.selectbox(t("tokenhead.attr_token"), list(choices), key="attr_token_pick")
    token = choices[picked]
    # Sticky: its value is re-sent each run, so the browser redraws "its tag (…)" for the token explained now; a
    # plain keyed selectbox keeps showing the option's text from when it was chosen (another token's tag, #33).
    label = c2.selectbox(t("attributions.target"), [-1, *range(len(a.labels))], **sticky("attr_token_label", -1),
                         format_func=lambda k: t("tokenhead.attr_tag", label=a.tags[token]) if k < 0 else a.labels[k])
    method = c3.selectbox(t("attributions.method"), attr.METHODS, key="attr_method",
                          format_func=lambda m: t(f"attributions.m_{m}"))
    c4, c5, c6 = st.columns(3)
    quantity = c4.radio(t("attributions.quantity"), attr.QUANTITIES, key="attr_quantity", horizontal=True,
                        format_func=lambda q: t(f"attributions.q_{q}"))
    baseline = c5.selectbox(t("attributions.baseline"), attr.BASELINES, key="attr_baseline",
                            format_func=lambda b: t(f"attributions.b_{b}"), help=t("attributions.baseline_help"))
    level = c6.radio(t("attributions.level"), ("token", "word"), key="attr_level", horizontal=True,
                     format_func=lambda lv: t(f"attributions.level_{lv}"))
    target = int(a.predicted[token]) if label < 0 else int(label)
    params = (sel.name, sel.head_name, sel.text, sel.seed, method, token, target, quantity, baseline)
    ck, hd = checkpoint(sel.name, sel.seed), head(sel.name, sel.head_name, sel.seed)
    running, stop = t("attributions.running"), t("attributions.stop")
    # past one batch on the model's device: the job queue
    heavy = cost.attribution_is_heavy(ck.model.config, method, len(a.tokens), device=ck.model.device)
    r = memo("attr_token", params)
    if r is None:
        costly = method == "occlusion" and attr.occlusion_is_costly(len(a.tokens))
        if costly:
            st.warning(t("attributions.occlusion_cost", n=len(a.tokens)))
        held = costly or cancelled("attr_token", params)  # asked first, as on a sentence head
        run = held and st.button(t("attributions.run"), key="attr_token_run", type="primary")
        try:
            r = run_or_queue("attr_token", params, lambda p: attr.attribute(
                ck, hd, sel.text, method, target, quantity, baseline, target_token=token, progress=p), running, stop,
                start=run or not held, heavy=heavy, expected_s=10)
        except ExplorerError as err:
            error(err)
            return True
        if r is None:
            if cancelled("attr_token", params):
                st.info(t("attributions.cancelled"))
            return True
        memo("attr_token", params, lambda done=r: done)
    st.caption(t("tokenhead.attr_explains", label=plain(r.target_label), token=a.shown[token], position=token,
                 quantity=t(f"attributions.q_{r.quantity}"), seconds=r.seconds))
    panels.completeness(r)
    signed = r.method != "saliency"
    legend = t("attributions.legend" if signed else "attributions.legend_unsigned", label=r.target_label)
    pieces, scores = r.words() if level == "word" else (r.shown, r.scores)  # the sentence page's word merge
    st.html(highlight_html(pieces, scores, legend=legend))
    chart(attribution_plots.sorted_bars(pieces, scores, t("attributions.bars_title", label=r.target_label),
                                        t("attributions.score_axis"), t(f"attributions.level_{level}"), signed=signed),
          "attr_token_bars")
    _downloads(r, level, pieces, scores, legend)
    _faithfulness(a, token, target, quantity, baseline)
    st.subheader(t("tokenhead.grid_title"))
    st.caption(t("tokenhead.grid_intro", n=len(a.labels)))
    grid_key = (sel.name, sel.head_name, sel.text, sel.seed, method, token, quantity, baseline)
    grid = memo("attr_grid", grid_key)
    if grid is None:
        go = st.button(t("tokenhead.grid_run", n=len(a.labels)), key="attr_grid_run")
        try:  # a queued grid from an earlier run is picked up here even without a click
            grid = run_or_queue("attr_grid", grid_key, lambda p: every_label(
                ck, hd, sel.text, token, method, progress=p, quantity=quantity, baseline=baseline), running, stop,
                start=go, heavy=heavy, expected_s=10 * len(a.labels))
        except ExplorerError as err:
            error(err)
            return True
        if grid is not None:
            memo("attr_grid", grid_key, lambda done=grid: done)
    if grid is not None:
        chart(label_grid(grid.shown, grid.labels, grid.scores, grid.token,
                         t("tokenhead.grid_chart", token=grid.shown[grid.token], position=grid.token),
                         t("tokenhead.token_axis"), t("tokenhead.label_axis"), t("attributions.score_axis")),
              "attr_token_grid")
        worst = max((e for e in grid.errors if e is not None), default=None)
        if worst is not None:
            st.caption(t("tokenhead.grid_complete", error=100 * worst))
    return True


def _downloads(r, level: str, pieces, scores, legend: str) -> None:
    """The sentence page's two downloads for the explained token: the scores as CSV, the highlight as HTML."""
    import pandas as pd

    from explorer.explain import attribution as attr
    from explorer.text import plain as plain_text
    from explorer.text.highlight import highlight_html

    name = f"attributions-{r.method}-token{r.target_token}"
    d1, d2 = st.columns(2)
    d1.download_button(t("attributions.csv"), plain_text.csv_bytes(pd.DataFrame(attr.table(r, level))),
                       help=t("plain.csv_guard"), file_name=f"{name}.csv", mime="text/csv", key="attr_token_csv",
                       on_click="ignore")
    d2.download_button(t("attributions.html"), highlight_html(
        pieces, scores, title=f"{r.method}: {r.target_label} @ #{r.target_token}", legend=legend, standalone=True),
        file_name=f"{name}.html", mime="text/html", key="attr_token_html_dl", on_click="ignore")


def _faithfulness(a: TokenAnalysis, token: int, target: int, quantity: str, baseline: str) -> None:
    """The sentence page's faithfulness table for the explained token: every method's deletion curves, the
    token's own probability read wherever it moves (the token itself is never deleted)."""
    from explorer.explain import cost, faithfulness

    sel = selection()
    ck, hd = checkpoint(sel.name, sel.seed), head(sel.name, sel.head_name, sel.seed)
    heavy = cost.comparison_is_heavy(ck.model.config, len(a.tokens), 1, device=ck.model.device)
    st.subheader(t("attributions.faith_title"))
    st.caption(t("tokenhead.faith_intro"))
    key = (sel.name, sel.head_name, sel.text, sel.seed, token, target, quantity, baseline)
    faith = memo("faith_token", key)
    pressed = st.button(t("attributions.faith_run"), key="attr_token_faith_run")
    try:
        got = run_or_queue("faith_token", key, lambda p: faithfulness.compare_methods(
            ck, hd, sel.text, target, quantity, baseline, progress=p, target_token=token),
            t("attributions.running"), t("attributions.stop"), start=pressed, heavy=heavy, expected_s=30)
        faith = faith if got is None else memo("faith_token", key, lambda: got)
    except ExplorerError as err:
        error(err)
    if faith is not None:
        panels.faithfulness_table(faith)


TOKEN_METRICS = ("loss", "val_loss", "precision", "recall", "f1", "accuracy")  # finetune_tags' history keys


def is_tag_data(src) -> bool:
    """Is the data source (ui.DataSource) token data: a CoNLL file or a tokens/tags CSV?"""
    from explorer.data import tags

    try:
        return tags.layout(src.bytes, src.name) != "csv"
    except ExplorerError:
        return False


def token_finetune(src) -> bool:
    """The Fine-tune page on token data (the Data page's CoNLL file or tokens/tags CSV): a token head trained
    with finetune_tags (head mode on cached per-token features, or full mode with Trainer), with the sentence
    page's progress, Stop, kept epoch, session model and export; seqeval's entity metrics. The model joins the
    sidebar as a token classifier. False for sentence data (the page draws its own)."""
    if not is_tag_data(src):
        return False
    from explorer.train.finetune import LEARNING_RATES

    ss = st.session_state
    sel = selection()
    st.caption(t("tokenhead.ft_data", name=plain(src.title()), n=len(src.labels),
                 labels=plain(" ".join(src.labels[:16]))))
    c1, c2, c3 = st.columns(3)
    mode = c1.radio(t("finetune.mode"), ["head", "full"], format_func=lambda m: t(f"finetune.mode_{m}"),
                    **sticky("ft_mode", "head"))
    epochs = c2.number_input(t("finetune.epochs"), 1, 500, **sticky(f"ft_epochs_{mode}", 30 if mode == "head" else 3))
    lr = c3.select_slider(t("finetune.lr"), LEARNING_RATES, format_func=lambda v: f"{v:.0e}",
                          **sticky(f"ft_lr_{mode}", 1e-3 if mode == "head" else 5e-5))
    c4, c5 = st.columns(2)
    batch = c4.number_input(t("finetune.batch"), 1, 512, **sticky("ft_batch", 32))
    max_len = c5.number_input(t("finetune.max_length"), 8, 512, **sticky("ft_max_length", 128))
    early = st.checkbox(t("finetune.early"), help=t("finetune.early_help"), **sticky("ft_early", True))
    st.caption(t("tokenhead.ft_head"))
    job = ss.get("ft_job")  # an explorer.runtime.jobs.Job
    running = job is not None and not job.done
    settings = dict(mode=mode, head=sel.head_name, epochs=int(epochs), learning_rate=float(lr), batch_size=int(batch),
                    max_length=int(max_len), seed=sel.seed, early_stopping=early)
    b1, b2 = st.columns(2)
    b1.button(t("finetune.start"), key="ft_start", on_click=_start_tags, args=(src, settings), disabled=running,
              type="primary")
    b2.button(t("finetune.stop"), key="ft_stop", disabled=not running, on_click=lambda: ss["ft_job"].stop())
    if ss.get("ft_error"):
        error(ss["ft_error"])
    panels.finetune_job({k: t(f"finetune.metric_{k}") for k in TOKEN_METRICS}, running)
    return True


def _start_tags(src, options: dict) -> None:
    """Start button: read the tags, refuse in one line what cannot run (before a slot is taken), then train
    in the background; a sentence checkpoint's encoder gets a new token head, as the CLI does."""
    from explorer.data import tags
    from explorer.data.dataset import is_token_classifier
    from explorer.train.finetune import FinetuneError, Settings, check_size, session_name
    from explorer.train.finetune_tags import finetune_tags

    ss = st.session_state
    sel = selection()
    try:
        ck = checkpoint(sel.name, sel.seed)
        names = ck.model.config.id2label if is_token_classifier(ck) else None  # names numeric tags
        data = tags.read_tags(src.bytes, id2label=names, name=src.name)
        settings = Settings(**options)
        if settings.head != "own":  # the one head save_pretrained writes for a token classifier
            raise FinetuneError("finetune_own_head", native="own", head=settings.head)
        check_size(ck, settings, len(data.words))  # work and memory, before a slot is taken
    except ExplorerError as err:
        ss["ft_error"] = err
        return
    model_name = session_name(sel.name, settings.mode, src.short_name(), settings.epochs)
    try:  # one fine-tune per session: a second Start is refused and shows the first
        new = session.start_job("fine-tune", model_name, lambda progress, stop: finetune_tags(
            ck, data, settings, progress=progress, stop=stop, name=model_name),
            size=(f"tags-{settings.mode}", len(data.words) * settings.epochs))
    except ExplorerError as err:
        ss["ft_error"], ss["ft_job"] = err, getattr(err, "first", None) or ss.get("ft_job")
        return
    if new is None:
        ss["ft_error"] = t("safety.training_busy")
        return
    ss["ft_job"], ss["ft_total"] = new, settings.epochs
    ss.pop("ft_error", None)
