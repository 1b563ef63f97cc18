"""The README and the manual (``docs/*.md``) run as written: a newcomer copies a block into a file and runs it.

Everything below holds for README.md and for every ``docs/*.md`` page alike (a page without blocks is checked for its
names and links); "the docs" means all of them.

- **Every ```python block runs on its own** as a plain script, ``python block.py``, in a fresh temporary folder
  that is its working directory, in a process of its own, under a timeout. So each block is self-contained: its
  own imports, and what it writes goes under that folder (``out/...``, ``videos/``). On the way, the docs'
  comments that state a shape and dtype (``obs["front/rgb"]   # (84, 84, 3) uint8``) or a dict literal are checked
  against the value of the expression they comment (the expression is wrapped in a check on the same line, so
  line numbers in a traceback are the block's).
- **Command lines that follow a block run after it, in its folder.** The ``pixelrig ...`` lines of the ```bash
  blocks between a python block and the next one on the same page run right after that block, in its folder, with
  the docs' rig files written there: they may use what the block wrote (``pixelrig replay out/push ...`` after the
  block that records ``out/push``). ``pixelrig serve`` and ``view`` run until stopped, so the test adds
  ``--steps 5``, and to ``serve`` ``--fast`` and ``--port 0`` (a free port). Other command lines (make, ssh, pip)
  are not run.
- **A block that opens a window** (HumanWindow, ``render_mode="human"``, a ``pixelrig view`` line) runs under Xvfb
  (skipped, with the reason, only where Xvfb is missing); every other block runs with no DISPLAY, as on a headless
  node. A block that needs Ray is skipped with the reason.
- **Rig files** (```toml blocks with ``[[cameras]]``, ```json blocks with ``"cameras"``) are loaded with
  :func:`pixelrig.cameras.rigfile.load_rig` against every env the docs use them with, and every ``--cams FILE``
  in the docs names one of them.
- **Names**: every exception the docs name is importable from ``pixelrig``; every ``pixelrig.<name>`` resolves;
  every signature the docs show in bold (``**`Camera(name, *, width=84, ...)`**``) matches the real one; and
  every public callable of ``pixelrig`` shows its real parameters (no ``*args, **kwargs`` facade).
- **An introduction and its manual**: README.md has at most :data:`README_MAX_LINES` lines and links every
  ``docs/*.md`` page; every relative link and image of the docs names a file that exists (and a heading of it, for
  a ``#anchor``); the benchmark's figures (``docs/benchmark.md``'s tables and the README's headline) are rendered
  from ``docs/bench.json``.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import inspect
import io
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import textwrap
import time
import tokenize
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = [README, *sorted((ROOT / "docs").glob("*.md"))]
"""README.md first, then the manual's pages."""
TEXTS = {path: path.read_text() for path in DOCS}
README_MAX_LINES = 300


def rel(path: Path) -> str:
    """A doc's path as the messages give it (``README.md``, ``docs/looks.md``)."""
    return path.relative_to(ROOT).as_posix()


BLOCK_TIMEOUT_S = 180
"""Per python block and per command line (the slowest block takes a few seconds on 2 cores)."""


@dataclass
class Block:
    """A fenced code block of a doc."""

    lang: str
    body: str  # dedented
    line: int  # the doc's line of its first code line
    section: str  # the heading it sits under
    path: Path = README  # the doc it is in

    @property
    def where(self) -> str:
        """``docs/looks.md line 42``: where its first code line is."""
        return f"{rel(self.path)} line {self.line}"

    def code_lines(self) -> list[str]:
        """Its command lines, comments and continuation-free (bash blocks hold one command per line)."""
        return [ln for ln in self.body.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]


@dataclass
class Scenario:
    """A python block and the ``pixelrig`` command lines that follow it, run in one folder in that order."""

    block: Block
    commands: list[tuple[int, str]] = field(default_factory=list)  # (the doc's line, command line)

    @property
    def id(self) -> str:
        slug = re.sub(r"[^a-z0-9]+", "-", self.block.section.lower()).strip("-")[:40]
        return f"{self.block.path.stem}-L{self.block.line}-{slug}"


