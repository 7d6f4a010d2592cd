"""Quality benchmark: scribed's real pipeline vs generic summarizers, scored by string matching.

Run: ``python bench/quality.py [--json] [--backend extractive|llm|auto] [--seed N] [--sessions N]``
(``llm``/``auto`` need ``--llm-url`` or ``SCRIBED_REAL_LLM_URL``; see ``scripts/local-llm``).

It generates seeded sessions in all four transcript formats (``bench/gen.py``), writes them into
a temporary squad root, runs :meth:`scribed.core.scribe.Scribe.run_once` on it (``--force``, so
quiet time does not matter), and scores every cold entry against the session's ground truth.
The peers (head, head+tail truncation, sumy LexRank and TextRank) get the same sessions as
plain ``role: text`` lines (what a user would feed them, unredacted) and the same byte budget:
each session's scribed entry size. Everything is pure string matching, so the numbers are
reproducible and explainable; ``failures`` lists concrete misses for the owners to fix.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import re
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for _p in (ROOT, ROOT / "bench"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

import gen  # noqa: E402

from scribed import config as config_mod  # noqa: E402
from scribed import log as log_mod  # noqa: E402
from scribed.compress import entry as entry_mod  # noqa: E402
from scribed.core.results import RunReport  # noqa: E402
from scribed.core.scribe import Scribe  # noqa: E402
from scribed.session.redact import redact  # noqa: E402

TYPES = ("decision", "path", "identifier", "error", "command", "number", "issue", "todo", "directive")
WEIGHTS = {"decision": 2.0, "path": 2.0, "todo": 2.0}
PEERS = ("head", "headtail", "lexrank", "textrank")
KEYS = (
    "recall",
    "weighted_recall",
    "weighted_recall_recognised",
    "ratio",
    "stale_leaks",
    "todo_state_errors",
    "invented_rate",
    "secret_leaks",
    "lookalike_kept",
    "provenance_coverage",
)

# --- helpers --------------------------------------------------------------------------------

_WS = re.compile(r"\s+")
_URL = re.compile(r"\w+://\S*")
_PATHISH = re.compile(r"(?<![\w/.-])(?:~|\.{1,2})?/?(?:[\w@.+-]+/)+[\w.+-]+\.[A-Za-z0-9]{1,8}(?![\w/])")
_BACKTICK = re.compile(r"`([^`\n]{2,80})`")
_IDENTISH = re.compile(r"[A-Za-z_][\w]*(?:(?:\.|::)[A-Za-z_]\w*)*(?:\(\))?")
_PROVENANCE = re.compile(r"^- provenance: .*$", re.M)


def norm(s: str) -> str:
    return _WS.sub(" ", s)


def strip_supersedes(text: str) -> str:
    """The text without ``(supersedes: …)`` markers (balanced parentheses), where old decisions may live."""
    out = []
    i = 0
    key = "(supersedes: "
    while True:
        j = text.find(key, i)
        if j < 0:
            out.append(text[i:])
            return "".join(out)
        out.append(text[i:j])
        depth = 0
        k = j
        while k < len(text):
            if text[k] == "(":
                depth += 1
            elif text[k] == ")":
                depth -= 1
                if depth == 0:
                    break
            k += 1
        i = k + 1


def sections(text: str) -> dict[str, str]:
    """``#### Title`` blocks of a cold entry (empty for peers' plain text)."""
    out: dict[str, str] = {}
    cur: str | None = None
    for line in text.splitlines():
        if line.startswith("#### "):
            cur = line[5:].strip()
            out[cur] = ""
        elif cur is not None:
            out[cur] += line + "\n"
    return out


def _pieces_in(token: str, source: str) -> bool:
    """Whether every piece of ``token`` between redaction markers and ellipses is in ``source``."""
    parts = [p for p in re.split(r"\[REDACTED_SECRET\]|…", token) if p.strip()]
    return all(p in source for p in parts)


def invented(output: str, source: str) -> tuple[int, int, list[str]]:
    """(tokens, invented, examples): paths and identifiers in the output found nowhere in the source."""
    body = _PROVENANCE.sub("", output)
    tokens: set[str] = set()
    for m in _PATHISH.finditer(_URL.sub(" ", body)):
        tokens.add(m.group(0))
    for m in _BACKTICK.finditer(body):
        t = m.group(1).strip()
        if _IDENTISH.fullmatch(t) and ("_" in t or "." in t or "(" in t or re.search(r"[a-z][A-Z]", t)):
            tokens.add(t)
    bad = sorted(t for t in tokens if not _pieces_in(t, source))
    return len(tokens), len(bad), bad


