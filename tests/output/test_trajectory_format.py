"""The .npz trajectory's end points are (samples, N + 1, 3); files written before the
3D model, with (samples, N + 1, 2), still read (as z = 0)."""

import numpy as np

from slinky3d.output import trajectory


def _data(ends):
    n = ends.shape[0]
    k = ends.shape[1] - 1
    return {"t": np.arange(n) * 0.01, "ends": ends, "theta": np.zeros((n, k)),
            "theta_dot": np.zeros((n, k)), "energy": np.zeros(n),
            "n_contacts": np.zeros(n, np.int64), "params": "{}"}


def test_written_in_3d_and_old_files_read(tmp_path):
    rng = np.random.default_rng(2)
    flat = rng.normal(size=(4, 6, 2))
    path = trajectory.save(tmp_path / "new.npz", _data(flat), {"scene": "x"})
    with np.load(path) as z:
        assert z["ends"].shape == (4, 6, 3)
        assert np.array_equal(z["ends"][..., :2], flat) and np.all(z["ends"][..., 2] == 0)
    old = tmp_path / "old.npz"  # as the planar versions wrote it
    np.savez(old, **{k: (np.str_(v) if isinstance(v, str) else v)
                     for k, v in _data(flat).items()})
    for p in (path, old):
        with np.load(p) as z:
            tr = trajectory.from_data(dict(z)).tracks[0]
        assert tr.ends.shape == (4, 6, 3) and np.array_equal(tr.ends[..., :2], flat)
    spatial = rng.normal(size=(4, 6, 3))
    with np.load(trajectory.save(tmp_path / "3d.npz", _data(spatial), {})) as z:
        assert np.array_equal(z["ends"], spatial)