def doc_blocks(path: Path) -> list[Block]:
    """Every fenced block with a language in one doc, in order (indented ones, inside list items, included)."""
    text = TEXTS[path]
    blocks = []
    for m in re.finditer(r"^( *)```(\w+)\n(.*?)^ *```", text, flags=re.S | re.M):
        before = text[:m.start()]
        headings = re.findall(r"^#+ (.+)$", before, flags=re.M)
        blocks.append(Block(m.group(2), textwrap.dedent(m.group(3)), before.count("\n") + 2,
                            headings[-1] if headings else "top", path))
    return blocks


def all_blocks() -> list[Block]:
    """Every doc's blocks, the README's first."""
    return [block for path in DOCS for block in doc_blocks(path)]


def scenarios() -> list[Scenario]:
    """Each python block with the ``pixelrig`` lines of the bash blocks after it on its page (up to the next python
    block); a command before a page's first python block runs nowhere (it needs what no block of that page made)."""
    out: list[Scenario] = []
    for path in DOCS:
        page: list[Scenario] = []
        for block in doc_blocks(path):
            if block.lang == "python":
                page.append(Scenario(block))
            elif block.lang == "bash" and page:
                for i, line in enumerate(block.body.splitlines()):
                    if line.startswith("pixelrig "):
                        page[-1].commands.append((block.line + i, line))
        out += page
    return out


def needs_display(code: str) -> bool:
    """Whether python code opens a window."""
    return any(s in code for s in ("HumanWindow(", 'render_mode="human"'))


def needs_ray(code: str) -> bool:
    """Whether python code starts Ray."""
    return bool(re.search(r"^\s*(import ray|from ray)\b|rllib", code, flags=re.M))


# --- the README's comments on values, checked --------------------------------------------------------------------

CHECK_MODULE = '''\
"""The docs' comments on values, checked (written by tests/test_readme.py beside the block it runs)."""


def check(value, claim, where):
    kind, expected = claim
    if kind == "shape":
        shape, dtype = expected
        got = (tuple(getattr(value, "shape", ())), str(getattr(value, "dtype", type(value).__name__)))
        assert got == (tuple(shape), dtype), f"{where} says {shape} {dtype}; the value is {got[0]} {got[1]}"
    else:
        assert value == expected, f"{where} says {expected!r}; the value is {value!r}"
    return value
'''

SHAPE_CLAIM = re.compile(r"#\s*\((\d+(?:, \d+)*,?)\)\s+(uint8|int32|int64|float32|float64|bool)\b")
DICT_CLAIM = re.compile(r"#\s*(\{.*\})\s*$")


def claims(body: str) -> dict[int, tuple[str, Any]]:
    """{block line (1-based): claim} for each one-line bare expression whose comment states its value."""
    comments = {tok.start[0]: tok.string for tok in tokenize.generate_tokens(io.StringIO(body).readline)
                if tok.type == tokenize.COMMENT}
    found = {}
    for node in ast.parse(body).body:
        if not isinstance(node, ast.Expr) or node.lineno != node.end_lineno or node.lineno not in comments:
            continue
        comment = comments[node.lineno]
        if m := SHAPE_CLAIM.match(comment):
            found[node.lineno] = ("shape", (ast.literal_eval(f"({m.group(1)})"), m.group(2)))
        elif m := DICT_CLAIM.match(comment):
            try:
                found[node.lineno] = ("equal", ast.literal_eval(m.group(1)))
            except (ValueError, SyntaxError):
                pass  # words, not a literal
    return found