# --- peers ------------------------------------------------------------------------------------


def _cut(b: bytes, n: int) -> str:
    return b[: max(0, n)].decode("utf-8", "ignore")


def head(text: str, budget: int) -> str:
    return _cut(text.encode(), budget)


def head_tail(text: str, budget: int) -> str:
    raw = text.encode()
    if len(raw) <= budget:
        return text
    sep = "\n…\n"
    half = (budget - len(sep.encode())) // 2
    tail = raw[len(raw) - half :].decode("utf-8", "ignore")
    return _cut(raw, half) + sep + tail


class RegexTokenizer:
    """sumy's tokenizer interface without nltk: its default Tokenizer needs punkt data downloads."""

    language = "english"
    _SENT = re.compile(r"(?<=[.!?])\s+(?=\S)|\n+")
    _WORD = re.compile(r"[A-Za-z0-9_]+(?:'[A-Za-z]+)?")

    def to_sentences(self, paragraph: str) -> tuple[str, ...]:
        return tuple(s.strip() for s in self._SENT.split(paragraph) if s.strip())

    def to_words(self, sentence: str) -> tuple[str, ...]:
        return tuple(self._WORD.findall(sentence))


def _postings(rows: list[list[str]], weight: Callable[[int, str, int], float]) -> Any:
    """Pairwise sums over shared terms, ``Σ_t w_i(t)·w_j(t)``, built per term (sparse, exact)."""
    import numpy as np

    n = len(rows)
    by_term: dict[str, list[tuple[int, float]]] = defaultdict(list)
    for i, words in enumerate(rows):
        for term, count in Counter(words).items():
            by_term[term].append((i, weight(i, term, count)))
    m = np.zeros((n, n))
    for post in by_term.values():
        idx = np.fromiter((p[0] for p in post), dtype=np.intp, count=len(post))
        w = np.fromiter((p[1] for p in post), dtype=float, count=len(post))
        m[np.ix_(idx, idx)] += np.outer(w, w)
    return m


def _lexrank_class() -> Any:
    from sumy.summarizers.lex_rank import LexRankSummarizer

    class FastLexRank(LexRankSummarizer):  # type: ignore[misc]
        """sumy's LexRank with its O(n²·V) Python loops vectorised (same formulas, same power method)."""

        def ratings(self, document: Any) -> list[float]:
            import numpy as np

            rows = [self._to_words_set(s) for s in document.sentences]
            if not rows:
                return []
            tf = self._compute_tf(rows)
            df: Counter[str] = Counter()
            for r in rows:
                df.update(set(r))
            n = len(rows)
            idf = {t: math.log(n / (1 + c)) for t, c in df.items()}
            sim = _postings(rows, lambda i, t, _c: tf[i][t] * idf[t])
            d = np.sqrt(np.diag(sim).copy())
            denom = np.outer(d, d)
            with np.errstate(divide="ignore", invalid="ignore"):
                cos = np.where(denom > 0, sim / np.where(denom > 0, denom, 1), 0.0)
            adj = (cos > self.threshold).astype(float)
            deg = adj.sum(axis=1)
            deg[deg == 0] = 1
            adj /= deg[:, None]
            return list(self.power_method(adj, self.epsilon))

    return FastLexRank


def _textrank_class() -> Any:
    from sumy.summarizers.text_rank import TextRankSummarizer

    class FastTextRank(TextRankSummarizer):  # type: ignore[misc]
        """sumy's TextRank with the pairwise edge loop vectorised (same edge weight and damping)."""

        def ratings(self, document: Any) -> list[float]:
            import numpy as np

            rows = [self._to_words_set(s) for s in document.sentences]
            n = len(rows)
            if not n:
                return []
            rank = _postings(rows, lambda _i, _t, c: float(c))
            lens = np.array([len(r) for r in rows], dtype=float)
            logs = np.log(np.where(lens > 0, lens, 1))
            nrm = logs[:, None] + logs[None, :]
            with np.errstate(divide="ignore", invalid="ignore"):
                w = np.where(
                    rank == 0, 0.0, np.where(np.isclose(nrm, 0.0), rank, rank / np.where(nrm == 0, 1, nrm))
                )
            w /= w.sum(axis=1)[:, None] + self._ZERO_DIVISION_PREVENTION
            matrix = np.full((n, n), (1.0 - self.damping) / n) + self.damping * w
            return list(self.power_method(matrix, self.epsilon))

    return FastTextRank


