"""The gl renderer's pipeline: shared geometry and textures on the GPU, and :meth:`GlPipeline.submit`, which draws any
number of cameras of any number of pybullet clients into one framebuffer (tiled viewports) with one readback per
buffer.

Drawing: one indexed vertex buffer holds every mesh (cached per file and scale, shared by every client of the
process), per-instance model matrices are vertex attributes composed on the CPU, and each camera is one indirect
multi-draw of its client's instances sorted front to back. Colour (RGBA8), linear eye depth (R32F) and the
segmentation value (R32I) come from one pass; depth is converted back to pybullet's z-buffer convention in
float64. When a request asks for normals, the pass uses a program that writes them too (the same shader plus one
output) and a framebuffer with a fourth target (RGBA32F world normals); without such a request nothing changes. The
shadow test is compiled into the program only for passes in which some camera's light casts shadows. Not thread-safe:
call from one thread at a time.

Each camera is lit by its own :class:`~pixelrig.render.lighting.Lighting` (uniforms set per camera). Cameras whose
light casts shadows first get TinyRenderer's shadow map, drawn into a framebuffer of their own tiles: the scene from
the shadow camera (:func:`~pixelrig.render.lighting.shadow_view`, with the camera's own projection and image size,
both faces of every triangle, as TinyRenderer draws it), keeping each pixel's least clip-space z; the colour pass
then looks each fragment up in it as TinyRenderer does. Textures set at run time (:mod:`pixelrig.render.textures`)
live in a second texel buffer, rebuilt from the textures in use when they change.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pybullet as p

from pixelrig.render import textures
from pixelrig.render.backends import CameraRequest, Frame
from pixelrig.render.gl import context as glc
from pixelrig.render.gl.meshes import MeshData
from pixelrig.render.gl.scene import Scene, build_scene, compose_frames, link_poses, read_visuals, signature_of
from pixelrig.render.gl.shaders import SHADOW_FRAGMENT, SHADOW_VERTEX, VERTEX, fragment
from pixelrig.render.lighting import DEFAULT_LIGHTING, Lighting, shadow_view

MAX_SIDE = 16384  # renderbuffers are at most this many pixels a side (llvmpipe)
NO_SHADOW = 1e30  # the shadow map's clear value: TinyRenderer clears its own to -1e30 and stores -z
_INSTANCE_DTYPE = np.dtype([("m", "<f4", (12,)), ("color", "<f4", (4,)), ("meta", "<i4", (4,))])


@dataclass
class _Geometry:
    first_index: int
    count: int
    base_vertex: int
    texel_offset: int
    tex_w: int
    tex_h: int
    radius: float  # bounding radius about the local origin (for draw ordering)


class _ClientState:
    """A client's scene plus the per-instance data that only changes when the scene does."""

    def __init__(self) -> None:
        self.scene: Scene | None = None
        self.force_rebuild = False
        self.static: np.ndarray = np.zeros(0, _INSTANCE_DTYPE)
        self.draw: np.ndarray = np.zeros((0, 3), np.int64)  # per instance: count, first index, base vertex
        self.radius: np.ndarray = np.zeros(0)  # per instance: bounding radius
        self.visible: np.ndarray = np.zeros(0, bool)
        self.meta: np.ndarray = np.zeros((0, 4), np.int32)  # per instance, as the geometry gives it (no set texture)
        self.texture_key: tuple[int, int] | None = None  # (textures' version, pipeline's set-texel generation)


class _Slot:
    """The GL objects one submitted batch draws with: its instance and indirect buffers, its vertex arrays (which
    bind the instance buffer) and its framebuffer. A batch that is still being rasterised keeps its slot, and the
    next batch takes another, so that drawing it never waits for the previous one (llvmpipe waits before it
    overwrites a buffer or a target that a queued draw still uses)."""

    def __init__(self) -> None:
        self.inst: Any = None
        self.indirect: Any = None
        self.vaos: dict[tuple[bool, bool], Any] = {}  # (normals, shadows) -> the colour program's vertex array
        self.fbo: Any = None
        self.fbo_normals: Any = None  # the fbo's three targets plus a normal target, made when first needed
        self.fbo_size = (0, 0)
        self.vao_shadow: Any = None
        self.shadow_fbo: Any = None  # the shadow map (R32F texture) and its depth buffer, made when first needed
        self.shadow_size = (0, 0)
        self.busy = False

    def release_vaos(self) -> None:
        for vao in (*self.vaos.values(), self.vao_shadow):
            if vao is not None:
                vao.release()
        self.vaos, self.vao_shadow = {}, None

    def release_shadow(self) -> None:
        _release_framebuffer(self.shadow_fbo)
        self.shadow_fbo, self.shadow_size = None, (0, 0)

    def release_framebuffers(self) -> None:
        if self.fbo_normals is not None:
            self.fbo_normals.color_attachments[3].release()
            self.fbo_normals.release()
            self.fbo_normals = None
        _release_framebuffer(self.fbo)
        self.fbo, self.fbo_size = None, (0, 0)


def _release_framebuffer(fbo: Any) -> None:
    """Release a framebuffer and every attachment of it (nothing for None)."""
    if fbo is not None:
        for att in (*fbo.color_attachments, fbo.depth_attachment):
            att.release()
        fbo.release()