def with_checks(block: Block) -> str:
    """The block with each commented value wrapped in ``_readme.check(...)``, line numbers kept."""
    found = claims(block.body)
    lines = block.body.splitlines()
    tree = ast.parse(block.body)
    for node in tree.body:
        if node.lineno in found:
            expr = ast.get_source_segment(block.body, node.value)
            line = lines[node.lineno - 1]
            start = line.index(expr)
            where = f"{rel(block.path)} line {block.line + node.lineno - 1}"
            lines[node.lineno - 1] = (f"{line[:start]}_readme.check({expr}, {found[node.lineno]!r}, {where!r})"
                                      f"{line[start + len(expr):]}")
    first = next(i for i, ln in enumerate(lines) if ln.strip() and not ln.startswith("#"))
    assert not lines[first].startswith("from __future__"), f"{block.where}: a block starts with a __future__ import"
    lines[first] = f"import readme_check as _readme; {lines[first]}"
    return "\n".join(lines) + "\n"


def test_the_readme_comments_the_test_checks() -> None:
    """The comment checks find the docs' claims (so that a rewording does not silently drop them), the tour's among
    them."""
    found = [c for b in all_blocks() if b.lang == "python" for c in claims(b.body).values()]
    shapes = [c for c in found if c[0] == "shape"]
    assert len(shapes) >= 8, found
    tour = [c for b in doc_blocks(README) if b.lang == "python" for c in claims(b.body).values()]
    assert ("shape", ((84, 84, 3), "uint8")) in tour, "the README's tour lost its checked obs['front/rgb'] comment"
    assert any(c[0] == "equal" and isinstance(c[1], dict) for c in tour), "the label_names dict is not checked"


# --- running blocks ----------------------------------------------------------------------------------------------


def run(argv: list[str], cwd: Path, display: str | None, what: str) -> float:
    """Run ``argv`` in ``cwd`` (its own process group, killed whole on timeout); fail naming ``what`` unless it
    exits 0. Returns the seconds it took."""
    env = dict(os.environ)
    env.pop("DISPLAY", None)
    if display:
        env["DISPLAY"] = display
    start = time.monotonic()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=BLOCK_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        pytest.fail(f"{what} ran past {BLOCK_TIMEOUT_S} s; its output ends:\n{out[-4000:]}")
    if proc.returncode != 0:
        pytest.fail(f"{what} exited with {proc.returncode}; its output ends:\n{out[-4000:]}")
    return time.monotonic() - start


def bounded(command: str) -> list[str]:
    """A docs' command line as argv for this Python (``python -m pixelrig``), bounded where it would run until
    Ctrl-C or a closed window: ``serve`` and ``view`` get ``--steps 5`` (unless they say), ``serve`` also
    ``--fast`` and a free port."""
    argv = shlex.split(command, comments=True)
    assert argv[0] == "pixelrig", command
    if argv[1] in ("serve", "view") and "--steps" not in argv:
        argv += ["--steps", "5"]
    if argv[1] == "serve":
        if "--port" in argv:
            argv[argv.index("--port") + 1] = "0"
        else:
            argv += ["--port", "0"]
        argv += ["--fast"]
    return [sys.executable, "-m", "pixelrig", *argv[1:]]


SCENARIOS = scenarios()