_SUMY: dict[str, Any] = {}


def _summarizer(name: str) -> Any:
    if name not in _SUMY:
        from sumy.nlp.stemmers import Stemmer
        from sumy.utils import get_stop_words

        cls = _lexrank_class() if name == "lexrank" else _textrank_class()
        s = cls(Stemmer("english"))
        s.stop_words = get_stop_words("english")
        _SUMY[name] = s
    return _SUMY[name]


def ranked(name: str, text: str, budget: int) -> str:
    """Top-rated sentences (each turn a paragraph, each line or sentence a sentence) within ``budget`` bytes."""
    from sumy.models.dom import ObjectDocumentModel, Paragraph, Sentence

    tok = RegexTokenizer()
    paras = []
    for block in re.split(r"\n(?=(?:user|assistant|tool): )", text):
        sents = [Sentence(s, tok) for s in tok.to_sentences(block)]
        if sents:
            paras.append(Paragraph(sents))
    doc = ObjectDocumentModel(paras)
    sents = list(doc.sentences)
    rates = _summarizer(name).ratings(doc)
    order = sorted(range(len(sents)), key=lambda i: (-rates[i], i))
    chosen: list[int] = []
    used = 0
    for i in order:
        size = len(str(sents[i]).encode()) + 1
        if used + size <= budget:
            chosen.append(i)
            used += size
        if budget - used < 16:
            break
    return "\n".join(str(sents[i]) for i in sorted(chosen))


def run_peer(name: str, text: str, budget: int) -> str:
    if name == "head":
        return head(text, budget)
    if name == "headtail":
        return head_tail(text, budget)
    return ranked(name, text, budget)


# --- scoring ----------------------------------------------------------------------------------


@dataclass
class Tally:
    """Running totals of one method over all sessions."""

    found: Counter[str] = field(default_factory=Counter)
    planted: Counter[str] = field(default_factory=Counter)
    found_rec: Counter[bool] = field(default_factory=Counter)
    planted_rec: Counter[bool] = field(default_factory=Counter)
    wfound: float = 0.0
    wplanted: float = 0.0
    wfound_rec: float = 0.0
    wplanted_rec: float = 0.0
    ratios: list[float] = field(default_factory=list)
    stale_leaks: int = 0
    stale_planted: int = 0
    todo_errors: int = 0
    tokens: int = 0
    invented: int = 0
    secret_leaks: int = 0
    secrets_planted: int = 0
    look_kept: int = 0
    look_planted: int = 0
    prov_ok: int = 0
    sessions: int = 0
    seconds: float = 0.0
    failures: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))
    missed_by: Counter[str] = field(default_factory=Counter)

    def fail(self, kind: str, item: dict[str, Any], cap: int = 60) -> None:
        if len(self.failures[kind]) < cap:
            self.failures[kind].append(item)

    def public(self) -> dict[str, Any]:
        def rate(a: float, b: float) -> float | None:
            return round(a / b, 4) if b else None

        return {
            "recall": {t: rate(self.found[t], self.planted[t]) for t in TYPES},
            "recall_by_phrasing": {
                "recognised": rate(self.found_rec[True], self.planted_rec[True]),
                "unrecognised": rate(self.found_rec[False], self.planted_rec[False]),
            },
            "weighted_recall": rate(self.wfound, self.wplanted),
            "weighted_recall_recognised": rate(self.wfound_rec, self.wplanted_rec),
            "ratio": {
                "p50": round(statistics.median(self.ratios), 4) if self.ratios else None,
                "max": round(max(self.ratios), 4) if self.ratios else None,
                "mean": round(statistics.fmean(self.ratios), 4) if self.ratios else None,
            },
            "stale_leaks": self.stale_leaks,
            "stale_planted": self.stale_planted,
            "todo_state_errors": self.todo_errors,
            "invented_rate": rate(self.invented, self.tokens) if self.tokens else 0.0,
            "invented": self.invented,
            "secret_leaks": self.secret_leaks,
            "secrets_planted": self.secrets_planted,
            "lookalike_kept": rate(self.look_kept, self.look_planted),
            "provenance_coverage": rate(self.prov_ok, self.sessions),
            "seconds": round(self.seconds, 3),
        }