class PendingBatch:
    """A batch of cameras drawn and sent to the GL (``glFlush``) but not yet read back: :meth:`collect` waits for it
    and returns the frames. Between :meth:`GlPipeline.submit` and :meth:`collect` the caller may do other work (step
    physics, submit further batches) while llvmpipe rasterises in its own threads."""

    def __init__(self, owner: GlPipeline, slot: _Slot, requests: Sequence[CameraRequest],
                 tiles: list[tuple[int, int]], size: tuple[int, int]) -> None:
        self._owner = owner
        self._slot: _Slot | None = slot
        self.requests = list(requests)
        self.tiles = tiles
        self.size = size

    def collect(self) -> list[Frame]:
        """The frames, one per request in order (waits for the GL to finish this batch).

        Raises:
            RuntimeError: collected twice.
        """
        slot = self._slot
        if slot is None:
            raise RuntimeError("this gl batch was already collected")
        try:
            return self._owner.read(slot, self.requests, self.tiles, self.size)
        finally:
            self.discard()

    def discard(self) -> None:
        """Give the batch's GL objects back without reading them (idempotent)."""
        if self._slot is not None:
            self._slot.busy = False
            self._slot = None


class _Layout:
    """What a batch's instance and command buffers look like for given requests over given scenes, everything that
    only changes when they do: the clients' instances concatenated (static data, frames to pose them with) and every
    (camera, visible instance of its client) pair.

    Holds the scenes and arrays it was made from, so that their ``id``s (the cache key) stay theirs.
    """

    def __init__(self, owners: Sequence[int], clients: list[int], states: dict[int, _ClientState]) -> None:
        self.keep = [(states[c].static, states[c].visible) for c in clients]
        self.scenes: list[tuple[int, Scene]] = []  # (client, scene) in instance order
        base, frames, n = {}, 0, 0
        base_rows, instance_frame = [], []
        for client in clients:
            scene = states[client].scene
            assert scene is not None  # GlPipeline._refresh built it
            self.scenes.append((client, scene))
            base[client] = n
            n += len(states[client].static)
            base_rows.append(scene.base_rows + frames)
            instance_frame.append(scene.instance_frame + frames)
            frames += len(scene.frame_index)
        self.static = np.concatenate([states[c].static for c in clients])
        self.base_rows = np.concatenate(base_rows)
        self.base_inv = np.concatenate([scene.base_inv for _, scene in self.scenes])
        self.instance_frame = np.concatenate(instance_frame)
        self.local = np.concatenate([scene.local for _, scene in self.scenes])
        radius = np.concatenate([states[c].radius for c in clients])
        visible = np.concatenate([states[c].visible for c in clients])
        self.draw = np.concatenate([states[c].draw for c in clients]).astype(np.uint32)
        first = np.array([base[c] for c in owners], np.int64)
        length = np.array([len(states[c].static) for c in owners], np.int64)
        req = np.repeat(np.arange(len(owners)), length)
        inst = np.arange(len(req)) - np.repeat(np.cumsum(length) - length, length) + np.repeat(first, length)
        keep = visible[inst]
        self.req, self.inst = req[keep], inst[keep]
        self.radius = radius[self.inst]


