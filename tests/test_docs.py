"""The README is the front door and docs/ the house (DESIGN.md 'One word per thing, one door to the
database'): every `judgeaudit SUBCOMMAND ...` line they show still names a real subcommand and only
its real options (checked against the click CLI itself, `app.cli.cli`), every relative link between
the pages resolves, docs/command-line.md has a section for every subcommand naming all its options,
and the README stays under 300 lines.

The checker reads fenced code blocks line by line (a trailing backslash continues a line) and inline
code spans (which may wrap); shell comments are left out. A command is `judgeaudit SUB ...` (any
path ending in judgeaudit) or `python -m app.cli SUB ...`; `;`, `&&`, `||` and `&` end it, and so
does a `|` that pipes into another program (`| --study NAME` is an alternative in a synopsis). In
synopses, brackets and parentheses around options are read through: `[--replace]` is `--replace`.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import click
import pytest

from app.cli import cli

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
README_MAX_LINES = 300

FENCE = re.compile(r"^\s*(```|~~~)")
INLINE = re.compile(r"(?<!`)`([^`]+?)`(?!`)", re.DOTALL)
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
ENDS = {";", "&&", "||", "&"}


def pages() -> list[Path]:
    """The README and every page under docs/."""
    return [REPO / "README.md", *sorted(DOCS.rglob("*.md"))]


def code_lines(text: str) -> list[tuple[int, str]]:
    """(line number, text) of every command-like line: fenced block lines (continuations joined)
    and inline code spans (newlines inside a span become spaces)."""
    out: list[tuple[int, str]] = []
    inside, pending, pending_at = False, "", 0
    prose: list[tuple[int, str]] = []
    for number, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            inside = not inside
            continue
        if not inside:
            prose.append((number, line))
            continue
        if not pending:
            pending_at = number
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        out.append((pending_at, pending + line))
        pending = ""
    if pending:
        out.append((pending_at, pending))
    joined = "\n".join(line for _, line in prose)
    starts = [n for n, _ in prose]
    for match in INLINE.finditer(joined):
        out.append((starts[joined.count("\n", 0, match.start())], match.group(1).replace("\n", " ")))
    return out


def _tokens(line: str) -> list[str]:
    try:
        return shlex.split(line, comments=True)
    except ValueError:                      # an unbalanced quote in prose-like code: split on spaces
        return line.split("#", 1)[0].split()


def commands(line: str) -> list[list[str]]:
    """Each judgeaudit command on a line, as [subcommand, argument, ...]."""
    found: list[list[str]] = []
    current: list[str] | None = None
    tokens = _tokens(line)
    for i, raw in enumerate(tokens):
        ends = raw in ENDS or raw.endswith(";")
        piped = raw == "|" and not (i + 1 < len(tokens) and tokens[i + 1].lstrip("[(").startswith("-"))
        token = raw.rstrip(";")
        if current is not None and token and token not in ENDS and not piped:
            current.append(token)
        elif current is None and (Path(token).name == "judgeaudit"
                                  or (token == "app.cli" and i > 0 and tokens[i - 1] == "-m")):
            current = []
        if ends or piped:
            if current:
                found.append(current)
            current = None
    if current:
        found.append(current)
    return found


def option_names(command: click.Command) -> set[str]:
    """Every spelling of every option of a click command, --help included."""
    ctx = click.Context(command, info_name=command.name)
    names: set[str] = set()
    for param in command.get_params(ctx):
        if isinstance(param, click.Option):
            names.update(param.opts)
            names.update(param.secondary_opts)
    return names


def problems(argv: list[str], group: click.Group = cli) -> list[str]:
    """What is wrong with one documented command: an unknown subcommand, or an option the
    subcommand does not take. [] when it is right."""
    sub, rest = argv[0], argv[1:]
    if sub in ("-h", "--help"):
        return []
    command = group.commands.get(sub)
    if command is None:
        return [f"no subcommand {sub!r} (known: {', '.join(sorted(group.commands))})"]
    known = option_names(command)
    wrong = []
    for token in rest:
        word = token.strip("[](),")
        if not word.startswith("-") or word == "-" or re.fullmatch(r"-\d[\d.e-]*", word):
            continue
        name = word.split("=", 1)[0]
        if name not in known:
            wrong.append(f"judgeaudit {sub}: no option {name}")
    return wrong


def check_text(text: str) -> list[str]:
    """Every problem of every judgeaudit command in a page's text, as 'line N: ...'."""
    out = []
    for number, line in code_lines(text):
        for argv in commands(line):
            if argv:
                out += [f"line {number}: {p}" for p in problems(argv)]
    return out