def extracted_anchors(kind: str, path: Path, agent: str) -> str:
    """The anchors scribed extracts from a session (after redaction, as the pipeline does), one text."""
    from scribed import sources
    from scribed.compress import anchors
    from scribed.models import Session, Turn

    texts = []
    for sess in sources.parse_file(kind, path, agent).sessions:
        turns = [
            Turn(t.role, redact(t.text), t.kind, t.ts, t.line, t.end_offset, t.tool_name) for t in sess.turns
        ]
        sub = Session(
            sess.agent, sess.session_id, sess.source, sess.kind, turns, sess.start, sess.end, sess.ended
        )
        texts += [a.text for a in anchors.extract(sub)]
    return norm("\n".join(texts))


def score(
    t: Tally,
    s: gen.GenSession,
    output: str,
    source: str,
    *,
    provenance: bool = False,
    source_path: Path | None = None,
) -> None:
    """Add one session's output to ``t``."""
    t.sessions += 1
    anchored = extracted_anchors(s.fmt, source_path, s.agent) if provenance and source_path else None
    t.ratios.append(len(output.encode()) / len(s.data))
    _score_facts(t, s, norm(output), anchored)
    live = norm(strip_supersedes(output))
    for st in s.manifest.stale:
        t.stale_planted += 1
        if norm(st["text"]) in live:
            t.stale_leaks += 1
            t.fail("stale_leak", {"session": s.id, "format": s.fmt, **st})
    _score_todos(t, s, output)
    n_tok, n_bad, bad = invented(output, source)
    t.tokens += n_tok
    t.invented += n_bad
    for b in bad[:3]:
        t.fail("invented", {"session": s.id, "format": s.fmt, "token": b})
    _score_secrets(t, s, output)
    if provenance:
        ok = _provenance_ok(output, source_path)
        t.prov_ok += ok
        if not ok:
            t.fail("provenance", {"session": s.id, "format": s.fmt})


def _score_facts(t: Tally, s: gen.GenSession, n_out: str, anchored: str | None) -> None:
    """Recall of the planted facts, weighted and by phrasing; why each miss was missed."""
    for f in s.manifest.facts:
        hit = norm(f.text) in n_out
        w = WEIGHTS.get(f.type, 1.0)
        t.planted[f.type] += 1
        t.planted_rec[f.recognised] += 1
        t.wplanted += w
        if f.recognised:
            t.wplanted_rec += w
        if hit:
            t.found[f.type] += 1
            t.found_rec[f.recognised] += 1
            t.wfound += w
            if f.recognised:
                t.wfound_rec += w
            continue
        why = ""
        if anchored is not None:  # scribed only: did anchors.py find it (so the budget dropped it)?
            why = "anchor-dropped" if norm(f.text) in anchored else "not-extracted"
        label = "recognised" if f.recognised else "unrecognised"
        t.missed_by[f"{f.type}/{f.phrasing}/{label}" + (f"/{why}" if why else "")] += 1
        item = {"session": s.id, "format": s.fmt, "type": f.type, "phrasing": f.phrasing}
        t.fail("missed", {**item, "recognised": f.recognised, "text": f.text, "why": why})


def _score_todos(t: Tally, s: gen.GenSession, output: str) -> None:
    """A closed TODO listed as open, or an open one not where open items go, is a TODO state error."""
    m = s.manifest
    secs = sections(output)
    if not secs:
        n_out = norm(output)
        for ct in m.closed_todos:
            if norm(ct["text"]) in n_out and norm(ct["close"]) not in n_out:
                t.todo_errors += 1
        t.todo_errors += sum(1 for f in m.facts if f.type == "todo" and norm(f.text) not in n_out)
        return
    open_area = norm(secs.get("Open items", ""))
    key_open = norm(
        "\n".join(ln for ln in secs.get("Key facts", "").splitlines() if ln.lstrip("- ").startswith("open:"))
    )
    held = norm(secs.get("Open items", "") + secs.get("Key facts", ""))
    for ct in m.closed_todos:
        if norm(ct["text"]) in open_area or norm(ct["text"]) in key_open:
            t.todo_errors += 1
            t.fail(
                "todo_state",
                {"session": s.id, "format": s.fmt, "what": "closed TODO listed as open", **ct},
            )
    for f in m.facts:
        if f.type == "todo" and norm(f.text) not in held:
            t.todo_errors += 1
            t.fail(
                "todo_state",
                {"session": s.id, "format": s.fmt, "what": "open TODO not under Open items/Key facts", "text": f.text, "phrasing": f.phrasing, "recognised": f.recognised},
            )  # fmt: skip


