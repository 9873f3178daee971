"""The streamlit side of the app, and the only package that imports streamlit. Its modules form a line, each
importing only those before it: session (owner, language, selection, widget values, session models and
jobs), render (literal text, one-line errors, tables, asks before costly work, progress with Stop, the
queue line), cache (cached models, analyses and results), panels (sections of the longer pages),
token_view, explain_view, encoder_view (the attention views), token_pages (a token classifier on the Pooled and
encoder pages), lesson_view (the guided lesson's steps, presenter view's layout); report (the server's log lines)
stands apart. Pages import what they use from here."""
from explorer.ui import encoder_view, lesson_view, panels, token_pages
from explorer.ui.cache import (ANALYSES, analysis, cached_flow, checkpoint, current_analysis, current_head,
                               flow_work, other_prompt, head, memo, plotly_js_src, timed)
from explorer.ui.render import (cancelled, chart, confirmed, costly_job, error, guarded, headers, plain,
                                prediction, queued, run_or_queue, show_evictions, show_refused, step_label, table, with_progress)
from explorer.ui.session import (JOBS, MODELS, OTHER, AppliedMapping, AuditRun, DataSource, ExplainRun, Selection,
                                 Upload, data_source, data_version, drop_data_versions, use_data_version,
                                 add_data_version, keep_widgets, lang, progress_to,
                                 register_session_checkpoint, selection, session_checkpoint,
                                 session_checkpoint_names, session_zip, session_zip_ready, set_data_source,
                                 start_job, sticky, stop_if_gone, t, tn)
from explorer.ui.startup import boot

__all__ = ["ANALYSES", "JOBS", "MODELS", "OTHER", "AppliedMapping", "AuditRun", "DataSource", "ExplainRun",
           "Selection", "Upload", "analysis", "boot", "cached_flow", "cancelled", "chart", "checkpoint", "confirmed",
           "costly_job", "flow_work", "current_analysis", "current_head", "other_prompt",
           "data_source", "error", "guarded", "headers", "encoder_view", "keep_widgets", "lang", "lesson_view", "memo",
           "panels", "plain",
           "data_version", "drop_data_versions", "use_data_version", "add_data_version",
           "plotly_js_src", "prediction", "progress_to", "queued", "run_or_queue", "register_session_checkpoint", "selection",
           "session_checkpoint",
           "session_checkpoint_names", "session_zip", "session_zip_ready", "set_data_source", "show_evictions", "show_refused",
           "start_job",
           "step_label", "sticky", "stop_if_gone", "t", "table", "timed", "tn", "token_pages", "with_progress"]