class GlPipeline:
    """Process-wide renderer state: the GL objects, the geometry registry and every client's scene."""

    def __init__(self) -> None:
        self.ctx: Any = None
        self.programs: dict[tuple[bool, bool], Any] = {}  # (normals, shadows) -> colour program, compiled when needed
        self.prog_shadow: Any = None  # compiled when a light first casts shadows
        self.geometry: dict[Any, _Geometry] = {}
        self.vertices: list[np.ndarray] = []
        self.indices: list[np.ndarray] = []
        self.n_vertices = 0
        self.n_indices = 0
        self.texels: list[np.ndarray] = [np.zeros(1, np.uint32)]
        self.n_texels = 1
        self.textures: dict[int, int] = {}  # id(texture array) -> texel offset
        self._texture_refs: list[np.ndarray] = []
        self.dirty = True
        self.vbo: Any = None
        self.ibo: Any = None
        self.ssbo: Any = None
        self.set_texels: dict[str, tuple[int, np.ndarray]] = {}  # digest -> (offset, packed texels), set textures
        self.n_set_texels = 0
        self.set_generation = 0  # bumped when the set-texel buffer is rebuilt (every client's offsets change)
        self.set_dirty = True
        self.set_ssbo: Any = None
        self.slots: list[_Slot] = []
        self.clients: dict[int, _ClientState] = {}
        self._layouts: dict[tuple, _Layout] = {}

    # ---- GL objects --------------------------------------------------------------------------------------------

    def _ensure_context(self) -> None:
        if self.ctx is not None:
            return
        self.ctx = glc.get_context()

    def _program(self, normals: bool, shadows: bool) -> Any:
        """The colour pass's program that also writes normals, or tests shadows, or both or neither (compiled on
        first use; :func:`pixelrig.render.gl.shaders.fragment`)."""
        key = (normals, shadows)
        if key not in self.programs:
            self.programs[key] = self.ctx.program(vertex_shader=VERTEX, fragment_shader=fragment(normals, shadows))
        return self.programs[key]

    def _shadow_program(self) -> Any:
        """The shadow map's program (compiled on first use)."""
        if self.prog_shadow is None:
            self.prog_shadow = self.ctx.program(vertex_shader=SHADOW_VERTEX, fragment_shader=SHADOW_FRAGMENT)
        return self.prog_shadow

    def _add_geometry(self, key: Any, mesh: MeshData) -> _Geometry:
        geo = self.geometry.get(key)
        if geo is not None:
            return geo
        offset, w, h = -1, 0, 0
        if mesh.texture is not None:
            tid = id(mesh.texture)
            if tid not in self.textures:
                t = mesh.texture.astype(np.uint32)
                packed = (t[..., 0] | (t[..., 1] << 8) | (t[..., 2] << 16) | (255 << 24)).reshape(-1)
                self.textures[tid] = self.n_texels
                self._texture_refs.append(mesh.texture)  # keep the id valid
                self.texels.append(packed.astype(np.uint32))
                self.n_texels += len(packed)
            offset, h, w = self.textures[tid], mesh.texture.shape[0], mesh.texture.shape[1]
        radius = float(np.linalg.norm(mesh.vertices[:, :3], axis=1).max()) if len(mesh.vertices) else 0.0
        geo = _Geometry(self.n_indices, len(mesh.indices), self.n_vertices, offset, w, h, radius)
        self.vertices.append(mesh.vertices)
        self.indices.append(mesh.indices)
        self.n_vertices += len(mesh.vertices)
        self.n_indices += len(mesh.indices)
        self.geometry[key] = geo
        self.dirty = True
        return geo

    def _set_texture(self, image: textures.TextureImage) -> int:
        """The offset of a texture set at run time in the set-texel buffer (appended the first time)."""
        found = self.set_texels.get(image.digest)
        if found is None:
            t = image.pixels[::-1].astype(np.uint32)  # rows flipped, as mesh textures are: row 0 = v 0
            packed = (t[..., 0] | (t[..., 1] << 8) | (t[..., 2] << 16) | np.uint32(255 << 24)).reshape(-1)
            found = self.set_texels[image.digest] = (self.n_set_texels, packed)
            self.n_set_texels += len(packed)
            self.set_dirty = True
        return found[0]

    def _compact_set_texels(self, in_use: set[str]) -> None:
        """Rebuild the set-texel buffer from the textures in use when more than half of it (and over 4 Mi texels)
        holds textures no client wears any more; every client's offsets are then recomputed."""
        if self.n_set_texels <= (4 << 20):
            return
        kept = {d: v for d, v in self.set_texels.items() if d in in_use}
        if sum(len(v[1]) for v in kept.values()) * 2 > self.n_set_texels:
            return
        self.set_texels, self.n_set_texels = {}, 0
        for digest, (_, packed) in kept.items():
            self.set_texels[digest] = (self.n_set_texels, packed)
            self.n_set_texels += len(packed)
        self.set_generation += 1
        self.set_dirty = True

    def _upload(self) -> None:
        if self.set_dirty:
            if self.set_ssbo is not None:
                self.set_ssbo.release()
            arrays = [packed for _, packed in self.set_texels.values()] or [np.zeros(1, np.uint32)]
            self.set_ssbo = self.ctx.buffer(np.concatenate(arrays).astype(np.uint32).tobytes())
            self.set_dirty = False
        if not self.dirty:
            return
        ctx = self.ctx
        for slot in self.slots:
            slot.release_vaos()  # they bind the old vertex and index buffers
        for obj in (self.vbo, self.ibo, self.ssbo):
            if obj is not None:
                obj.release()
        self.vbo = ctx.buffer(np.concatenate(self.vertices).astype(np.float32).tobytes())
        self.ibo = ctx.buffer(np.concatenate(self.indices).astype(np.uint32).tobytes())
        self.ssbo = ctx.buffer(np.concatenate(self.texels).astype(np.uint32).tobytes())
        self.dirty = False

    def _free_slot(self) -> _Slot:
        """A slot no pending batch holds (a new one when every slot is busy)."""
        for slot in self.slots:
            if not slot.busy:
                break
        else:
            slot = _Slot()
            self.slots.append(slot)
        slot.busy = True
        return slot

    @staticmethod
    def _write(ctx: Any, buffer: Any, data: bytes, minimum: int) -> tuple[Any, bool]:
        """``data`` written into ``buffer``, or into a new buffer (power-of-two size, at least ``minimum`` bytes)
        when it does not fit; returns the buffer and whether it is new."""
        new = buffer is None or buffer.size < len(data)
        if new:
            if buffer is not None:
                buffer.release()
            buffer = ctx.buffer(reserve=max(minimum, 1 << math.ceil(math.log2(max(1, len(data))))), dynamic=True)
        if data:
            buffer.write(data)
        return buffer, new

    def _vertex_array(self, slot: _Slot, normals: bool, shadows: bool) -> Any:
        """The slot's vertex array for the colour program of :meth:`_program` (made on first use)."""
        key = (normals, shadows)
        if key not in slot.vaos:
            slot.vaos[key] = self._make_vertex_array(self._program(normals, shadows), slot.inst)
        return slot.vaos[key]

    def _shadow_vertex_array(self, slot: _Slot) -> Any:
        """The slot's vertex array for the shadow program: positions and model matrices only."""
        if slot.vao_shadow is None:
            slot.vao_shadow = self.ctx.vertex_array(
                self._shadow_program(),
                [(self.vbo, "3f 20x", "in_pos"), (slot.inst, "4f 4f 4f 32x/i", "in_m0", "in_m1", "in_m2")],
                index_buffer=self.ibo,
                index_element_size=4,
            )
        return slot.vao_shadow

    def _shadow_framebuffer(self, slot: _Slot, width: int, height: int) -> Any:
        """The slot's shadow map framebuffer, at least ``width`` x ``height``: an R32F texture (the least clip z
        per pixel) and a depth buffer."""
        if slot.shadow_fbo is None or slot.shadow_size[0] < width or slot.shadow_size[1] < height:
            w, h = max(width, slot.shadow_size[0]), max(height, slot.shadow_size[1])
            slot.release_shadow()
            texture = self.ctx.texture((w, h), 1, dtype="f4")
            texture.filter = (self.ctx.NEAREST, self.ctx.NEAREST)
            slot.shadow_fbo = self.ctx.framebuffer(color_attachments=[texture],
                                                   depth_attachment=self.ctx.depth_renderbuffer((w, h)))
            slot.shadow_size = (w, h)
        return slot.shadow_fbo

    def _make_vertex_array(self, prog: Any, inst: Any) -> Any:
        return self.ctx.vertex_array(
            prog,
            [(self.vbo, "3f 3f 2f", "in_pos", "in_nrm", "in_uv"),
             (inst, "4f 4f 4f 4f 4i/i", "in_m0", "in_m1", "in_m2", "in_color", "in_meta")],
            index_buffer=self.ibo,
            index_element_size=4,
        )

    def _framebuffer(self, slot: _Slot, width: int, height: int, normals: bool = False) -> Any:
        """The slot's framebuffer, at least ``width`` x ``height``: three targets (colour, linear depth,
        segmentation), or with ``normals`` the same three plus a normal target."""
        if slot.fbo is None or slot.fbo_size[0] < width or slot.fbo_size[1] < height:
            w = max(width, slot.fbo_size[0])
            h = max(height, slot.fbo_size[1])
            slot.release_framebuffers()
            ctx = self.ctx
            slot.fbo = ctx.framebuffer(
                color_attachments=[ctx.renderbuffer((w, h), 4, dtype="f1"), ctx.renderbuffer((w, h), 1, dtype="f4"),
                                   ctx.renderbuffer((w, h), 1, dtype="i4")],
                depth_attachment=ctx.depth_renderbuffer((w, h)),
            )
            slot.fbo_size = (w, h)
        if not normals:
            return slot.fbo
        if slot.fbo_normals is None:
            slot.fbo_normals = self.ctx.framebuffer(
                color_attachments=[*slot.fbo.color_attachments, self.ctx.renderbuffer(slot.fbo_size, 4, dtype="f4")],
                depth_attachment=slot.fbo.depth_attachment,
            )
        return slot.fbo_normals

    # ---- scenes ------------------------------------------------------------------------------------------------

    def state(self, client: int) -> _ClientState:
        """The scene state of ``client`` (created empty)."""
        st = self.clients.get(client)
        if st is None:
            st = self.clients[client] = _ClientState()
        return st

    def _refresh(self, client: int) -> _ClientState:
        """``client``'s state, its scene rebuilt (or recoloured) if pybullet's visual shapes changed."""
        if not p.isConnected(physicsClientId=client):
            raise RuntimeError(f"gl renderer: pybullet client {client} is not connected")
        st = self.state(client)
        bodies, shapes = read_visuals(client)
        geometry, colors = signature_of(shapes)
        if st.scene is None or st.force_rebuild or geometry != st.scene.signature or bodies != st.scene.bodies:
            self._rebuild(client, st, bodies, shapes)
        elif colors != st.scene.colors:
            st.scene.colors = colors
            self._set_colors(st, colors)
        version, worn = textures.worn(client)
        if st.texture_key != (version, self.set_generation):
            self._wear_textures(st, worn)
            st.texture_key = (version, self.set_generation)
        if st.scene is None:
            raise RuntimeError(f"gl renderer: the scene of client {client} could not be built")
        return st

    def _layout(self, owners: Sequence[int], clients: list[int], states: dict[int, _ClientState]) -> _Layout:
        """The :class:`_Layout` of these requests over these clients' current scenes (remembered: the same envs ask
        for the same cameras at every step)."""
        key = (tuple(owners),
               tuple((c, id(states[c].scene), id(states[c].static), id(states[c].visible)) for c in clients))
        layout = self._layouts.get(key)
        if layout is None:
            if len(self._layouts) >= 16:
                self._layouts.clear()
            layout = self._layouts[key] = _Layout(owners, clients, states)
        return layout

    @staticmethod
    def _pose(layout: _Layout) -> np.ndarray:
        """The layout's instances with their model matrices posed now: the poses are read client by client, the
        matrices composed for all of them at once."""
        pos: list[Any] = []
        orn: list[Any] = []
        for client, scene in layout.scenes:
            link_poses(client, scene, pos, orn)
        data = layout.static.copy()
        if len(data):
            frames = compose_frames(pos, orn, layout.base_rows, layout.base_inv)
            world = frames[layout.instance_frame] @ layout.local
            data["m"] = world[:, :3, :].reshape(-1, 12)
        return data

    def _rebuild(self, client: int, st: _ClientState, bodies: list[int], shapes: list[tuple]) -> None:
        scene = build_scene(client, bodies, shapes)
        static = np.zeros(len(scene.instances), _INSTANCE_DTYPE)
        draw = np.zeros((len(scene.instances), 3), np.int64)
        radius = np.zeros(len(scene.instances))
        for k, inst in enumerate(scene.instances):
            geo = self._add_geometry(inst.geometry, inst.mesh)
            seg = inst.body + ((inst.link + 1) << 24)
            static["meta"][k] = (np.int32(np.int64(seg).astype(np.int32)), geo.texel_offset, geo.tex_w, geo.tex_h)
            draw[k] = (geo.count, geo.first_index, geo.base_vertex)
            radius[k] = geo.radius
        st.scene, st.static, st.draw, st.radius, st.force_rebuild = scene, static, draw, radius, False
        st.meta, st.texture_key = static["meta"].copy(), None
        self._set_colors(st, scene.colors)

    def _wear_textures(self, st: _ClientState, worn: dict[tuple[int, int], textures.TextureImage]) -> None:
        """Point the instances of the links wearing a texture set at run time at it (the others at their mesh's);
        a new instance array, so that cached layouts holding the old one are not reused."""
        scene = st.scene
        if scene is None:
            return
        meta = st.meta.copy()
        for k, inst in enumerate(scene.instances):
            image = worn.get((inst.body, inst.link))
            if image is not None:
                h, w = image.pixels.shape[:2]
                meta[k, 1:] = (-2 - self._set_texture(image), w, h)
        st.static = st.static.copy()
        st.static["meta"] = meta

    @staticmethod
    def _set_colors(st: _ClientState, colors: tuple) -> None:
        """Per-instance colours from the colours of every visual shape (``colors[i]`` is shape i's rgba)."""
        scene = st.scene
        if scene is None:
            return
        rgba = np.asarray([colors[i.shape] for i in scene.instances], dtype=np.float32).reshape(-1, 4)
        st.static["color"] = rgba
        st.visible = rgba[:, 3] != 0  # TinyRenderer skips fully transparent shapes

    # ---- drawing -----------------------------------------------------------------------------------------------

    def render(self, owners: Sequence[int], requests: Sequence[CameraRequest],
               lightings: Sequence[Lighting] | None = None) -> list[Frame]:
        """Render every request in one pass (``owners[i]``: the pybullet client request i draws, under
        ``lightings[i]``); see :meth:`submit`."""
        if not requests:
            return []
        return self.submit(owners, requests, lightings).collect()

    def submit(self, owners: Sequence[int], requests: Sequence[CameraRequest],
               lightings: Sequence[Lighting] | None = None) -> PendingBatch:
        """Draw every request in one pass (``owners[i]``: the pybullet client request i draws, under
        ``lightings[i]``, default TinyRenderer's light) and send it to the GL without waiting:
        :meth:`PendingBatch.collect` returns the frames. Meanwhile the caller may step physics or submit more
        batches (each draws into GL objects of its own): on llvmpipe the rasterisation then runs in its threads
        beside the caller. The scene poses are those at submission.

        Raises:
            ValueError: no requests, owners and requests of different lengths, an image larger than 16384 pixels a
                side, or a batch that does not fit one framebuffer.
            RendererUnavailable: no OpenGL 4.3 EGL context can be made here.
        """
        lightings = [DEFAULT_LIGHTING] * len(requests) if lightings is None else list(lightings)
        if len(owners) != len(requests) or len(lightings) != len(requests):
            raise ValueError(f"gl renderer: {len(owners)} owners and {len(lightings)} lightings for "
                             f"{len(requests)} requests")
        for r in requests:
            if r.width < 1 or r.height < 1 or r.width > MAX_SIDE or r.height > MAX_SIDE:
                raise ValueError(f"gl renderer: image size {r.width}x{r.height} must be within 1..{MAX_SIDE} a side")
        if not requests:
            raise ValueError("gl renderer: submit needs at least one request")
        tiles, total_w, total_h = _pack([(r.width, r.height) for r in requests])
        ctx = glc.get_context()
        with ctx:  # current for every GL call below; the previous context is restored afterwards
            self._ensure_context()
            slot = self._free_slot()
            try:
                self._submit(slot, owners, requests, lightings, tiles, total_w, total_h)
            except BaseException:
                slot.busy = False
                raise
        return PendingBatch(self, slot, requests, tiles, (total_w, total_h))

    def _submit(self, slot: _Slot, owners: Sequence[int], requests: Sequence[CameraRequest],
                lightings: list[Lighting], tiles: list[tuple[int, int]], total_w: int, total_h: int) -> None:
        # scenes (one refresh per client), then every instance of every client posed in one buffer
        clients = list(dict.fromkeys(owners))
        if self.n_set_texels > (4 << 20):
            self._compact_set_texels({image.digest for c in self.clients for image in textures.worn(c)[1].values()})
        states = {client: self._refresh(client) for client in clients}
        self._upload()
        layout = self._layout(owners, clients, states)
        instances = self._pose(layout)
        slot.inst, new = self._write(self.ctx, slot.inst, instances.tobytes(), 64 * _INSTANCE_DTYPE.itemsize)
        if new:
            slot.release_vaos()  # they bind the old instance buffer
        # indirect commands: per camera, its client's visible instances inside its view, front to back; then, for
        # the cameras whose light casts shadows, those inside their shadow camera's view
        all_cmds, spans = _commands(requests, layout, instances)
        views = [_shadow_request(r, light) if light.shadows else None for r, light in zip(requests, lightings,
                                                                                          strict=True)]
        shadow_spans: list[tuple[int, int]] = [(0, 0)] * len(requests)
        if any(v is not None for v in views):
            # every camera is kept in the layout's order; one without shadows gets its own view (its block unused)
            light_requests = [v if v is not None else r for v, r in zip(views, requests, strict=True)]
            shadow_cmds, found = _commands(light_requests, layout, instances)
            shadow_spans = [(first + len(all_cmds), count) if v is not None else (0, 0)
                            for (first, count), v in zip(found, views, strict=True)]
            all_cmds = np.concatenate([all_cmds, shadow_cmds])
        slot.indirect, _ = self._write(self.ctx, slot.indirect, all_cmds.tobytes(), 20 * 256)
        if any(v is not None for v in views):
            self._draw_shadows(slot, views, tiles, total_w, total_h, shadow_spans)
        self._draw(slot, requests, lightings, views, tiles, total_w, total_h, spans)

    def _draw_shadows(self, slot: _Slot, views: list[CameraRequest | None], tiles: list[tuple[int, int]],
                      total_w: int, total_h: int, spans: list[tuple[int, int]]) -> None:
        """TinyRenderer's shadow map of every camera whose light casts shadows, in that camera's tile: the scene
        from the shadow camera, both faces, the least clip z per pixel."""
        import moderngl

        ctx = self.ctx
        fbo = self._shadow_framebuffer(slot, total_w, total_h)
        prog = self._shadow_program()
        vao = self._shadow_vertex_array(slot)
        fbo.use()
        fbo.scissor = None
        fbo.viewport = (0, 0, total_w, total_h)
        ctx.scissor = None
        glc.clear_buffer_float(glc.GL_COLOR, 0, (NO_SHADOW,))
        glc.clear_buffer_float(glc.GL_DEPTH, 0, (1.0,))
        ctx.enable_only(moderngl.DEPTH_TEST)  # TinyRenderer's depth pass culls no face
        ctx.depth_func = "<"
        uniforms = _Uniforms(prog)
        for view, (x, y), (first, count) in zip(views, tiles, spans, strict=True):
            if view is None or not count:
                continue
            fbo.viewport = (x, y, view.width, view.height)
            uniforms.camera(view)
            vao.render_indirect(slot.indirect, mode=moderngl.TRIANGLES, count=count, first=first)

    def _draw(self, slot: _Slot, requests: Sequence[CameraRequest], lightings: list[Lighting],
              views: list[CameraRequest | None], tiles: list[tuple[int, int]], total_w: int, total_h: int,
              spans: list[tuple[int, int]]) -> None:
        import moderngl

        normals = any(r.normals for r in requests)
        shadows = slot.shadow_fbo is not None and any(v is not None for v in views)
        ctx = self.ctx
        fbo = self._framebuffer(slot, total_w, total_h, normals)
        prog = self._program(normals, shadows)
        vao = self._vertex_array(slot, normals, shadows)
        fbo.use()
        fbo.scissor = None
        fbo.viewport = (0, 0, total_w, total_h)
        ctx.scissor = None
        glc.clear_buffer_float(glc.GL_COLOR, 0, (1.0, 1.0, 1.0, 1.0))
        glc.clear_buffer_float(glc.GL_COLOR, 1, (0.0,))
        glc.clear_buffer_int(2, (-1,))
        if normals:
            glc.clear_buffer_float(glc.GL_COLOR, 3, (0.0, 0.0, 0.0, 0.0))
        glc.clear_buffer_float(glc.GL_DEPTH, 0, (1.0,))
        ctx.enable_only(moderngl.DEPTH_TEST | moderngl.CULL_FACE)
        ctx.front_face = "ccw"
        ctx.cull_face = "back"
        ctx.depth_func = "<"
        self.ssbo.bind_to_storage_buffer(0)
        self.set_ssbo.bind_to_storage_buffer(1)
        if shadows:
            slot.shadow_fbo.color_attachments[0].use(location=0)
        uniforms = _Uniforms(prog)
        for r, light, view, (x, y), (first, count) in zip(requests, lightings, views, tiles, spans, strict=True):
            if not count:
                continue
            fbo.viewport = (x, y, r.width, r.height)
            uniforms.camera(r)
            uniforms.light(light, view, (x, y), shadows)
            vao.render_indirect(slot.indirect, mode=moderngl.TRIANGLES, count=count, first=first)
        glc.flush()  # rasterise now, in llvmpipe's threads, while the caller goes on

    def read(self, slot: _Slot, requests: Sequence[CameraRequest], tiles: list[tuple[int, int]],
             size: tuple[int, int]) -> list[Frame]:
        """Read back a submitted batch's framebuffer (waits for its draws) and cut it into one frame per request."""
        total_w, total_h = size
        normals = any(r.normals for r in requests)
        ctx = glc.get_context()
        with ctx:
            fbo = slot.fbo_normals if normals else slot.fbo
            area = (0, 0, total_w, total_h)
            rgba = np.frombuffer(fbo.read(area, components=4, attachment=0, dtype="f1"), np.uint8)
            lin = np.frombuffer(fbo.read(area, components=1, attachment=1, dtype="f4"), np.float32)
            seg = None
            if any(r.segmentation for r in requests):
                seg = np.frombuffer(fbo.read(area, components=1, attachment=2, dtype="i4"), np.int32)
            nrm = None
            if normals:
                nrm = np.frombuffer(fbo.read(area, components=3, attachment=3, dtype="f4"), np.float32)
        rgba = rgba.reshape(total_h, total_w, 4)
        lin = lin.reshape(total_h, total_w)
        seg_all = seg.reshape(total_h, total_w) if seg is not None else None
        nrm_all = nrm.reshape(total_h, total_w, 3) if nrm is not None else None
        frames: list[Frame] = []
        for r, (x, y) in zip(requests, tiles, strict=True):
            rows = slice(y, y + r.height)
            cols = slice(x, x + r.width)
            out_rgba = np.ascontiguousarray(rgba[rows, cols][::-1])
            z = _zbuffer(lin[rows, cols][::-1], r.projection)
            out_seg = np.ascontiguousarray(seg_all[rows, cols][::-1]) if r.segmentation and seg_all is not None \
                else None
            normal = np.ascontiguousarray(nrm_all[rows, cols][::-1]) if r.normals and nrm_all is not None else None
            frames.append(Frame(out_rgba, z, out_seg, normal))
        return frames

    def forget(self, client: int) -> None:
        """Drop ``client``'s scene (its geometry stays cached for other clients)."""
        self.clients.pop(client, None)

    def invalidate(self, client: int) -> None:
        """Rebuild ``client``'s scene at its next render."""
        self.state(client).force_rebuild = True