def _score_secrets(t: Tally, s: gen.GenSession, output: str) -> None:
    """Planted secrets must be gone from the output, planted look-alikes kept."""
    for sec in s.manifest.secrets:
        t.secrets_planted += 1
        leaked = [v for v in sec["values"] if v and v in output]
        if leaked:
            t.secret_leaks += 1
            t.fail("secret_leak", {"session": s.id, "format": s.fmt, "name": sec["name"]})
    for lk in s.manifest.lookalikes:
        t.look_planted += 1
        if lk["value"] in output:
            t.look_kept += 1
        else:
            t.fail(
                "lookalike_dropped",
                {
                    "session": s.id,
                    "kind": lk["kind"],
                    "redacted_by_redactor": lk["value"] not in redact(lk["line"]),
                },
            )


def _provenance_ok(output: str, source_path: Path | None) -> bool:
    """The last provenance line names the source and session, with the source file's sha256."""
    ok = False
    for line in output.splitlines():
        if not line.startswith("- provenance:"):
            continue
        sha = re.search(r"\bsha256=([0-9a-f]{64})\b", line)
        has = re.search(r"\bsource=`[^`]+`", line) and re.search(r"\bsession=\S+", line)
        real = hashlib.sha256(source_path.read_bytes()).hexdigest() if source_path else None
        ok = bool(has and sha and (real is None or sha.group(1) == real))
    return ok


# --- running scribed --------------------------------------------------------------------------


def _entries_by_session(report: RunReport, files: dict[str, Path], workdir: Path) -> dict[str, str]:
    """The cold entry text scribed wrote for each generated session, by session id."""
    by_file = {str(p): sid for sid, p in files.items()}
    cold_texts: dict[str, str] = {}
    for f in (workdir / "squad/.squad/memory/cold").glob("*.md"):
        _, entries = entry_mod.split_entries(f.read_text())
        cold_texts.update((e.entry_id, e.text) for e in entries if e.entry_id)
    out: dict[str, str] = {}
    for rep in report.entries:
        sid = by_file.get(rep.source)  # transcripts live outside the root: display paths are absolute
        if sid is None:
            sid = next((v for k, v in by_file.items() if k.endswith(rep.source.lstrip("~"))), None)
        if sid is not None and rep.entry_id in cold_texts:
            out[sid] = cold_texts[rep.entry_id]
    return out


def run_scribed(
    sessions: list[gen.GenSession],
    workdir: Path,
    backend: str,
    llm: dict[str, Any] | None = None,
    ratio: float = 0.10,
) -> tuple[dict[str, str], dict[str, Path], dict[str, Any]]:
    """Write the sessions, run the real pipeline once; (entry text by session id, file by id, run info)."""
    transcripts = workdir / "transcripts"
    files: dict[str, Path] = {}
    for s in sessions:
        files[s.id] = gen.write_session(s, transcripts)
    cfg_dict: dict[str, Any] = {
        "root": str(workdir / "squad"),
        "session": {"quiet_seconds": 0},
        "compress": {"backend": backend, "ratio": ratio},
        "cold": {"max_bytes": 1_000_000_000},  # no folding: one entry per session to score
        "log": {"format": "json", "level": "error"},
        "sources": gen.sources(transcripts),
    }
    if llm:
        cfg_dict["llm"] = llm
    (workdir / "squad").mkdir(parents=True, exist_ok=True)
    cfg = config_mod.from_dict(cfg_dict)
    log_mod.configure("json", "error")
    last = max(s.end for s in sessions) + timedelta(hours=1)
    scribe = Scribe(cfg, clock=lambda: last)
    t0 = time.perf_counter()
    try:
        report = scribe.run_once(force=True)
    finally:
        scribe.close()
    elapsed = time.perf_counter() - t0
    info: dict[str, Any] = {"seconds": elapsed, "failed": report.failed, "failures": report.failures}
    out = _entries_by_session(report, files, workdir)
    tokens_in = tokens_out = 0
    compressors: Counter[str] = Counter()
    llm_errors: Counter[str] = Counter()
    for rep in report.entries:
        tokens_in += rep.tokens_in
        tokens_out += rep.tokens_out
        compressors[rep.compressor.split(":", 1)[0]] += 1
        if rep.llm_error:
            llm_errors[rep.llm_error] += 1
    info.update(
        entries=len(out),
        sessions_without_entry=sorted(s.id for s in sessions if s.id not in out),
        tokens_in=tokens_in,
        tokens_out=tokens_out,
        compressors=dict(compressors),
        llm_errors=dict(llm_errors),
    )
    # Secrets anywhere scribed wrote (cold files, ledger, archives), not only in the entries.
    blobs = [p.read_bytes() for p in (workdir / "squad/.squad").rglob("*") if p.is_file()]
    leaks = 0
    for s in sessions:
        for sec in s.manifest.secrets:
            if any(v.encode() in b for v in sec["values"] if v for b in blobs):
                leaks += 1
    info["secret_leaks_anywhere"] = leaks
    return out, files, info


