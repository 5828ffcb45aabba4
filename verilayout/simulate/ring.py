"""The mbarrier ring as a transition system: what every explorer of it shares. One CTA's ring
(:mod:`verilayout.simulate.gemm_check`, sm_90a and sm_100a) and a cluster's rings
(:mod:`verilayout.simulate.cluster_protocol`, the N-CTA instance) are explored by the same
breadth-first search (:func:`explore`), cut into the same atomic steps (:func:`step_ends`), and
move their mbarriers and wgmma groups by the same rules (:func:`complete_phase`,
:func:`retire_groups`); each keeps its own state layout and words.

The rules are the PTX ISA's: an mbarrier's phase completes when its pending arrivals and its
tx-count are both zero, and the next phase expects the init count again (PTX ISA 9.7.13.15,
"mbarrier"); ``wgmma.wait_group N`` waits until all but the N most recent committed groups
completed (PTX ISA 9.7.15.7, ``wgmma.wait_group``).

>>> step_ends([("wait",), ("read",), ("arrive",), ("wait",)])
[3, 3, 3, 4]
"""
from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any, NamedTuple

__all__ = ["GUARDS", "ARRIVALS", "step_ends", "complete_phase", "retire_groups", "Exploration",
           "explore"]

#: Actions that may block a process (an mbarrier wait, a cluster barrier wait).
GUARDS = ("wait", "cwait")
#: Actions other processes observe (an mbarrier arrival, a cluster barrier arrival).
ARRIVALS = ("arrive", "carrive")


def step_ends(acts: list) -> list[int]:
    """Law: ``ends[pc]`` is the first ``j > pc`` where ``acts[j]`` is a guard (:data:`GUARDS`) or
    ``acts[j - 1]`` an arrival (:data:`ARRIVALS`), else ``len(acts)``: the atomic step of a
    process at ``pc`` is ``acts[pc:ends[pc]]`` (from a guard up to the next guard or through the
    next arrival: what happens in between touches the process's own state).

    >>> step_ends([("wait",), ("read",), ("arrive",), ("tma",), ("wait",)])
    [3, 3, 3, 4, 5]
    >>> step_ends([("wait",), ("read",), ("carrive",), ("cwait",)])
    [3, 3, 3, 4]
    """
    n = len(acts)
    ends, nxt = [n] * n, n
    for j in range(n - 1, -1, -1):
        ends[j] = nxt
        if acts[j][0] in GUARDS or (j > 0 and acts[j - 1][0] in ARRIVALS):
            nxt = j
    return ends


def complete_phase(phase: int, pending: int, tx: int, count: int) -> tuple[int, int, int]:
    """Law: ``(phase ^ 1, count, 0)`` when ``pending == tx == 0`` (the phase completes and the
    next one expects ``count`` arrivals), else the arguments unchanged.

    >>> complete_phase(0, 0, 0, 2), complete_phase(0, 1, 0, 2), complete_phase(1, 0, -64, 2)
    ((1, 2, 0), (0, 1, 0), (1, 0, -64))
    """
    if pending == 0 and tx == 0:
        return phase ^ 1, count, tx
    return phase, pending, tx


def retire_groups(groups: tuple, n: int) -> tuple[tuple, tuple]:
    """Law: ``(retired, pending)`` after ``wgmma.wait_group n`` on the committed ``groups``
    (oldest first): all but the ``n`` most recent retire; ``retired + pending == groups``.

    >>> retire_groups(("g0", "g1", "g2"), 1), retire_groups(("g0",), 0)
    ((('g0', 'g1'), ('g2',)), (('g0',), ()))
    """
    pending = groups[len(groups) - n:] if n else ()
    return groups[:len(groups) - len(pending)], pending


class Exploration(NamedTuple):
    """The answer of :func:`explore`: ``outcome`` (``proved``, ``counterexample``, ``deadlock``
    or ``unknown``), the error ``(message, mark)`` of a counterexample, what each blocked
    process waits for in a deadlock, and the number of states seen."""
    outcome: str
    error: Any
    blocked: tuple
    states: int


def explore(start: Any, step: Callable, prog: Any, canon: Callable | None = None, *,
            max_states: int) -> Exploration:
    """Breadth first over every state reachable from ``start``. ``step(s)`` gives
    ``(successors, error, blocked)``; ``canon`` (if any) maps a successor to its class's
    representative (a symmetry); ``prog`` holds each process's actions.

    Law: ``counterexample`` with the first error a step reports; ``deadlock`` at a state with no
    successor where a process is not at the end of its program (``s[0]``: the pcs) or a TMA is
    in flight (``s[2]``); ``unknown`` once more than ``max_states`` states were seen; else
    ``proved``.

    >>> s0 = ((0,), (), frozenset())                 # one process at pc 0, nothing in flight
    >>> explore(s0, lambda s: ([], None, ["p waits"]), [[("wait",)]], max_states=10)[:3]
    ('deadlock', None, ('p waits',))
    >>> explore(s0, lambda s: ([], None, []), [[]], max_states=10)
    Exploration(outcome='proved', error=None, blocked=(), states=1)
    """
    seen = {start}
    queue = deque([start])
    while queue:
        if len(seen) > max_states:
            return Exploration("unknown", None, (), len(seen))
        s = queue.popleft()
        succ, err, blocked = step(s)
        if err:
            return Exploration("counterexample", err, (), len(seen))
        if not succ:
            if all(pc == len(prog[p]) for p, pc in enumerate(s[0])) and not s[2]:
                continue
            return Exploration("deadlock", None, tuple(blocked), len(seen))
        for n in succ:
            if canon is not None:
                n = canon(n)
            k = len(seen)
            seen.add(n)
            if len(seen) != k:
                queue.append(n)
    return Exploration("proved", None, (), len(seen))