@functools.lru_cache(maxsize=1024)
def _shadow_request(request: CameraRequest, lighting: Lighting) -> CameraRequest:
    """The shadow camera of a camera under a shadow-casting light: TinyRenderer's (the light's view, the camera's
    projection and image size)."""
    view = shadow_view(lighting)
    return CameraRequest(request.width, request.height, tuple(view.T.ravel().tolist()), request.projection, False)


@functools.lru_cache(maxsize=256)
def _light_uniforms(lighting: Lighting) -> tuple[tuple[float, ...], ...]:
    """The light's direction, colour and coefficients as the shader takes them (float32 values)."""
    return (tuple(float(x) for x in lighting.unit_direction.astype(np.float32)),
            tuple(float(x) for x in np.float32(lighting.color)),
            tuple(float(x) for x in np.float32((lighting.ambient, lighting.diffuse, lighting.specular))))


@functools.lru_cache(maxsize=1024)
def _light_clip(shadow: CameraRequest) -> bytes:
    """World -> the shadow camera's clip space, float32 column-major (the uniform's bytes)."""
    clip = _matrices([shadow], "projection")[0] @ _matrices([shadow], "view")[0]
    return clip.T.astype(np.float32).tobytes()


@functools.lru_cache(maxsize=4096)
def _matrix_bytes(matrix: tuple[float, ...]) -> bytes:
    """A column-major 4x4 matrix's float32 bytes (a ``mat4`` uniform's)."""
    return np.asarray(matrix, dtype=np.float32).tobytes()


