"""Stop 45 review, defect 4: a reply answers a decision question by referring back to it ("We can
drop those") only when the verb of deciding is the sentence's main verb (an imperative first, or
after its subject and a modal), not in a question, a gerund's phrase ("Using this stack trace …")
or a deferral ("… for now", "keep that in mind"): those leave the question open."""

from __future__ import annotations

import pytest
from test_questions import _session, _turns

from scribed.compress import anchors, questions

Q = "should we migrate the archived invoices as well?"
NOT_ANSWERS = [
    "I'll keep that in mind.",
    "Let's leave that for now; first the failing build.",
    "Do you want me to keep them?",
    "Using this stack trace I found the null deref in parser.c.",
    "Ignoring that for a moment: CI is red on main.",
]


@pytest.mark.parametrize("reply", NOT_ANSWERS)
def test_a_non_answer_referring_back_leaves_the_question_open(reply: str) -> None:
    turns = _turns(("user", Q), ("assistant", reply))
    assert questions.unanswered(turns) == [(Q, 1)]
    todos = [a.text for a in anchors.extract(_session(turns)) if a.type == "todo"]
    assert f"unanswered: {Q}" in todos, todos


# Fresh phrasings, written after the fix ("what about the v1 webhooks?": no word shared)
FRESH_Q = "what about the v1 webhooks?"
FRESH_ANSWERS = [
    "We should retire them once the partners move.",
    "Drop them; nobody subscribes anymore.",
    "I'd keep those, two partners still call them.",
]
FRESH_NOT_ANSWERS = [
    "Keeping that aside, the build is green now.",
    "Should I remove them too?",
    "We can drop those later, after the migration.",
    "I'll keep it in mind when I touch the router.",
]


@pytest.mark.parametrize("reply", FRESH_ANSWERS)
def test_fresh_answers_referring_back_close_the_question(reply: str) -> None:
    assert questions.unanswered(_turns(("user", FRESH_Q), ("assistant", reply))) == []


@pytest.mark.parametrize("reply", FRESH_NOT_ANSWERS)
def test_fresh_non_answers_leave_the_question_open(reply: str) -> None:
    assert questions.unanswered(_turns(("user", FRESH_Q), ("assistant", reply))) == [(FRESH_Q, 1)]
