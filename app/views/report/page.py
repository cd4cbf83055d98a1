"""Report: the reporting checklist, rendered, with Markdown and JSON downloads and the verdicts'
(Parquet, JSONL)."""

import audit
from app import data
from app.views.report.downloads import checklist_view, downloads

pool = data.page_pool("Report")
doc = data.checklist(pool) | {"decisions": data.decisions(pool).to_dicts()}   # the decision in words, per cell
markdown = audit.checklist_markdown(doc)
downloads(pool, doc, markdown)
checklist_view(markdown)       # its tables in a grid that fits a 1280 px window
