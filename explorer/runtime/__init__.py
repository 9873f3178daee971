"""Server-side resources without streamlit: byte budgets, session models, background jobs, scratch space."""