class _Uniforms:
    """One pass's uniform writes to one program: each value is sent only when it differs from the last one sent in
    this pass (the cameras of a rig share their projection, and most cameras their light), and the matrices' bytes
    are remembered per matrix; the values the program sees for each draw are those it saw when every uniform was
    written before every draw."""

    def __init__(self, prog: Any) -> None:
        self.prog = prog
        self.sent: dict[str, Any] = {}

    def _set(self, name: str, value: Any, raw: bool = False) -> None:
        if self.sent.get(name) == value:
            return
        self.sent[name] = value
        if raw:
            self.prog[name].write(value)
        else:
            self.prog[name].value = value

    def camera(self, r: CameraRequest) -> None:
        """The view, projection and half-pixel shift of a camera."""
        self._set("u_view", _matrix_bytes(r.view), raw=True)
        self._set("u_proj", _matrix_bytes(r.projection), raw=True)
        self._set("u_shift", (1.0 / r.width, 1.0 / r.height))

    def light(self, lighting: Lighting, shadow: CameraRequest | None, tile: tuple[int, int], tested: bool) -> None:
        """The colour pass's light uniforms for one camera (``shadow``: its shadow camera, drawn at ``tile``, or None
        without shadows; ``tested``: whether the program tests shadows, that is whether any camera of the pass casts
        them)."""
        direction, color, coefficients = _light_uniforms(lighting)
        self._set("u_light", direction)
        self._set("u_light_color", color)
        self._set("u_coefficients", coefficients)
        if not tested:
            return
        self._set("u_shadows", int(shadow is not None))
        if shadow is not None:
            self._set("u_light_clip", _light_clip(shadow), raw=True)
            self._set("u_shadow_tile", (tile[0], tile[1], shadow.width, shadow.height))
            self._set("u_shadow_map", 0)