def _without_code(text: str, inline: bool = True) -> str:
    """The page with its fenced blocks blanked, and its inline code too unless inline=False (links
    in code are not links; a heading keeps its code's text)."""
    kept, inside = [], False
    for line in text.splitlines():
        if FENCE.match(line):
            inside = not inside
            kept.append("")
            continue
        kept.append("" if inside else line)
    joined = "\n".join(kept)
    return INLINE.sub("", joined) if inline else joined


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation (backticks too) dropped, spaces to -."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for line in _without_code(path.read_text("utf-8"), inline=False).splitlines():
        m = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        base = slug(re.sub(r"`", "", m.group(1)))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def broken_links(path: Path) -> list[str]:
    """Relative links of a page that name no file or folder, or no heading of a .md page."""
    out = []
    for target in LINK.findall(_without_code(path.read_text("utf-8"))):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):   # http:, https:, mailto:
            continue
        file, _, anchor = target.partition("#")
        where = (path.parent / file).resolve() if file else path
        if not where.exists():
            out.append(f"{path.name}: {target} (no such file)")
        elif anchor and where.suffix == ".md" and anchor not in anchors(where):
            out.append(f"{path.name}: {target} (no such heading)")
    return out


def section(text: str, heading: str) -> str | None:
    """The text under a '### heading' line, up to the next heading of level 3 or above."""
    m = re.search(rf"^###\s+{re.escape(heading)}\s*$(.*?)(?=^#{{1,3}}\s|\Z)", text, re.MULTILINE | re.DOTALL)
    return m.group(1) if m else None


# --- the real pages ---

def test_the_docs_exist():
    for name in ("command-line", "metrics", "scale", "layout", "security", "glossary"):
        assert (DOCS / f"{name}.md").is_file(), name


@pytest.mark.parametrize("page", pages(), ids=lambda p: str(p.relative_to(REPO)))
def test_every_documented_command_exists_with_its_options(page):
    text = page.read_text("utf-8")
    found = [argv for _, line in code_lines(text) for argv in commands(line)]
    assert check_text(text) == []
    if page.name == "command-line.md":
        assert len(found) >= len(cli.commands)        # a page of commands whose commands were all found


def test_the_pages_show_every_subcommand_and_many_commands():
    shown = {argv[0] for page in pages() for _, line in code_lines(page.read_text("utf-8"))
             for argv in commands(line) if argv}
    assert set(cli.commands) <= shown


