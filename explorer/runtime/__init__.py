"""Server-side resources without streamlit: settings, devices, byte budgets, session models, jobs, scratch space."""