def _commands(requests: Sequence[CameraRequest], layout: _Layout, instances: np.ndarray
              ) -> tuple[np.ndarray, list[tuple[int, int]]]:
    """Indirect draw commands (count, 1, first index, base vertex, instance) of every camera, one block per camera
    in request order: its client's visible instances whose bounding sphere meets the camera's view volume, front to
    back (early depth test), large shapes (the ground) after small ones. Culling is conservative: a culled instance
    would have drawn no pixel, so the image is the same as without it. Vectorised over every (camera, instance)
    pair: this runs for every camera of every env at every step.

    Args:
        requests: the cameras.
        layout: their pairs of (camera, visible instance of its client).
        instances: every client's posed instances, in the layout's order.

    Returns:
        The commands and, per request, (first command, number of commands).
    """
    req, inst, radius = layout.req, layout.inst, layout.radius
    all_planes, eyes = _frusta(requests)
    planes = all_planes[req]  # (pairs, 6, 4)
    c = instances["m"][inst][:, [3, 7, 11]].astype(np.float64)
    signed = (planes[:, :, :3] @ c[:, :, None])[:, :, 0] + planes[:, :, 3]
    inside = np.all(signed >= -(radius[:, None] * (1 + 1e-6) + 1e-6), axis=1)
    req, inst, c, radius = req[inside], inst[inside], c[inside], radius[inside]
    dist = np.sqrt(((c - eyes[req]) ** 2).sum(axis=1)) + radius
    order = np.lexsort((dist, req))  # by camera, then front to back; stable
    req, inst = req[order], inst[order]
    cmd = np.empty((len(inst), 5), np.uint32)
    cmd[:, [0, 2, 3]] = layout.draw[inst]
    cmd[:, 1] = 1
    cmd[:, 4] = inst
    counts = np.bincount(req, minlength=len(requests))
    starts = np.cumsum(counts) - counts
    return cmd, [(int(s), int(n)) for s, n in zip(starts, counts, strict=True)]