@pytest.mark.parametrize("page", pages(), ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_resolves(page):
    assert broken_links(page) == []


def test_the_command_line_page_names_every_option_of_every_subcommand():
    text = (DOCS / "command-line.md").read_text("utf-8")
    missing = []
    for name, command in sorted(cli.commands.items()):
        body = section(text, f"`judgeaudit {name}`")
        if body is None:
            missing.append(f"no section ### `judgeaudit {name}`")
            continue
        for option in sorted(option_names(command) - {"-h", "--help"}):
            if not re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", body):
                missing.append(f"judgeaudit {name}: {option} not shown")
    assert missing == []


def test_the_readme_is_the_front_door():
    text = (REPO / "README.md").read_text("utf-8")
    assert len(text.splitlines()) <= README_MAX_LINES
    assert "make app" in text and "make test" in text
    for name in ("command-line", "metrics", "scale", "layout", "security", "glossary"):
        assert f"(docs/{name}.md)" in text, name


# --- the checker itself, on deliberately wrong lines ---

def test_the_checker_catches_a_renamed_option_and_an_unknown_subcommand():
    good = "```sh\njudgeaudit score --pool p --judge fake:x --formats likert5 --concurrency 4\n```\n"
    assert check_text(good) == []
    wrong = good.replace("--concurrency", "--concurency")
    assert check_text(wrong) == ["line 2: judgeaudit score: no option --concurency"]
    assert check_text("```sh\njudgeaudit scoer --pool p\n```")[0].startswith("line 2: no subcommand 'scoer'")
    # an option of another subcommand is still wrong here: audit takes no --decoding
    assert check_text("text\n\n`judgeaudit audit --pool p --decoding greedy`") == \
        ["line 3: judgeaudit audit: no option --decoding"]


def test_the_checker_reads_synopses_continuations_chains_and_comments():
    text = ("```sh\n"
            "judgeaudit import-pool pool.jsonl --pool mypool [--replace]   # or --nonsense in a comment\n"
            "judgeaudit contrasts (--outcomes FILE.jsonl | --study NAME) [--boot 10000]\n"
            "judgeaudit score --pool p --judge fake:x \\\n"
            "    --formats binary --decoding greedy|constrained --swap-sample=all\n"
            "judgeaudit runs --json; judgeaudit cancel 7 --wait 5 && judgeaudit pools --json | jq -r .\n"
            "accelerate launch --num_processes 2 -m app.cli train --subset s.jsonl --base local:smollm2\n"
            "```\n")
    assert check_text(text) == []
    found = [argv[0] for _, line in code_lines(text) for argv in commands(line)]
    assert found == ["import-pool", "contrasts", "score", "runs", "cancel", "pools", "train"]
    broken = text.replace("[--boot 10000]", "[--boots 10000]").replace("--wait 5", "--wiat 5") \
                 .replace("--swap-sample=all", "--swap-samples=all").replace("--base local", "--bsae local")
    assert check_text(broken) == ["line 3: judgeaudit contrasts: no option --boots",
                                  "line 4: judgeaudit score: no option --swap-samples",
                                  "line 6: judgeaudit cancel: no option --wiat",
                                  "line 7: judgeaudit train: no option --bsae"]


def test_an_inline_span_may_wrap_and_keeps_the_line_it_starts_on():
    text = "one\ntwo (`judgeaudit score --pool p --judge-name\nx --formatz likert5`) three\n"
    assert check_text(text) == ["line 2: judgeaudit score: no option --formatz"]


def test_the_link_checker_finds_a_missing_page_and_a_missing_heading(tmp_path):
    (tmp_path / "a.md").write_text("# A\n\n## Two words\n\nSee [b](b.md), [two](#two-words), [up](.).\n"
                                   "`[not a link](nowhere.md)`\n\n### `judgeaudit drift`\n\n"
                                   "```md\n## Not a heading\n[not a link](nowhere.md)\n```\n")
    (tmp_path / "b.md").write_text("# B\n\n[a](a.md#two-words) [gone](c.md) [bad](a.md#three-words) "
                                   "[web](https://example.org/x.md) [cmd](a.md#judgeaudit-drift) "
                                   "[code](a.md#not-a-heading)\n")
    assert broken_links(tmp_path / "a.md") == []
    assert broken_links(tmp_path / "b.md") == ["b.md: c.md (no such file)",
                                               "b.md: a.md#three-words (no such heading)",
                                               "b.md: a.md#not-a-heading (no such heading)"]


def test_slug_follows_github():
    assert slug("Past one machine (`score --batch-out`, `import-batch`)".replace("`", "")) == \
        "past-one-machine-score---batch-out-import-batch"
    assert slug("Curate & Train") == "curate--train"