def evaluate(  # noqa: PLR0913 -- keyword-only, one per command-line flag
    *,
    seed: int = 1,
    sessions: int = 48,
    backend: str = "extractive",
    peers: Iterable[str] = PEERS,
    min_kb: float = 4,
    max_kb: float = 120,
    unrecognised_rate: float = 0.2,
    llm: dict[str, Any] | None = None,
    workdir: Path | None = None,
    ratio: float = 0.10,
) -> dict[str, Any]:
    """The whole benchmark as one JSON-able dict (the ``--json`` output)."""
    gens = list(
        gen.iter_sessions(seed, sessions, min_kb=min_kb, max_kb=max_kb, unrecognised_rate=unrecognised_rate)
    )
    with tempfile.TemporaryDirectory(prefix="scribed-quality-") as tmp:
        wd = workdir or Path(tmp)
        entries, files, info = run_scribed(gens, wd, backend, llm, ratio)
        sources = {s.id: files[s.id].read_bytes().decode("utf-8", "replace") + "\n" + s.plain for s in gens}
        main = Tally(seconds=info["seconds"])
        budgets: dict[str, int] = {}
        for s in gens:
            text = entries.get(s.id, "")
            budgets[s.id] = len(text.encode()) or int(len(s.data) * 0.10)
            score(main, s, text, sources[s.id], provenance=True, source_path=files[s.id])
        result: dict[str, Any] = {
            "backend": backend,
            "seed": seed,
            "sessions": len(gens),
            "config_ratio": ratio,
        }
        result.update(main.public())
        result["secret_leaks_anywhere"] = info["secret_leaks_anywhere"]
        result["run"] = {k: v for k, v in info.items() if k != "secret_leaks_anywhere"}
        result["corpus"] = {
            "bytes": sum(len(s.data) for s in gens),
            "formats": dict(Counter(s.fmt for s in gens)),
            "size_kb": {
                "min": round(min(len(s.data) for s in gens) / 1024, 1),
                "p50": round(statistics.median(len(s.data) for s in gens) / 1024, 1),
                "max": round(max(len(s.data) for s in gens) / 1024, 1),
            },
            "facts": dict(Counter(f.type for s in gens for f in s.manifest.facts)),
            "unrecognised_facts": sum(1 for s in gens for f in s.manifest.facts if not f.recognised),
            "stale": sum(len(s.manifest.stale) for s in gens),
            "closed_todos": sum(len(s.manifest.closed_todos) for s in gens),
            "secrets": sum(len(s.manifest.secrets) for s in gens),
            "lookalikes": sum(len(s.manifest.lookalikes) for s in gens),
        }
        result["by_format"] = {}
        for fmt in gen.FORMATS:
            sub = Tally()
            for s in gens:
                if s.fmt == fmt:
                    score(
                        sub, s, entries.get(s.id, ""), sources[s.id], provenance=True, source_path=files[s.id]
                    )
            if sub.sessions:
                pub = sub.public()
                result["by_format"][fmt] = {
                    k: pub[k] for k in ("weighted_recall", "ratio", "stale_leaks", "secret_leaks")
                }
        result["by_size"] = {}
        for label, lo, hi in (("<16KB", 0, 16384), ("16-48KB", 16384, 49152), (">48KB", 49152, 1 << 40)):
            sub = Tally()
            for s in gens:
                if lo <= len(s.data) < hi:
                    score(sub, s, entries.get(s.id, ""), sources[s.id])
            if sub.sessions:
                pub = sub.public()
                result["by_size"][label] = {"sessions": sub.sessions, "weighted_recall": pub["weighted_recall"], "weighted_recall_recognised": pub["weighted_recall_recognised"], "ratio": pub["ratio"]}  # fmt: skip
        result["peers"] = {}
        for name in peers:
            pt = Tally()
            t0 = time.perf_counter()
            for s in gens:
                score(pt, s, run_peer(name, s.plain, budgets[s.id]), sources[s.id])
            pt.seconds = time.perf_counter() - t0
            pub = pt.public()
            pub["provenance_coverage"] = 0.0
            result["peers"][name] = pub
        best = max((p["weighted_recall"] or 0.0 for p in result["peers"].values()), default=0.0)
        result["margin_over_best_peer"] = round((result["weighted_recall"] or 0.0) - best, 4)
        result["failures"] = dict(main.failures)
        result["missed_by_phrasing"] = dict(sorted(main.missed_by.items()))
    return result


