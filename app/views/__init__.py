"""The dashboard's pages: one folder a page, its script `page.py` beside the helpers only it uses
(what several pages share stays in `app/`)."""