_FRUSTA: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}
_FRUSTA_MAX = 4096


def _frusta(requests: Sequence[CameraRequest]) -> tuple[np.ndarray, np.ndarray]:
    """(R, 6, 4) view-volume planes and (R, 3) camera positions of the requests (:func:`_view_volumes`), remembered
    per camera pose and lens: world-fixed cameras ask for the same ones at every frame."""
    keys = [(tuple(r.view), tuple(r.projection), r.width, r.height) for r in requests]
    found = [_FRUSTA.get(key) for key in keys]  # one lookup per key: a key's hash (32 floats) is not kept
    missing = [i for i, f in enumerate(found) if f is None]
    if missing:
        if len(_FRUSTA) + len(missing) > _FRUSTA_MAX:  # moving cameras (mounted ones) fill it: start again
            _FRUSTA.clear()
            missing = list(range(len(keys)))
        new = [requests[i] for i in missing]
        for i, planes, eye in zip(missing, *_view_volumes(new), strict=True):
            _FRUSTA[keys[i]] = found[i] = (planes, eye)
    return np.array([f[0] for f in found]), np.array([f[1] for f in found])  # type: ignore[index]


def _matrices(requests: Sequence[CameraRequest], name: str) -> np.ndarray:
    """(R, 4, 4) float64 row-major view or projection matrices of the requests (given column-major)."""
    return np.asarray([getattr(r, name) for r in requests], dtype=np.float64).reshape(-1, 4, 4).transpose(0, 2, 1)