# --- a loopback adapter for llama-cpp-python's server ------------------------------------------


def schema_proxy(upstream: str, require_text: bool = True) -> tuple[str, Callable[[], None]]:
    """Serve ``upstream`` on 127.0.0.1, turning ``response_format: json_schema`` into llama.cpp's form.

    llama-cpp-python's server rejects ``json_schema`` (HTTP 500) but accepts the same schema as
    ``{"type": "json_object", "schema": …}``. ``require_text`` also makes goal and outcome
    required, since a 135M model otherwise answers ``{"key_facts": []}``. Returns (url, stop).
    """
    import threading
    import urllib.error
    import urllib.request
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    from urllib.parse import urlsplit

    parts = urlsplit(upstream)
    origin = f"{parts.scheme}://{parts.netloc}"

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _go(self, body: bytes | None) -> None:
            if body:
                try:
                    obj = json.loads(body)
                except ValueError:
                    obj = None
                rf = obj.get("response_format") if isinstance(obj, dict) else None
                if isinstance(rf, dict) and rf.get("type") == "json_schema":
                    schema = json.loads(json.dumps((rf.get("json_schema") or {}).get("schema") or {}))
                    if require_text and isinstance(schema.get("properties"), dict):
                        schema["required"] = sorted({*schema.get("required", []), "goal", "outcome"})
                        for key in ("goal", "outcome"):
                            schema["properties"].setdefault(key, {"type": "string"})["minLength"] = 12
                    obj["response_format"] = {"type": "json_object", "schema": schema}
                    body = json.dumps(obj).encode()
            req = urllib.request.Request(origin + self.path, data=body, method=self.command)
            req.add_header("Content-Type", "application/json")
            try:
                with urllib.request.urlopen(req, timeout=1200) as r:
                    status, data = r.status, r.read()
            except urllib.error.HTTPError as exc:
                status, data = exc.code, exc.read()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._go(None)

        def do_POST(self) -> None:
            self._go(self.rfile.read(int(self.headers.get("Content-Length") or 0)))

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()

    def stop() -> None:
        httpd.shutdown()
        httpd.server_close()

    return f"http://127.0.0.1:{httpd.server_address[1]}{parts.path or '/v1'}", stop


# --- CLI ------------------------------------------------------------------------------------------


def _fmt(v: Any) -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        return f"{v:.3f}"
    return str(v)


