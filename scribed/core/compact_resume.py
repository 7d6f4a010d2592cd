"""Where compaction of a file resumes: after what was compacted before, unless the file was
rewritten before that point (then from the start), or, for a file new to the ledger, after what
was compacted of the transcript it continues (moved, copied, or filed under a path that is gone).
Kept apart from the compaction steps: this alone reads the file's bytes against the ledger's
offsets and moves entries between sources.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from scribed.core.compact_session import Step
from scribed.core.discovery import adopt_moved, gone_paths
from scribed.core.ledger import redacted_key, source_key
from scribed.fsutil import skip_newline
from scribed.session.door import redacted
from scribed.sources import zst
from scribed.sources.zst import sha256_prefix

if TYPE_CHECKING:
    from scribed.core.compact_read import Job

# Kinds whose Turn.end_offset is a byte offset in an append-only file.
BYTE_KINDS = {"copilot", "claude", "codex", "markdown"}


class Resuming(Step):
    """The offset a file's compaction starts from (:meth:`_resume_offset`)."""

    def _resume_offset(self, job: Job) -> int:
        """Where compaction resumes: 0 for hot files and for a file rewritten before that point; for
        a file new to the ledger, where the transcript it continues stopped (:meth:`_moved_offset`)."""
        item, row, path = job.item, job.row, job.item.path
        offset_done = row.offset_done if row else 0
        if item.kind == "hot":
            return 0
        if item.kind in BYTE_KINDS and offset_done == 0 and (row is None or row.status == "failed"):
            offset_done = self._moved_offset(job)
        elif (
            item.kind in BYTE_KINDS
            and offset_done > 0
            and row is not None
            and self._rewritten(job, offset_done)
        ):
            self.log.warning(
                "source_rewritten",
                file=job.key,
                reason="content before the compacted offset changed; compacting the whole file again",
            )
            return 0
        if item.kind in BYTE_KINDS and offset_done > 0 and path.suffix != ".zst":
            offset_done = skip_newline(path, offset_done)  # a line compacted before its newline came
        return offset_done

    def _moved_offset(self, job: Job) -> int:
        """Where a file new to the ledger resumes: 0, or the offset of the transcript it continues
        (moved, and perhaps grown since: :func:`adopt_moved`). That file gone, its entries are
        filed under this one, so a later cut or edit here is told as one in place would be."""
        item = job.item
        sids = [redacted(b.session_id) for b in job.briefs]
        was = adopt_moved(self.ledger, item.path, job.st, item.kind, sids)
        if was is None:
            self._refile_gone(job, sids)
            return 0
        key, old = source_key(item.path), Path(was.path)
        # a redacted key names no file: whether its transcript is gone cannot be told, so it is
        # taken as copied (its entries stay where they are filed)
        gone = not redacted_key(was.path) and not os.path.lexists(old)
        if gone and not self.dry_run:
            self.ledger.move_entries(was.path, key)
        self.log.info(
            "source_moved" if gone else "source_copied", file=key, was=was.path, offset=was.offset_done,
            reason="starts with the bytes compacted from there: only what follows is compacted",
        )  # fmt: skip
        return was.offset_done

    def _refile_gone(self, job: Job, sids: Iterable[str]) -> None:
        """Entries of this file's sessions filed under a source that is gone, with no row to show
        the move (a rebuilt ledger): filed under this file (:func:`gone_paths`)."""
        if self.dry_run:
            return
        key = source_key(job.item.path)
        for old in gone_paths(self.ledger, job.item.path, sids):
            self.ledger.move_entries(old, key)
            self.log.info(
                "source_moved", file=key, was=old, offset=0,
                reason="its sessions' entries name a file that is gone: they are filed under this one",
            )  # fmt: skip

    @staticmethod
    def _rewritten(job: Job, offset_done: int) -> bool:
        path = job.item.path
        return zst.logical_size(path, job.st.st_size) < offset_done or (
            job.row is not None and sha256_prefix(path, offset_done) != job.row.sha256
        )
