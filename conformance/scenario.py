"""What the scripted model says: a prompt per run of the agent (the first run, then resumes of
the same session), each answered by a tool call and, once its result comes back, a closing
text: a shell command, a file write, a file read, a shell command that fails, and where the
agent has subagents, a task given to one (whose own request, carrying none of these prompts,
is answered with a text).

The model finds its place from the request alone (the latest of the scenario's prompts it
carries, and the tool results after it), so a resumed agent that sends the earlier conversation
back is answered as a fresh one would be."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from conformance.servers.base import Answer, Call, Request

PROMPTS = (
    "Run the shell step and tell me what it printed.",
    "Write the notes file.",
    "Read the notes file back to me.",
    "Run the failing step.",
    "Ask a helper to check the notes file.",
)
CLOSING = (
    "The shell step printed the marker.",
    "The notes file is written.",
    "The notes file says what we wrote.",
    "The failing step failed, as it should.",
    "The helper checked the notes file.",
)
SIDE = "Scripted title"  # what a call outside the conversation (a title, a subagent) is told
TASK = "Check that the notes file is there."  # what a subagent is asked
ANSWERED = Call("", {})  # a step an agent answers from what it was given, with no call


def prompt_of(request: Request) -> int | None:
    """The index of the latest scenario prompt the request carries, if any."""
    for role, text in reversed(request.said):
        if role == "user":
            for index, prompt in enumerate(PROMPTS):
                if prompt in text:
                    return index
    return None


@dataclass(frozen=True)
class Scenario:
    # the agent's own calls: shell, write, read, failing shell (, task); None for a prompt the
    # agent is not given (it has no such step)
    steps: tuple[Call | None, ...]
    # an agent that acts on what the answer says rather than on tool calls (Aider's edit
    # blocks): how a step is written in the answer
    written: Callable[[Call], str] | None = None

    @property
    def prompts(self) -> tuple[str, ...]:
        return tuple(p for p, step in zip(PROMPTS, self.steps, strict=False) if step is not None)

    def answer(self, request: Request) -> Answer:
        index = prompt_of(request)
        if index is None or (not request.tools and self.written is None):
            return Answer(text=SIDE)
        if self.written is not None:
            step = self.steps[index]
            if step is None or step == ANSWERED:
                return Answer(text=CLOSING[index])
            said = f"Step {index + 1}: calling {step.tool}.\n\n{self.written(step)}"
            return Answer(text=said, edits=(step,))
        answered = 0
        for role, text in reversed(request.said):
            if role == "user" and PROMPTS[index] in text:
                break
            answered += role == "tool"
        if answered == 0:
            call = self.steps[index]
            assert call is not None
            return Answer(text=f"Step {index + 1}: calling {call.tool}.", calls=(call,))
        return Answer(text=CLOSING[index])
