"""Recorded runs on disk: the .npz that `slinky3d simulate` writes and `figure` reads.

Per Slinky (suffix "" for the first, "_1", "_2", ... for the others, as `recording.record`
returns them): `ends` (n, N+1, 3) m, (x, y, z), with index 0 the anchored end E_1,
`theta` and `theta_dot` (n, N), `energy` (n,) J, `n_contacts` (n,), `params` (JSON
string). `t` (n,) s is shared. `meta` is a JSON string: scene, solver, overrides, run
statistics. A planar run's ends have z = 0; files written before the 3D model, whose
ends are (n, N+1, 2), are read as z = 0.
"""

from __future__ import annotations

import json
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from slinky3d.errors import SlinkyError
from slinky3d.model.chain3d import in_space
from slinky3d.output.paths import cannot_write

EXTENSION = ".npz"  # what `simulate` and `run --log-state` write, whatever the name

PER_SLINKY = ("ends", "theta", "theta_dot", "energy", "n_contacts", "params")


def suffix(i: int) -> str:
    """Array-name suffix of Slinky i (0-based)."""
    return "" if i == 0 else f"_{i}"


@dataclass(frozen=True)
class Track:
    """One Slinky's recorded arrays."""

    ends: np.ndarray  # (n, N+1, 3)
    theta: np.ndarray  # (n, N)
    theta_dot: np.ndarray  # (n, N)
    energy: np.ndarray  # (n,)
    n_contacts: np.ndarray  # (n,)
    params: dict[str, Any]

    @property
    def N(self) -> int:
        return int(self.theta.shape[1])


@dataclass(frozen=True)
class Trajectory:
    """A whole recorded run: shared sample times, one Track per Slinky, metadata."""

    t: np.ndarray
    tracks: tuple[Track, ...]
    meta: dict[str, Any] = field(default_factory=dict)

    def index(self, time: float) -> int:
        """The sample nearest to `time`."""
        return int(np.argmin(np.abs(self.t - time)))


def _text(v: Any) -> str:
    return v if isinstance(v, str) else str(np.asarray(v)[()])


def from_data(data: dict[str, Any], meta: dict[str, Any] | None = None,
              where: str = "recording") -> Trajectory:
    """A Trajectory from `recording.record`'s dict (or a loaded npz)."""
    if "t" not in data:
        raise SlinkyError(f"{where}: no sample times 't' in it; not a slinky3d recording")
    tracks = []
    i = 0
    while "ends" + suffix(i) in data:
        s = suffix(i)
        missing = [k + s for k in PER_SLINKY if k + s not in data]
        if missing:
            raise SlinkyError(f"{where}: missing arrays {', '.join(missing)}")
        tracks.append(Track(
            ends=in_space(data["ends" + s]),
            theta=np.asarray(data["theta" + s], dtype=float),
            theta_dot=np.asarray(data["theta_dot" + s], dtype=float),
            energy=np.asarray(data["energy" + s], dtype=float),
            n_contacts=np.asarray(data["n_contacts" + s]),
            params=json.loads(_text(data["params" + s])),
        ))
        i += 1
    if not tracks:
        raise SlinkyError(f"{where}: no 'ends' array in it; not a slinky3d recording")
    if meta is None:
        meta = json.loads(_text(data["meta"])) if "meta" in data else {}
    return Trajectory(t=np.asarray(data["t"], dtype=float), tracks=tuple(tracks), meta=meta)


def save(path: str | Path, data: dict[str, Any], meta: dict[str, Any]) -> Path:
    """Write `recording.record`'s arrays and the run's metadata as a compressed .npz."""
    path = Path(path)
    # Any: savez's **kwds share their name space with its allow_pickle: bool.
    arrays: dict[str, Any] = {k: (np.str_(v) if isinstance(v, str) else
                                  in_space(v) if k.startswith("ends") else np.asarray(v))
                              for k, v in data.items()}
    arrays["meta"] = np.str_(json.dumps(meta, default=_jsonable))
    try:
        # A file object, not a name: np.savez would append ".npz" to other names.
        with open(path, "wb") as f:
            np.savez_compressed(f, **arrays)
    except OSError as e:
        raise cannot_write("", path, e) from None
    return path


def _jsonable(v: Any) -> Any:
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, np.ndarray):
        return v.tolist()
    return str(v)


def load(path: str | Path) -> Trajectory:
    """Read a recording written by `save`."""
    path = Path(path)
    try:
        with np.load(path, allow_pickle=False) as z:
            data = {k: z[k] for k in z.files}
    except FileNotFoundError:
        raise SlinkyError(f"{path}: no such recording") from None
    except (OSError, ValueError, zipfile.BadZipFile) as e:
        raise SlinkyError(f"{path}: not a readable .npz recording ({e})") from None
    return from_data(data, where=str(path))
