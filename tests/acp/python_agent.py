"""A small ACP agent on the official Python SDK (`pip install agent-client-protocol`), for
efix's end-to-end tests of `--engine acp`.

It answers from a script (a JSON file named on the command line) instead of a model:

    {"plan": TEXT, "fix": TEXT, "edit": {"path": P, "old": OLD, "new": NEW} or null}

A plan prompt (one that asks for `focus_files`) gets `plan`. A fix prompt first asks
permission to run the tests (efix must refuse: it runs them itself), then, when the script
has an `edit`, announces an edit tool call, asks permission for it and, when allowed, edits
the file itself, as coding agents do; then it answers `fix`. Every permission outcome is
written to stderr, so a failing test shows what the agent was told.
"""

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from acp import (
    PROTOCOL_VERSION,
    Agent,
    InitializeResponse,
    NewSessionResponse,
    PromptResponse,
    run_agent,
    start_edit_tool_call,
    start_tool_call,
    text_block,
    update_agent_message,
)
from acp.interfaces import Client
from acp.schema import AgentCapabilities, PermissionOption, ToolCallUpdate


OPTIONS = [
    PermissionOption(option_id="allow", name="Allow once", kind="allow_once"),
    PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
]


class ScriptedAgent(Agent):
    _conn: Client

    def __init__(self, script: dict[str, Any]) -> None:
        self._script = script
        self._cwd = Path(".")

    def on_connect(self, conn: Client) -> None:
        self._conn = conn

    async def initialize(self, protocol_version: int, client_capabilities=None, client_info=None, **kwargs: Any) -> InitializeResponse:
        # efix must advertise neither file-system nor terminal access.
        fs = client_capabilities.fs if client_capabilities else None
        if client_capabilities and (client_capabilities.terminal or (fs and (fs.read_text_file or fs.write_text_file))):
            raise RuntimeError("the client advertised a capability efix must not offer")
        return InitializeResponse(protocol_version=PROTOCOL_VERSION, agent_capabilities=AgentCapabilities())

    async def new_session(self, cwd: str, **kwargs: Any) -> NewSessionResponse:
        self._cwd = Path(cwd)
        return NewSessionResponse(session_id="s1")

    async def _say(self, session_id: str, text: str) -> None:
        # In a few chunks, as a streaming model would.
        step = max(1, len(text) // 3)
        for start in range(0, len(text), step):
            await self._conn.session_update(session_id=session_id, update=update_agent_message(text_block(text[start:start + step])))

    async def _ask(self, session_id: str, call_id: str, title: str, kind: str, path: str | None) -> bool:
        locations = [{"path": path}] if path else None
        update = ToolCallUpdate(tool_call_id=call_id, title=title, kind=kind, locations=locations)
        response = await self._conn.request_permission(session_id=session_id, tool_call=update, options=OPTIONS)
        outcome = response.outcome
        chosen = getattr(outcome, "option_id", None)
        print(f"permission {call_id} ({kind}): {getattr(outcome, 'outcome', '?')} {chosen}", file=sys.stderr)
        return chosen == "allow"

    async def prompt(self, prompt: list, session_id: str, **kwargs: Any) -> PromptResponse:
        text = "".join(getattr(block, "text", "") for block in prompt)
        if "focus_files" in text:
            await self._say(session_id, self._script["plan"])
            return PromptResponse(stop_reason="end_turn")
        await self._conn.session_update(session_id=session_id, update=start_tool_call("run-tests", "Run the tests", kind="execute", status="pending"))
        if await self._ask(session_id, "run-tests", "Run the tests", "execute", None):
            print("efix allowed a command", file=sys.stderr)
        edit = self._script.get("edit")
        if edit:
            target = self._cwd / edit["path"]
            await self._conn.session_update(session_id=session_id, update=start_edit_tool_call("edit-1", f"Edit {edit['path']}", str(target), edit["new"]))
            if await self._ask(session_id, "edit-1", f"Edit {edit['path']}", "edit", str(target)):
                before = target.read_text()
                target.write_text(before.replace(edit["old"], edit["new"], 1))
            for extra in edit.get("also", []):
                also = self._cwd / extra["path"]
                await self._conn.session_update(session_id=session_id, update=start_edit_tool_call(extra["path"], f"Edit {extra['path']}", str(also), extra["new"]))
                if await self._ask(session_id, extra["path"], f"Edit {extra['path']}", "edit", str(also)):
                    also.write_text(also.read_text().replace(extra["old"], extra["new"], 1))
        await self._say(session_id, self._script["fix"])
        return PromptResponse(stop_reason="end_turn")


async def main() -> None:
    script = json.loads(Path(sys.argv[1]).read_text())
    await run_agent(ScriptedAgent(script))


if __name__ == "__main__":
    asyncio.run(main())
