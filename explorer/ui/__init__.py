"""The streamlit side of the app, and the only package that imports streamlit. Its modules form a line, each
importing only those before it: session (owner, language, selection, widget values, session models and
jobs), render (literal text, one-line errors, tables, charts), cache (cached models, analyses and results),
running (ui.run: the one way a page runs work), classifier (the sidebar's analysis, whichever kind of
classifier), startup (ui.boot, the server process's one-time set-up); report and gate (the server's log lines,
the widget limits) stand apart. Pages import what they use from here, and draw through their own view module:
pages/<page>.py draws with explorer/ui/views/<page>.py."""
from explorer.ui.cache import (ANALYSES, analysis, cached_flow, checkpoint, current_analysis, current_head,
                               flow_work, head, memo, plotly_js_src, show_other_prompt, timed)
from explorer.ui.classifier import (PickedToken, current_classifier_analysis, current_token_analysis,
                                    current_vector_analysis, is_token_model)
from explorer.ui.render import (draw_chart, draw_example, draw_table, headers, keep_class_links, plain, prediction,
                                read_shared_link, run_guarded, show_error, show_evictions, show_link_notes, show_refused, step_label)
from explorer.ui.running import run, was_stopped
from explorer.ui.session import (JOBS, MODELS, OTHER, AppliedMapping, AuditRun, DataSource, ExplainRun, Selection,
                                 Upload, data_source, data_version, drop_data_versions, use_data_version,
                                 add_data_version, keep_widgets, lang,
                                 register_session_checkpoint, selection, session_checkpoint,
                                 session_checkpoint_names, session_zip, session_zip_ready, set_data_source,
                                 sticky, t, tn)
from explorer.ui.startup import boot

__all__ = ["ANALYSES", "AppliedMapping", "AuditRun", "DataSource", "ExplainRun", "JOBS", "MODELS", "OTHER",
           "PickedToken", "Selection", "Upload", "add_data_version", "analysis", "boot", "cached_flow", "checkpoint",
           "current_analysis", "current_classifier_analysis", "current_head", "current_token_analysis",
           "current_vector_analysis", "data_source", "data_version", "draw_chart", "draw_example", "draw_table",
           "drop_data_versions", "flow_work", "head", "headers", "is_token_model", "keep_class_links", "keep_widgets", "lang", "memo",
           "plain", "plotly_js_src", "prediction", "read_shared_link", "register_session_checkpoint", "run",
           "run_guarded", "selection", "session_checkpoint", "session_checkpoint_names", "session_zip",
           "session_zip_ready", "set_data_source", "show_error", "show_evictions", "show_link_notes", "show_other_prompt",
           "show_refused", "step_label", "sticky", "t", "timed", "tn",
           "use_data_version", "was_stopped"]
