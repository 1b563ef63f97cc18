"""Which EGL device renders: mapping a CUDA GPU (what cluster schedulers hand out) to pybullet's EGL index.

pybullet's EGL plugin picks its device from ``EGL_VISIBLE_DEVICES``, an index into ``eglQueryDevicesEXT``'s list,
which is not the CUDA numbering. The devices are listed (with each one's CUDA ordinal, ``EGL_CUDA_DEVICE_NV``)
in a helper process, and a worker's CUDA device -- from ``gpu=``, or from its rank among the GPUs
``CUDA_VISIBLE_DEVICES`` lists -- is matched to its EGL index, which is set before the plugin loads.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

from pixelrig.errors import HelperFailed
from pixelrig.system.process import Helper

_MODULE = "pixelrig.render.probe_main"


@dataclass(frozen=True)
class EglDevice:
    """One entry of ``eglQueryDevicesEXT``'s list.

    Attributes:
        index: position in the list (what ``EGL_VISIBLE_DEVICES`` means).
        cuda: the device's CUDA ordinal (``EGL_CUDA_DEVICE_NV``), None for non-NVIDIA devices.
        software: a software renderer (Mesa's ``EGL_MESA_device_software``).
        drm: its DRM device file, when it reports one.
        extensions: its device extension string.
    """

    index: int
    cuda: int | None = None
    software: bool = False
    drm: str | None = None
    extensions: str = ""


def list_egl_devices(timeout: float = 60.0) -> list[EglDevice]:
    """The EGL devices of this machine, listed in a helper process (CUDA ordinals in the machine's own numbering:
    ``CUDA_VISIBLE_DEVICES`` is removed for the query). Empty when EGL device enumeration is unavailable."""
    try:
        helper = Helper.start(_MODULE, {"probe": "devices"}, what="the EGL device listing process", timeout=timeout,
                              env={"CUDA_VISIBLE_DEVICES": None, "EGL_VISIBLE_DEVICES": None})
    except HelperFailed:
        return []  # EGL crashed or hung while listing: as good as no device to map
    helper.stop(5.0)
    return [EglDevice(**d) for d in helper.payload]


def visible_cuda_devices(devices: Sequence[EglDevice], cuda_visible: str | None) -> list[int]:
    """The CUDA ordinals a process may use, in its own order: ``CUDA_VISIBLE_DEVICES`` when set, else every CUDA
    device EGL reports (by ordinal).

    Raises:
        ValueError: ``CUDA_VISIBLE_DEVICES`` names GPUs by UUID or MIG id (only ordinals map to EGL here).
    """
    if cuda_visible is None:
        return sorted(d.cuda for d in devices if d.cuda is not None)
    entries = [e.strip() for e in cuda_visible.split(",") if e.strip()]
    out = []
    for entry in entries:
        try:
            ordinal = int(entry)
        except ValueError:
            raise ValueError(
                f"CUDA_VISIBLE_DEVICES={cuda_visible!r} names GPUs by UUID; pixelrig maps CUDA ordinals to EGL "
                "devices: list ordinals, or pass gpu= with EGL_VISIBLE_DEVICES set yourself"
            ) from None
        if ordinal < 0:
            break  # CUDA stops at the first invalid entry
        out.append(ordinal)
    return out


def egl_index_for(devices: Sequence[EglDevice], *, gpu: int | None = None, rank: int | None = None,
                  cuda_visible: str | None = None) -> int:
    """The ``EGL_VISIBLE_DEVICES`` index of a worker's GPU.

    Args:
        devices: the machine's EGL devices (:func:`list_egl_devices`).
        gpu: index into this process's CUDA devices (the ``CUDA_VISIBLE_DEVICES`` order), as a framework's
            ``cuda:<gpu>`` would use.
        rank: when ``gpu`` is None, the worker's rank: worker r renders on visible GPU ``r % n``.
        cuda_visible: the ``CUDA_VISIBLE_DEVICES`` value (None: unset).

    Raises:
        ValueError: no CUDA device is visible, ``gpu`` is out of range, or no EGL device is that GPU; the message
            lists what there is.
    """
    visible = visible_cuda_devices(devices, cuda_visible)
    listing = ", ".join(f"EGL {d.index} = CUDA {d.cuda}" if d.cuda is not None else
                        f"EGL {d.index} = {'software' if d.software else 'non-CUDA'}" for d in devices) or "none"
    if not visible:
        raise ValueError(f"no CUDA device is visible to map to EGL (CUDA_VISIBLE_DEVICES={cuda_visible!r}; EGL "
                         f"devices: {listing})")
    local = gpu if gpu is not None else (rank % len(visible) if rank is not None else 0)
    if isinstance(local, bool) or not isinstance(local, int) or not 0 <= local < len(visible):
        raise ValueError(f"gpu={gpu!r} is not one of the {len(visible)} visible CUDA devices "
                         f"(CUDA_VISIBLE_DEVICES={cuda_visible!r})")
    ordinal = visible[local]
    for device in devices:
        if device.cuda == ordinal:
            return device.index
    raise ValueError(f"no EGL device is CUDA device {ordinal}; EGL devices: {listing}")


def select_gpu(gpu: int | None = None, rank: int | None = None,
               environ: Mapping[str, str] | None = None) -> str | None:
    """Set ``EGL_VISIBLE_DEVICES`` for this process to the EGL index of its GPU; returns the value set.

    Does nothing (returns None) when neither ``gpu`` nor ``rank`` is given and ``PIXELRIG_GPU`` is unset, or
    when the user set ``EGL_VISIBLE_DEVICES`` and no ``gpu`` was asked for. Must run before the EGL plugin
    loads (pixelrig's envs call it right before).
    """
    env = os.environ if environ is None else environ
    if gpu is None and "PIXELRIG_GPU" in env:
        gpu = int(env["PIXELRIG_GPU"])
    if gpu is None and rank is None:
        return None
    if gpu is None and "EGL_VISIBLE_DEVICES" in env:
        return None
    index = str(egl_index_for(list_egl_devices(), gpu=gpu, rank=rank, cuda_visible=env.get("CUDA_VISIBLE_DEVICES")))
    os.environ["EGL_VISIBLE_DEVICES"] = index
    return index


def describe(devices: Sequence[EglDevice]) -> list[dict]:
    """Plain dicts for printing."""
    return [asdict(d) for d in devices]
