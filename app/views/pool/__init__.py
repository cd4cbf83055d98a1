"""The Pool page (`page.py`, the script Streamlit runs) and the helpers only it uses."""