def test_the_readme_has_its_blocks() -> None:
    assert len(SCENARIOS) >= 10, "the docs lost their code"
    assert any(s.block.path == README for s in SCENARIOS), "the README lost its tour"
    assert any("pixelrig replay" in c for s in SCENARIOS for _, c in s.commands), "the replay command line is gone"


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.id for s in SCENARIOS])
def test_python_block_runs_as_a_script(scenario: Scenario, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """The block, saved as block.py, runs with ``python block.py`` in an empty folder; then the command lines that
    follow it run in that folder (see the module docstring)."""
    block = scenario.block
    commands = [(line, command, bounded(command)) for line, command in scenario.commands]
    if needs_ray(block.body):
        pytest.skip(f"{block.where}: needs Ray, which these tests do not start")
    windows = needs_display(block.body) or any(argv[3] == "view" for _, _, argv in commands)
    display = request.getfixturevalue("xvfb") if windows else None
    (tmp_path / "readme_check.py").write_text(CHECK_MODULE)
    (tmp_path / "block.py").write_text(with_checks(block))
    times = [run([sys.executable, "block.py"], tmp_path, display, f"the python block at {block.where}")]
    for name, _, text in rig_files():
        (tmp_path / name).write_text(text)
    for line, command, argv in commands:
        times.append(run(argv, tmp_path, display, f"{rel(block.path)} line {line}: {command!r}"))
    print(f"{block.where} ({block.section}): " + " + ".join(f"{s:.1f} s" for s in times))


# --- rig files ---------------------------------------------------------------------------------------------------

ENV_ID = re.compile(r"\bpixelrig/[A-Za-z0-9]+-v\d+\b")


def rig_files() -> list[tuple[str, Block, str]]:
    """(file name, block, text) of every rig file the docs show: a TOML block names its file in its first
    comment (``# rig.toml: ...``); a JSON block (no comments in JSON) is ``rig.json``."""
    out = []
    for block in all_blocks():
        if block.lang == "toml" and re.search(r"^\[\[cameras\]\]", block.body, flags=re.M):
            m = re.match(r"#\s*([\w.-]+\.toml)\b", block.body)
            assert m, f"{block.where}: a rig file block must start with '# <name>.toml: ...'"
            out.append((m.group(1), block, block.body))
        elif block.lang == "json" and '"cameras"' in block.body:
            out.append(("rig.json", block, block.body))
    names = [name for name, _, _ in out]
    assert len(names) == len(set(names)), f"two rig files in the docs share a name: {names}"
    return out


def rig_uses() -> dict[str, set[str]]:
    """{rig file name: the env ids the docs use it with}: on command lines with ``--cams NAME`` and in the
    file's own first comment."""
    uses: dict[str, set[str]] = {name: set(ENV_ID.findall(block.body.splitlines()[0])) if block.lang == "toml"
                                 else set() for name, block, _ in rig_files()}
    for path in DOCS:
        for line in TEXTS[path].splitlines():
            for name in re.findall(r"--cams\s+([\w.-]+\.(?:toml|json))\b", line):
                assert name in uses, f"{rel(path)} uses {name} ({line.strip()!r}) but no doc shows such a rig file"
                uses[name] |= set(ENV_ID.findall(line))
    return uses


def test_the_readme_shows_its_rig_file() -> None:
    assert rig_files(), "the docs show no rig file"
    for name, envs in rig_uses().items():
        assert envs, f"rig file {name}: no env uses it (name one on its first comment line)"


@pytest.mark.parametrize("name", [name for name, _, _ in rig_files()])
def test_readme_rig_file_fits_its_envs(name: str, tmp_path: Path) -> None:
    """The rig file, written to disk and loaded as ``--cams`` loads it, renders on every env the docs use it
    with (a mount names a link that env has)."""
    import gymnasium as gym

    import pixelrig  # noqa: F401 (registers the ids)
    from pixelrig import PixelObs
    from pixelrig.cameras.rigfile import load_rig

    text = next(text for n, _, text in rig_files() if n == name)
    (tmp_path / name).write_text(text)
    cams = load_rig(tmp_path / name)
    for env_id in sorted(rig_uses()[name]):
        env = PixelObs(gym.make(env_id), cams=cams)
        try:
            obs, _ = env.reset(seed=0)
            for cam in cams:
                for modality in cam.modalities:
                    image = obs[f"{cam.name}/{modality}"]
                    assert image.shape[:2] == (cam.height, cam.width), (env_id, cam.name, modality)
        finally:
            env.close()


# --- names -------------------------------------------------------------------------------------------------------


def test_every_exception_the_readme_names_is_importable_from_pixelrig() -> None:
    import pixelrig

    named = {(name, rel(path)) for path in DOCS
             for name in set(re.findall(r"\b([A-Z]\w*(?:Error|Unavailable))\b", TEXTS[path])) - set(dir(builtins))}
    assert {"DisplayUnavailable", "RendererUnavailable", "PortInUseError"} <= {name for name, _ in named}
    for name, where in sorted(named):
        assert name in pixelrig.__all__, f"{where} names {name}: export it from pixelrig (pixelrig/errors.py)"
        assert issubclass(getattr(pixelrig, name), Exception), name


def resolve(dotted: str) -> Any:
    """``pixelrig.a.b`` or ``a.b`` (relative to ``pixelrig``), attribute by attribute as a user's code reaches it,
    importing a submodule where a package has no such attribute yet."""
    parts = dotted.removeprefix("pixelrig.").split(".")
    obj: Any = importlib.import_module("pixelrig")
    for part in parts:
        try:
            obj = getattr(obj, part)
        except AttributeError:
            if not inspect.ismodule(obj):
                raise
            obj = importlib.import_module(f"{obj.__name__}.{part}")
    return obj


def test_every_pixelrig_name_in_the_readme_resolves() -> None:
    names = sorted({(name, rel(path)) for path in DOCS
                    for name in re.findall(r"`[^`\n]*?\b(pixelrig(?:\.[A-Za-z_]\w*)+)", TEXTS[path])})
    assert "pixelrig.datasets.replay" in {name for name, _ in names}
    problems = []
    for name, where in names:
        try:
            resolve(name)
        except (AttributeError, ModuleNotFoundError) as exc:
            problems.append(f"{where} names {name}, which does not exist: {exc}")
    assert not problems, "\n".join(problems)


def split_params(text: str) -> list[str]:
    """Top-level comma-separated pieces of a parameter list (brackets and quotes kept whole)."""
    pieces, depth, quote, current = [], 0, "", ""
    for ch in text:
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            pieces.append(current.strip())
            current = ""
            continue
        current += ch
    if current.strip():
        pieces.append(current.strip())
    return pieces


def readme_signatures() -> list[tuple[str, str]]:
    """(name, parameter list) of every ``Name(params)`` code span the docs show in bold (the API listings); bold is
    paired within each page."""
    out = []
    for bold in [b for path in DOCS for b in re.findall(r"\*\*(.+?)\*\*", TEXTS[path], flags=re.S)]:
        for code in re.findall(r"`([^`]+)`", bold):
            m = re.fullmatch(r"([A-Za-z_][\w.]*)\((.*)\)(?:\s*->.*)?", " ".join(code.split()))
            if m:
                out.append((m.group(1), m.group(2)))
    return out


def literal(text: str) -> Any:
    """The default the docs show, or ``...`` when it is not one Python literal (``"mp4"|"gif"``, ``...``)."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return ...


def test_the_signatures_the_readme_shows_are_real() -> None:
    """Names, order, keyword-only markers and defaults of every bold ``Name(...)`` in the docs."""
    shown = readme_signatures()
    assert {"Camera", "PixelObs", "CameraRig", "BrowserView"} <= {name for name, _ in shown}
    problems = []
    for name, params in shown:
        real = inspect.signature(resolve(name))
        real_params = {k: p for k, p in real.parameters.items() if k not in ("self", "cls")}
        order = list(real_params)
        names, keyword_only = [], False
        for piece in split_params(params):
            if piece == "*":
                keyword_only = True
                continue
            if piece == "...":
                continue
            pname, _, default = piece.partition("=")
            pname = pname.strip()
            if pname not in real_params:
                problems.append(f"{name}({params}): no parameter {pname!r}; the real one is {name}{real}")
                continue
            names.append(pname)
            param = real_params[pname]
            if (keyword_only or not default) and (param.kind is param.KEYWORD_ONLY) != keyword_only:
                problems.append(f"{name}: {pname} is {param.kind.description} in {name}{real}")
            shown_default = literal(default.strip()) if default else ...
            if shown_default is not ... and shown_default != param.default:
                problems.append(f"{name}: {pname}={default.strip()} shown, the default is {param.default!r}")
        if names != sorted(names, key=order.index):
            problems.append(f"{name}({params}): parameters out of order; the real one is {name}{real}")
        missing = [k for k, p in real_params.items() if p.default is p.empty
                   and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and k not in names]
        if missing:
            problems.append(f"{name}({params}): required {missing} not shown; the real one is {name}{real}")
    assert not problems, "\n".join(problems)


def test_public_names_show_their_real_signatures() -> None:
    """Every class and function in ``pixelrig.__all__`` shows its parameters to ``inspect.signature`` (and so to
    help() and IDEs): no ``*args, **kwargs`` facade, and a class's signature is its ``__init__``'s."""
    import pixelrig

    problems = []
    for name in pixelrig.__all__:
        obj = getattr(pixelrig, name)
        if not callable(obj) or (isinstance(obj, type) and issubclass(obj, BaseException)):
            continue  # the version string; exceptions take a message
        sig = inspect.signature(obj)
        var = [p.name for p in sig.parameters.values() if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        if var:
            problems.append(f"pixelrig.{name}{sig}: {var} hide its parameters")
        if isinstance(obj, type):
            init = list(inspect.signature(obj.__init__).parameters.values())[1:]
            shown = [(p.name, p.kind, p.default) for p in sig.parameters.values()]
            if shown != [(p.name, p.kind, p.default) for p in init]:
                problems.append(f"pixelrig.{name}{sig} differs from its __init__{inspect.signature(obj.__init__)}")
    assert not problems, "\n".join(problems)


def test_benchmark_block_is_rendered_from_the_committed_json() -> None:
    """Every figure of the benchmark page's block, and of the README's headline, comes from docs/bench.json (a run's
    output), and the generator writes them where they are."""
    from pixelrig.tools.bench.report import END, HEADLINE_END, HEADLINE_START, PAGE, START, render, render_headline
    from pixelrig.tools.bench.report import README as HEADLINE_PAGE

    report = json.loads((ROOT / "docs" / "bench.json").read_text())
    stale = "is stale: python -m pixelrig.tools.bench.report"
    for path, start, end, expected in ((ROOT / PAGE, START, END, render(report)),
                                       (ROOT / HEADLINE_PAGE, HEADLINE_START, HEADLINE_END, render_headline(report))):
        text = path.read_text()
        assert text.count(start) == 1 and text.count(end) == 1, f"{rel(path)}: one generated benchmark block, please"
        block = text[text.index(start) + len(start):text.index(end)].strip()
        assert block == expected.strip(), f"{rel(path)}'s benchmark block {stale}"
    headline = render_headline(report)
    assert f"Measured on **{report['date']}**: {report['machine']}" in headline, "the headline names date and machine"


def test_benchmark_generator_rewrites_both_blocks(tmp_path: Path) -> None:
    """``python -m pixelrig.tools.bench.report`` rewrites the page's block and the README's headline from the JSON
    and leaves the rest of each file alone."""
    from pixelrig.tools.bench.report import PAGE, main
    from pixelrig.tools.bench.report import README as HEADLINE_PAGE

    for path in (PAGE, HEADLINE_PAGE):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text((ROOT / path).read_text())
    report = json.loads((ROOT / "docs" / "bench.json").read_text())
    report["date"] = "1999-01-01"
    (tmp_path / "bench.json").write_text(json.dumps(report))
    assert main(["--json", str(tmp_path / "bench.json"), "--root", str(tmp_path)]) == 0
    for path in (PAGE, HEADLINE_PAGE):
        before, after = (ROOT / path).read_text(), (tmp_path / path).read_text()
        assert "Measured on **1999-01-01**" in after and "Measured on **1999-01-01**" not in before, path
        assert after.replace("1999-01-01", report_date()) == before, f"{path}: only the generated block changes"


def report_date() -> str:
    """The committed benchmark's date."""
    return json.loads((ROOT / "docs" / "bench.json").read_text())["date"]


# --- an introduction and its manual ------------------------------------------------------------------------------

LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
"""A Markdown link or image, ``[text](target)`` / ``![alt](target "title")``: group 1 is the target."""


def unfenced(text: str) -> str:
    """The doc without its fenced blocks (a ``#`` there is a comment, not a heading), lines kept."""
    return re.sub(r"^( *)```.*?^ *```", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S | re.M)


def prose(text: str) -> str:
    """The doc without its fenced blocks and code spans (where brackets are code, not links), lines kept."""
    return re.sub(r"`[^`\n]*`", "``", unfenced(text))


def links(path: Path) -> list[tuple[int, str]]:
    """(line, target) of every link and image in a doc's prose."""
    text = prose(TEXTS[path])
    return [(text[:m.start()].count("\n") + 1, m.group(1)) for m in LINK.finditer(text)]


def anchors(path: Path) -> set[str]:
    """The anchors GitHub makes for a doc's headings: lower case, punctuation but ``-`` and ``_`` dropped, spaces to
    ``-``, repeats numbered."""
    seen: dict[str, int] = {}
    out = set()
    for heading in re.findall(r"^#{1,6} +(.+?) *#*$", unfenced(path.read_text()), flags=re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def test_the_readme_is_an_introduction_that_links_the_manual() -> None:
    """README.md is read in five minutes (at most README_MAX_LINES lines) and reaches every page of the manual."""
    lines = TEXTS[README].count("\n")
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines; at most {README_MAX_LINES}: move text to docs/"
    linked = {(README.parent / target.split("#")[0]).resolve() for _, target in links(README)}
    pages = [path for path in DOCS if path != README]
    assert len(pages) >= 10, pages
    missing = [rel(path) for path in pages if path.resolve() not in linked]
    assert not missing, f"README.md does not link {missing}: a newcomer could not find them"


@pytest.mark.parametrize("path", DOCS, ids=[rel(p) for p in DOCS])
def test_relative_links_and_images_point_to_existing_files(path: Path) -> None:
    """Every relative link and image of the doc names a file of the repository, and a ``#anchor`` one of the
    headings of the page it names (text moved between pages keeps its links working)."""
    problems = []
    found = links(path)
    for line, target in found:
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
            continue
        file, _, anchor = target.partition("#")
        dest = (path.parent / file).resolve() if file else path
        if not dest.exists():
            problems.append(f"{rel(path)} line {line}: {target} names a missing file")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            problems.append(f"{rel(path)} line {line}: {target}: {dest.name} has no heading #{anchor} "
                            f"(it has {sorted(anchors(dest))})")
        elif not dest.resolve().is_relative_to(ROOT):
            problems.append(f"{rel(path)} line {line}: {target} leaves the repository")
    assert not problems, "\n".join(problems)
    if path == README:
        assert any(t.endswith(".png") for _, t in found), "the README shows no picture of the rig's output"


def test_the_readme_env_table_lists_every_registered_id() -> None:
    """The README's env table has one row per registered ``pixelrig/...`` id, no more, no less."""
    import gymnasium as gym

    import pixelrig  # noqa: F401 (registers the ids)

    section = TEXTS[README].split("\n## Environments\n", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `(pixelrig/[\w-]+)` \|", section, flags=re.M)
    registered = sorted(k for k in gym.registry if k.startswith("pixelrig/"))
    assert len(rows) == len(set(rows)), f"an id has two rows: {rows}"
    assert sorted(rows) == registered, (f"README's env table: missing {sorted(set(registered) - set(rows))}, "
                                        f"not registered {sorted(set(rows) - set(registered))}")
