"""Teacher personas: the instruction (system message) the AI teacher replies under.

``paper`` (the default) describes the teacher the way the AI Teacher Test prompted GPT-3 (Tack &
Piech, 2022, Section 3.2): a teacher who is polite, helpful, professional, on topic and factually
correct -- in our own words, plus one line that a chat model needs and a completion model did not:
reply with the teacher's words only.  ``uptake`` is edueval's earlier persona, which asks the model
to build on what the student said (conversational uptake, Demszky et al., 2021); it measures
something the paper's prompt did not ask for and stays available for comparison.
"""

from __future__ import annotations

from ..io import InputError

__all__ = ["PERSONAS", "DEFAULT_PERSONA", "UPTAKE_PERSONA", "resolve_persona"]

DEFAULT_PERSONA = (
    "This is a conversation between a teacher and a student. You are the teacher: courteous "
    "(polite), helpful and professional; you stay on topic, and everything you say is factually "
    "correct. Reply to the student's last turn with the teacher's words only."
)

UPTAKE_PERSONA = (
    "You are an experienced, warm elementary-school mathematics teacher talking with a student "
    "during class. Reply to the student's last utterance the way a good teacher would speak: one "
    "or two short sentences that build on what the student said. Reply with the teacher's words only."
)

#: built-in personas by name; ``paper`` is the default
PERSONAS = {"paper": DEFAULT_PERSONA, "uptake": UPTAKE_PERSONA}


def resolve_persona(persona: str | None) -> tuple[str, str]:
    """(name, instruction) for ``persona``: None is ``paper``; a built-in name (``paper``,
    ``uptake``) gives that persona; any other text is used as the instruction itself (name
    ``custom``).  Empty text is refused."""
    if persona is None:
        return "paper", DEFAULT_PERSONA
    key = persona.strip()
    if key.lower() in PERSONAS:
        return key.lower(), PERSONAS[key.lower()]
    if not key:
        raise InputError("persona=: expected paper, uptake or an instruction text, got nothing")
    return "custom", persona
