"""The read-before-write policy (spec §6.2): writes and edits only over what the caller has seen.

Keeps, per owner and per target key, the last authoritative observation (`fs/observed`), and
answers the two intent waterfalls from it:

  write: seen present ⇒ `ReplaceIfVersion(version)`; never seen or seen absent ⇒
         `CreateIfAbsent()` (new files need no read; overwriting needs a read at that version).
  edit:  never seen ⇒ FS_NOT_OBSERVED `edit requires reading "<p>" first`; seen absent ⇒
         FS_NOT_FOUND `cannot edit "<p>": not found`; seen present ⇒ `EditGuard(version)`.

The owner is the calling agent's `session` (or the agent itself when it has none). Python
decision: calls made without an agent (`tether tools call`, tests, scripts) share one anonymous
owner instead of being refused, so the policy also protects direct callers. Owners are held
weakly where they allow it. Without this plugin, writes and edits are unconditional.

Pre-flight (`approval/preflight`, asked by the approval service before it asks anyone): an
`edit` or `write` that would fail anyway — an edit of a file never read or seen absent, a write
over an existing file never read — is denied with that error (and its next step) instead of
being asked about.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from ...core.errors import error_message
from ...kernel import Context
from ...kernel.events import Next
from ...tools.execution import ToolExecution
from ..approval.service import PREFLIGHT_EVENT
from .errors import FS_NOT_FOUND, FS_NOT_OBSERVED, FsError
from .seam import EDIT_INTENT, OBSERVED, WRITE_INTENT

if TYPE_CHECKING:  # the records are imported by the first intent asked (issue 36)
    from .records import EditGuard, FsTarget, Observation, WriteIntent

__all__ = ["ObservationLog", "apply", "name"]

name: Final = "fs-observation-policy"


class _Anonymous:
    """The shared owner of calls made without an agent."""

    __slots__ = ("__weakref__",)


class ObservationLog:
    """Per-owner, per-target last observations."""

    def __init__(self) -> None:
        self._anonymous = _Anonymous()
        self._weak: weakref.WeakKeyDictionary[object, dict[str, Observation]] = (
            weakref.WeakKeyDictionary()
        )
        self._strong: dict[int, tuple[object, dict[str, Observation]]] = {}

    def _owner(self, actor: object) -> object:
        if actor is None:
            return self._anonymous
        session = getattr(actor, "session", None)
        return actor if session is None else session

    def _table(self, actor: object, create: bool) -> dict[str, Observation] | None:
        owner = self._owner(actor)
        try:
            table = self._weak.get(owner)
            if table is None and create:
                table = self._weak[owner] = {}
            return table
        except TypeError:  # not weak-referenceable (or unhashable): keep it by identity
            entry = self._strong.get(id(owner))
            if entry is None:
                if not create:
                    return None
                entry = self._strong[id(owner)] = (owner, {})
            return entry[1]

    def record(self, target: FsTarget, observation: Observation, actor: object) -> None:
        """`fs/observed` listener: remember `observation` as the latest for this owner."""
        table = self._table(actor, create=True)
        if table is not None:
            table[target.key] = observation

    def last(self, target: FsTarget, actor: object) -> Observation | None:
        """The latest observation of `target` by this actor's owner, None when never seen."""
        table = self._table(actor, create=False)
        return None if table is None else table.get(target.key)

    async def write_intent(
        self, target: FsTarget, actor: object, next: Next[WriteIntent]
    ) -> WriteIntent:
        from .records import CreateIfAbsent, Present, ReplaceIfVersion  # issue 36: first use

        seen = self.last(target, actor)
        if isinstance(seen, Present):
            return ReplaceIfVersion(seen.version)
        return CreateIfAbsent()

    async def edit_intent(
        self, target: FsTarget, actor: object, next: Next[EditGuard | None]
    ) -> EditGuard | None:
        from .records import Absent, EditGuard  # issue 36: at the first edit

        seen = self.last(target, actor)
        display = target.display_path
        if seen is None:
            raise FsError(f'edit requires reading "{display}" first', FS_NOT_OBSERVED)
        if isinstance(seen, Absent):
            raise FsError(f'cannot edit "{display}": not found', FS_NOT_FOUND)
        return EditGuard(seen.version)


def apply(ctx: Context) -> None:
    """Listen to `fs/observed` and answer `fs/write-intent` / `fs/edit-intent`."""
    log = ObservationLog()
    ctx.on(OBSERVED, log.record)
    ctx.on(WRITE_INTENT, log.write_intent)
    ctx.on(EDIT_INTENT, log.edit_intent)

    async def preflight(exec: ToolExecution) -> str | None:
        arguments = exec.arguments
        if exec.name not in ("edit", "write"):
            return None
        path = arguments.get("file_path") if isinstance(arguments, Mapping) else None
        fs: Any = ctx.get("fs")
        if not isinstance(path, str) or fs is None:
            return None
        from .records import Present
        from .tools import remediate, session_cwd

        try:
            target = await fs.resolve(path, cwd=session_cwd(exec.agent), signal=exec.signal)
            if exec.name == "edit":
                await log.edit_intent(target, exec.agent, _no_guard)
            elif (
                not isinstance(log.last(target, exec.agent), Present)
                and await fs.stat(target, signal=exec.signal) is not None
            ):
                display = target.display_path
                raise FsError(
                    f'cannot overwrite existing "{display}" without reading it first',
                    FS_NOT_OBSERVED,
                )
        except FsError as error:
            return error_message(remediate(error))
        except Exception:
            return None
        return None

    ctx.on(PREFLIGHT_EVENT, preflight)


async def _no_guard() -> EditGuard | None:
    return None
