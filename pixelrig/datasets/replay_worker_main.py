"""Child-process body of a dataset replay worker, started by :class:`pixelrig.datasets.replay_workers.Workers`
through :mod:`pixelrig.system.process` (``python -m``).

Protocol: the config is the job (the dataset, the new rig as camera dicts, the renderer, the pickled ``make_env`` and
new looks, the renderings to make as ``(index, episode, looks seed)``, whether the state after each episode's last
action is rendered too). It answers ready with the backend it draws with, then sends ``("items", index, [items])`` in
order, at most
:data:`~pixelrig.datasets.replay_workers.BATCH` frames a message, and ends. An error while rendering is sent as
``("error", exception, traceback text)`` (the replaying process raises it); an error while starting is the
helper's error answer.
"""

from __future__ import annotations

import pickle
from multiprocessing.connection import Connection
from typing import Any

from pixelrig.datasets.replay_workers import BATCH
from pixelrig.system.process import ready, report_error, serve


def main(conn: Connection, job: dict[str, Any]) -> int:
    """A worker's life: open the dataset, build the env and rig, answer ready, re-render its episodes, send them."""
    from pixelrig.cameras.spec import Camera
    from pixelrig.datasets.formats import open_dataset
    from pixelrig.datasets.rebuild import make_recorded_env
    from pixelrig.datasets.rerender import EpisodeEnd, Item, SnapshotDrawer, episode_items
    from pixelrig.wrappers.pixel_obs import PixelObs

    make_env = pickle.loads(job["make_env"]) if job["make_env"] is not None else None
    looks = pickle.loads(job["looks"]) if job["looks"] is not None else None
    cameras = tuple(Camera.from_dict(c) for c in job["cameras"])
    reader = open_dataset(job["src"])
    drawer = None
    try:
        info, renderer = reader.info, job["renderer"]

        def make_pixel() -> PixelObs:
            inner = make_env() if make_env is not None else make_recorded_env(info, renderer)
            return PixelObs(inner, cams=cameras, pixels_only=True, renderer=renderer if make_env is not None else None,
                            background=looks.background if looks is not None and looks.background else False)

        drawer = SnapshotDrawer(make_pixel, cameras, looks)
        ready(conn, drawer.backend)
        try:
            for j, e, looks_seed in job["renderings"]:
                batch: list[Item] = []
                for item in episode_items(reader, drawer, e, job["needs_next_obs"], info.state_shape, looks_seed):
                    batch.append(item)
                    if isinstance(item, EpisodeEnd) or len(batch) >= BATCH:
                        conn.send(("items", j, batch))
                        batch = []
        except (BrokenPipeError, ConnectionResetError):
            return 0  # the replaying process stopped listening (it failed, or was interrupted): nothing to tell
        except Exception as exc:  # noqa: BLE001 - everything goes back to the replaying process
            report_error(conn, exc)
        return 0
    finally:
        if drawer is not None:
            drawer.close()
        reader.close()


if __name__ == "__main__":
    serve(main)