def _view_volumes(requests: Sequence[CameraRequest]) -> tuple[np.ndarray, np.ndarray]:
    """(R, 6, 4) planes (unit normal pointing inwards, offset) of each camera's view volume as the vertex shader
    draws it (half-pixel shift included: left, right, bottom, top, near, far), and (R, 3) the cameras' world
    positions."""
    view = _matrices(requests, "view")
    m = _matrices(requests, "projection") @ view
    size = np.array([(r.width, r.height) for r in requests], dtype=np.float64)
    m[:, 0] += m[:, 3] / size[:, :1]  # clip.xy += u_shift * clip.w
    m[:, 1] += m[:, 3] / size[:, 1:]
    planes = np.stack([m[:, 3] + m[:, 0], m[:, 3] - m[:, 0], m[:, 3] + m[:, 1], m[:, 3] - m[:, 1],
                       m[:, 3] + m[:, 2], m[:, 3] - m[:, 2]], axis=1)
    eyes = -np.einsum("rji,rj->ri", view[:, :3, :3], view[:, :3, 3])
    return planes / np.linalg.norm(planes[:, :, :3], axis=2, keepdims=True), eyes


def near_far(projection: Sequence[float]) -> tuple[float, float]:
    """Near and far planes of a pybullet (OpenGL, column-major) perspective projection matrix."""
    near = projection[14] / (projection[10] - 1.0)
    far = projection[14] / (projection[10] + 1.0)
    return float(near), float(far)


def _zbuffer(linear: np.ndarray, projection: Sequence[float]) -> np.ndarray:
    """Linear eye depth (0 = background) -> pybullet's float32 z-buffer (1.0 = background), in float64: ``far (d -
    near) / ((far - near) d)`` at every pixel (in place, no gathering of the hit pixels: the background's quotient
    is thrown away), then 1.0 where nothing was drawn."""
    near, far = near_far(projection)
    d = linear.astype(np.float64)
    z = d - near
    z *= far
    d *= far - near
    with np.errstate(divide="ignore", invalid="ignore"):
        z /= d
    out = z.astype(np.float32)
    out[linear <= 0] = 1.0
    return out


def _pack(sizes: list[tuple[int, int]]) -> tuple[list[tuple[int, int]], int, int]:
    """Shelf-pack tiles: (x, y) per tile and the total (width, height), at most MAX_SIDE a side."""
    area = sum(w * h for w, h in sizes)
    widest = max(w for w, _ in sizes)
    limit = min(MAX_SIDE, max(widest, int(math.ceil(math.sqrt(area)))))
    tiles = []
    x = y = shelf = total_w = 0
    for w, h in sizes:
        if x + w > limit:
            x, y, shelf = 0, y + shelf, 0
        tiles.append((x, y))
        x += w
        shelf = max(shelf, h)
        total_w = max(total_w, x)
    total_h = y + shelf
    if total_h > MAX_SIDE:
        raise ValueError(f"gl renderer: {len(sizes)} images ({area} pixels) do not fit one {MAX_SIDE}² framebuffer; "
                         "render them in several batches")
    return tiles, total_w, total_h


_pipeline: GlPipeline | None = None


def shared_pipeline() -> GlPipeline:
    """The process's one pipeline (created on first use)."""
    global _pipeline
    if _pipeline is None:
        _pipeline = GlPipeline()
    return _pipeline


def release() -> None:
    """Free every GL object and the process's EGL context (scenes are rebuilt by the next render).

    Lets pybullet's EGL plugin start later in this process; ``GlBackend.close`` calls it when the last one closes.
    """
    global _pipeline
    _pipeline = None
    glc.release_context()