def table(res: dict[str, Any]) -> str:
    """Markdown tables: per anchor type, then the guarantees, scribed vs every peer."""
    methods = {f"scribed ({res['backend']})": res, **res["peers"]}
    head_ = "| metric | " + " | ".join(methods) + " |\n|---|" + "---:|" * len(methods)
    rows = [head_]
    rows += [
        f"| recall: {t} | " + " | ".join(_fmt(m["recall"][t]) for m in methods.values()) + " |" for t in TYPES
    ]
    for key, get in [
        ("recall, recognised phrasing", lambda m: m["recall_by_phrasing"]["recognised"]),
        ("recall, unrecognised phrasing", lambda m: m["recall_by_phrasing"]["unrecognised"]),
        ("**weighted_recall**", lambda m: m["weighted_recall"]),
        ("weighted_recall (recognised only)", lambda m: m["weighted_recall_recognised"]),
        ("ratio p50", lambda m: m["ratio"]["p50"]),
        ("ratio max", lambda m: m["ratio"]["max"]),
        ("stale_leaks", lambda m: m["stale_leaks"]),
        ("todo_state_errors", lambda m: m["todo_state_errors"]),
        ("invented_rate", lambda m: m["invented_rate"]),
        ("secret_leaks", lambda m: m["secret_leaks"]),
        ("lookalike_kept", lambda m: m["lookalike_kept"]),
        ("provenance_coverage", lambda m: m["provenance_coverage"]),
        ("seconds", lambda m: m["seconds"]),
    ]:
        rows.append(f"| {key} | " + " | ".join(_fmt(get(m)) for m in methods.values()) + " |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--backend", choices=["extractive", "llm", "auto"], default="extractive")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--sessions", type=int, default=48)
    ap.add_argument("--min-kb", type=float, default=4)
    ap.add_argument("--max-kb", type=float, default=120)
    ap.add_argument("--peers", default=",".join(PEERS), help="comma-separated subset of " + ",".join(PEERS))
    ap.add_argument(
        "--unrecognised-rate",
        type=float,
        default=0.2,
        help="share of facts phrased outside anchors.py's rules",
    )
    ap.add_argument("--llm-url", default=os.environ.get("SCRIBED_REAL_LLM_URL", ""))
    ap.add_argument("--llm-model", default=os.environ.get("SCRIBED_REAL_LLM_MODEL", "smollm2-135m"))
    ap.add_argument("--llm-context", type=int, default=int(os.environ.get("SCRIBED_REAL_LLM_CTX", "2048")))
    ap.add_argument(
        "--llm-format",
        default=os.environ.get("SCRIBED_REAL_LLM_FORMAT", "auto"),
        choices=["auto", "json_schema", "json_object", "text"],
        help="llm.response_format (auto negotiates with the server; see docs/benchmarks.md)",
    )
    ap.add_argument("--ratio", type=float, default=0.10, help="scribed's compress.ratio (the budget knob)")
    ap.add_argument(
        "--llm-schema-proxy",
        action="store_true",
        help="put the json_schema → llama.cpp adapter (schema_proxy) in front of --llm-url",
    )
    ap.add_argument("--keep", type=Path, help="keep the squad root and transcripts in this folder")
    a = ap.parse_args(argv)
    llm = None
    stop: Callable[[], None] = lambda: None  # noqa: E731
    if a.backend in ("llm", "auto"):
        if not a.llm_url:
            ap.error("--backend llm needs --llm-url or SCRIBED_REAL_LLM_URL (see scripts/local-llm)")
        url = a.llm_url
        if a.llm_schema_proxy:
            url, stop = schema_proxy(a.llm_url)
        llm = {
            "base_url": url,
            "model": a.llm_model,
            "context_tokens": a.llm_context,
            "timeout_seconds": 600,
            "max_concurrency": 1,
            "max_retries": 1,
            "response_format": a.llm_format,
        }
    if a.keep:
        a.keep.mkdir(parents=True, exist_ok=True)
    try:
        res = evaluate(
            seed=a.seed,
            sessions=a.sessions,
            backend=a.backend,
            peers=[p for p in a.peers.split(",") if p],
            min_kb=a.min_kb,
            max_kb=a.max_kb,
            unrecognised_rate=a.unrecognised_rate,
            llm=llm,
            workdir=a.keep,
            ratio=a.ratio,
        )
    finally:
        stop()
    if a.json:
        print(json.dumps(res, indent=1))
    else:
        c = res["corpus"]
        print(
            f"{res['sessions']} sessions, {c['bytes'] / 1e6:.1f} MB ({c['formats']}), seed {res['seed']}, "
            f"backend {res['backend']}; scribed run {res['run']['seconds']:.1f}s\n"
        )
        print(table(res))
        print(f"\nmargin over best peer: {res['margin_over_best_peer']:+.3f} weighted recall")
        print(f"secrets anywhere under .squad/: {res['secret_leaks_anywhere']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
