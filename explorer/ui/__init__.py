"""The streamlit side of the app, and the only package that imports streamlit. Its modules form a line, each
importing only those before it: session (owner, language, selection, widget values, session models and
jobs), render (literal text, one-line errors, tables, charts), cache (cached models, analyses and results),
running (ui.run: the one way a page runs work), datapage (the data pages' one shape: their head, their job on
the data, a row opened on another page), classifier (the sidebar's analysis, whichever kind of
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
from explorer.ui.datapage import (check_data, follow_open_row, keep_found, last_run, open_data_page, open_row,
                                  picked_row, run_on_data, run_or_stop)
from explorer.ui.session import (JOBS, MODELS, OTHER, AppliedMapping, DataRun, DataSource, Selection, Upload,
                                 add_data_version, data_source, data_version, drop_data_versions, file_source,
                                 keep_widgets, lang, register_session_checkpoint, selection, session_checkpoint,
                                 session_checkpoint_names, session_zip, session_zip_ready, set_data_source,
                                 set_sidebar_defaults, sticky, t, tn, use_data_version)
from explorer.ui.startup import boot

__all__ = ["ANALYSES", "AppliedMapping", "DataRun", "DataSource", "JOBS", "MODELS", "OTHER",
           "PickedToken", "Selection", "Upload", "add_data_version", "analysis", "boot", "cached_flow", "check_data",
           "checkpoint", "current_analysis", "current_classifier_analysis", "current_head", "current_token_analysis",
           "current_vector_analysis", "data_source", "data_version", "draw_chart", "draw_example", "draw_table",
           "drop_data_versions", "file_source", "flow_work", "follow_open_row", "head", "headers", "is_token_model",
           "keep_class_links", "keep_found", "keep_widgets", "lang", "last_run", "memo", "open_data_page", "open_row",
           "picked_row", "plain", "plotly_js_src", "prediction", "read_shared_link", "register_session_checkpoint",
           "run", "run_guarded", "run_on_data", "run_or_stop", "selection", "session_checkpoint",
           "session_checkpoint_names", "session_zip", "session_zip_ready", "set_data_source", "set_sidebar_defaults",
           "show_error", "show_evictions", "show_link_notes", "show_other_prompt", "show_refused", "step_label",
           "sticky", "t", "timed", "tn", "use_data_version", "was_stopped"]
