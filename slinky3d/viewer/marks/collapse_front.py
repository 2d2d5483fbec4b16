"""The collapse front: where the closed coils of the top meet the open ones below.

Joint k (0-based) joins half hoops k-1 and k at end point ends[k] (joint 0 joins the
first half hoop to the holder); it is closed when its coils touch (theta at
theta_min, the snapshot's `contact`). Let go of a hanging Slinky and its top coils
close one after another into a stack that grows down the Slinky: the front.

Definition: the top's closed stack is the run of closed joints 1, 2, ..., f-1 (joint 0
is left out: a free Slinky's first joint carries no spring); the front is the first
open joint below it, joint f, at end point ends[f]. There is no front while joint 1 is
open (no stack at the top, as in a hanging Slinky); when every joint 1..N-1 is closed
the stack has reached the bottom and the front is the far end, f = N.
"""

from __future__ import annotations

import numpy as np

from slinky3d.runtime.snapshot import SlinkySnapshot

FRONT_COLOUR = (1.0, 0.55, 0.15, 1.0)  # the front's, as a ring in 3D and in the timeline


def front_index(contact: np.ndarray) -> int | None:
    """The front's joint f from the (N,) closed flags of joints 0..N-1 (None: no stack
    at the top; N: the whole Slinky is closed)."""
    closed = np.asarray(contact, bool)[1:]
    if closed.size == 0 or not closed[0]:
        return None
    open_ = np.flatnonzero(~closed)
    return int(open_[0]) + 1 if open_.size else len(closed) + 1


def front(sl: SlinkySnapshot) -> int | None:
    """The collapse front of a Slinky: the end point index f of `front_index`."""
    return front_index(sl.contact)


def fronts(contacts: np.ndarray) -> np.ndarray:
    """`front_index` of each row of a (T, N) array of closed flags, as floats (nan: no
    front): the collapse front against time, for the contact timeline."""
    c = np.asarray(contacts, bool)
    out = np.full(len(c), np.nan)
    if c.ndim != 2 or c.shape[1] < 2:
        return out
    closed = c[:, 1:]
    n = closed.shape[1]
    first_open = np.where((~closed).any(axis=1), np.argmax(~closed, axis=1), n) + 1
    out[closed[:, 0]] = first_open[closed[:, 0]]
    return out
