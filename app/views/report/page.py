"""Report: the reporting checklist, rendered, with Markdown and JSON downloads and the verdicts'
(Parquet, JSONL); its decision per cell at the ±H and ε of the page's fields (kept in the address)."""

import audit
from app import data
from app.views.report.decision_fields import fields
from app.views.report.downloads import checklist_view, downloads

pool = data.page_pool("Report")
h, eps = fields()
doc = data.checklist(pool) | {"decisions": data.decisions(pool, h, eps).to_dicts()}   # the decision in words, per cell
markdown = audit.checklist_markdown(doc)
downloads(pool, doc, markdown)
checklist_view(markdown)       # its tables in a grid that fits a 1280 px window
