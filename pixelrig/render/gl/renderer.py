"""The gl renderer proper: shared geometry and textures on the GPU, and :func:`render_batch`, which draws any number
of cameras of any number of pybullet clients into one framebuffer (tiled viewports) with one readback per buffer.

Drawing: one indexed vertex buffer holds every mesh (cached per file and scale, shared by every client of the
process), per-instance model matrices are vertex attributes composed on the CPU, and each camera is one indirect
multi-draw of its client's instances sorted front to back. Colour (RGBA8), linear eye depth (R32F) and the
segmentation value (R32I) come from one pass; depth is converted back to pybullet's z-buffer convention in
float64. When a request asks for normals, the pass uses a second program (the same shader plus one output) and a
framebuffer with a fourth target (RGBA32F world normals); without such a request nothing changes. Not thread-safe:
call from one thread at a time.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pybullet as p

from pixelrig.render.backends import RawFrame
from pixelrig.render.gl import context as glc
from pixelrig.render.gl.meshes import MeshData
from pixelrig.render.gl.scene import Scene, build_scene, link_frames, read_visuals, signature_of
from pixelrig.render.gl.shaders import FRAGMENT, FRAGMENT_NORMALS, VERTEX

MAX_SIDE = 16384  # renderbuffers are at most this many pixels a side (llvmpipe)
LIGHT = np.array([-50.0, 30.0, 100.0]) / np.linalg.norm([-50.0, 30.0, 100.0])
_INSTANCE_DTYPE = np.dtype([("m", "<f4", (12,)), ("color", "<f4", (4,)), ("meta", "<i4", (4,))])


@dataclass(frozen=True)
class GlRequest:
    """One camera image to render.

    Attributes:
        client: pybullet client id of the scene.
        width: image width in pixels.
        height: image height in pixels.
        view: 16 floats, column-major view matrix (``pybullet.computeViewMatrix``).
        projection: 16 floats, column-major projection matrix (``pybullet.computeProjectionMatrixFOV``).
        segmentation: return the segmentation buffer (else ``seg`` is None).
        normals: also return world normals (the frame is then a :class:`GlFrame`).
    """

    client: int
    width: int
    height: int
    view: Sequence[float]
    projection: Sequence[float]
    segmentation: bool = True
    normals: bool = False


class GlFrame(RawFrame):
    """A :class:`~pixelrig.render.backends.RawFrame` with the world normals the gl renderer drew: it unpacks as
    ``(rgba, zbuffer, seg)`` like every frame and carries ``normal`` besides.

    Attributes:
        normal: (H, W, 3) float32 world-frame unit normals of the drawn triangles (the surface depth describes:
            not the shading normals, which TinyRenderer's primitives take from their origin); 0 at background.
    """

    normal: np.ndarray

    def __new__(cls, rgba: np.ndarray, zbuffer: np.ndarray, seg: np.ndarray | None, normal: np.ndarray) -> GlFrame:
        self = super().__new__(cls, rgba, zbuffer, seg)
        self.normal = normal
        return self


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


class GlRenderer:
    """Process-wide renderer state: the GL objects, the geometry registry and every client's scene."""

    def __init__(self) -> None:
        self.ctx: Any = None
        self.prog: Any = None
        self.prog_normals: Any = None  # compiled when a request first asks for normals
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
        self.inst: Any = None
        self.indirect: Any = None
        self.vao: Any = None
        self.vao_normals: Any = None
        self.fbo: Any = None
        self.fbo_normals: Any = None  # the fbo's three targets plus a normal target, made when first needed
        self.fbo_size = (0, 0)
        self.clients: dict[int, _ClientState] = {}

    # ---- GL objects --------------------------------------------------------------------------------------------

    def _ensure_context(self) -> None:
        if self.ctx is not None:
            return
        ctx = glc.get_context()
        self.prog = ctx.program(vertex_shader=VERTEX, fragment_shader=FRAGMENT)
        self.prog["u_light"].value = tuple(float(x) for x in LIGHT.astype(np.float32))
        self.ctx = ctx

    def _normals_program(self) -> tuple[Any, Any]:
        """The program and vertex array that also write normals (made on first use)."""
        if self.prog_normals is None:
            self.prog_normals = self.ctx.program(vertex_shader=VERTEX, fragment_shader=FRAGMENT_NORMALS)
            self.prog_normals["u_light"].value = tuple(float(x) for x in LIGHT.astype(np.float32))
        if self.vao_normals is None:
            self.vao_normals = self._vertex_array(self.prog_normals)
        return self.prog_normals, self.vao_normals

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

    def _upload(self) -> None:
        if not self.dirty:
            return
        ctx = self.ctx
        for obj in (self.vao, self.vao_normals, self.vbo, self.ibo, self.ssbo):
            if obj is not None:
                obj.release()
        self.vao = self.vao_normals = None
        self.vbo = ctx.buffer(np.concatenate(self.vertices).astype(np.float32).tobytes())
        self.ibo = ctx.buffer(np.concatenate(self.indices).astype(np.uint32).tobytes())
        self.ssbo = ctx.buffer(np.concatenate(self.texels).astype(np.uint32).tobytes())
        self._make_vao(max(64, self.inst.size // _INSTANCE_DTYPE.itemsize if self.inst is not None else 64))
        self.dirty = False

    def _make_vao(self, capacity: int) -> None:
        for vao in (self.vao, self.vao_normals):
            if vao is not None:
                vao.release()
        self.vao_normals = None  # remade by _normals_program when needed
        if self.inst is None or self.inst.size < capacity * _INSTANCE_DTYPE.itemsize:
            if self.inst is not None:
                self.inst.release()
            self.inst = self.ctx.buffer(reserve=capacity * _INSTANCE_DTYPE.itemsize, dynamic=True)
        self.vao = self._vertex_array(self.prog)

    def _vertex_array(self, prog: Any) -> Any:
        return self.ctx.vertex_array(
            prog,
            [(self.vbo, "3f 3f 2f", "in_pos", "in_nrm", "in_uv"),
             (self.inst, "4f 4f 4f 4f 4i/i", "in_m0", "in_m1", "in_m2", "in_color", "in_meta")],
            index_buffer=self.ibo,
            index_element_size=4,
        )

    def _framebuffer(self, width: int, height: int, normals: bool = False) -> Any:
        """The framebuffer to draw into, at least ``width`` x ``height``: three targets (colour, linear depth,
        segmentation), or with ``normals`` the same three plus a normal target."""
        if self.fbo is None or self.fbo_size[0] < width or self.fbo_size[1] < height:
            w = max(width, self.fbo_size[0])
            h = max(height, self.fbo_size[1])
            if self.fbo_normals is not None:
                self.fbo_normals.color_attachments[3].release()
                self.fbo_normals.release()
                self.fbo_normals = None
            if self.fbo is not None:
                for att in (*self.fbo.color_attachments, self.fbo.depth_attachment):
                    att.release()
                self.fbo.release()
            ctx = self.ctx
            self.fbo = ctx.framebuffer(
                color_attachments=[ctx.renderbuffer((w, h), 4, dtype="f1"), ctx.renderbuffer((w, h), 1, dtype="f4"),
                                   ctx.renderbuffer((w, h), 1, dtype="i4")],
                depth_attachment=ctx.depth_renderbuffer((w, h)),
            )
            self.fbo_size = (w, h)
        if not normals:
            return self.fbo
        if self.fbo_normals is None:
            self.fbo_normals = self.ctx.framebuffer(
                color_attachments=[*self.fbo.color_attachments, self.ctx.renderbuffer(self.fbo_size, 4, dtype="f4")],
                depth_attachment=self.fbo.depth_attachment,
            )
        return self.fbo_normals

    # ---- scenes ------------------------------------------------------------------------------------------------

    def state(self, client: int) -> _ClientState:
        """The scene state of ``client`` (created empty)."""
        st = self.clients.get(client)
        if st is None:
            st = self.clients[client] = _ClientState()
        return st

    def _sync(self, client: int) -> tuple[_ClientState, np.ndarray]:
        """Refresh ``client``'s scene if it changed and return its instance array posed now."""
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
        scene = st.scene
        if scene is None:
            raise RuntimeError(f"gl renderer: the scene of client {client} could not be built")
        data = st.static.copy()
        if len(data):
            world = link_frames(client, scene)[scene.instance_frame] @ scene.local
            data["m"] = world[:, :3, :].reshape(-1, 12)
        return st, data

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
        self._set_colors(st, scene.colors)

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

    def render(self, requests: Sequence[GlRequest]) -> list[RawFrame]:
        """Render every request in one pass; see :func:`render_batch`."""
        if not requests:
            return []
        ctx = glc.get_context()
        with ctx:  # current for every GL call below; the previous context is restored afterwards
            return self._render(requests)

    def _render(self, requests: Sequence[GlRequest]) -> list[RawFrame]:
        self._ensure_context()
        for r in requests:
            if r.width < 1 or r.height < 1 or r.width > MAX_SIDE or r.height > MAX_SIDE:
                raise ValueError(f"gl renderer: image size {r.width}x{r.height} must be within 1..{MAX_SIDE} a side")
        # scenes (one sync per client)
        posed: dict[int, np.ndarray] = {}
        states: dict[int, _ClientState] = {}
        for r in requests:
            if r.client not in posed:
                states[r.client], posed[r.client] = self._sync(r.client)
        self._upload()
        # instances of all clients in one buffer
        base: dict[int, int] = {}
        chunks = []
        n = 0
        for client, data in posed.items():
            base[client] = n
            chunks.append(data)
            n += len(data)
        instances = np.concatenate(chunks) if chunks else np.zeros(0, _INSTANCE_DTYPE)
        if self.inst is None or self.inst.size < max(1, n) * _INSTANCE_DTYPE.itemsize:
            self._make_vao(max(64, 1 << math.ceil(math.log2(max(1, n)))))
        if n:
            self.inst.write(instances.tobytes())
        # layout: shelves of tiles
        tiles, total_w, total_h = _pack([(r.width, r.height) for r in requests])
        # indirect commands, front to back per camera
        commands = []
        spans = []
        start = 0
        for r in requests:
            st = states[r.client]
            data = posed[r.client]
            idx = np.flatnonzero(st.visible)
            if len(idx):
                eye = _camera_position(r.view)
                # front to back (early depth test), with large shapes (the ground) after the small ones
                dist = np.linalg.norm(data["m"][idx][:, [3, 7, 11]] - eye, axis=1) + st.radius[idx]
                idx = idx[np.argsort(dist, kind="stable")]
            cmd = np.zeros((len(idx), 5), np.uint32)
            cmd[:, 0] = st.draw[idx, 0]
            cmd[:, 1] = 1
            cmd[:, 2] = st.draw[idx, 1]
            cmd[:, 3] = st.draw[idx, 2]
            cmd[:, 4] = base[r.client] + idx
            commands.append(cmd)
            spans.append((start, len(idx)))
            start += len(idx)
        all_cmds = np.concatenate(commands) if commands else np.zeros((0, 5), np.uint32)
        if self.indirect is None or self.indirect.size < max(20, all_cmds.nbytes):
            if self.indirect is not None:
                self.indirect.release()
            self.indirect = self.ctx.buffer(reserve=max(20 * 256, 1 << math.ceil(math.log2(max(20, all_cmds.nbytes)))),
                                            dynamic=True)
        if all_cmds.nbytes:
            self.indirect.write(all_cmds.tobytes())
        return self._draw(requests, tiles, total_w, total_h, spans)

    def _draw(self, requests: Sequence[GlRequest], tiles: list[tuple[int, int]], total_w: int, total_h: int,
              spans: list[tuple[int, int]]) -> list[RawFrame]:
        import moderngl

        normals = any(r.normals for r in requests)
        ctx = self.ctx
        fbo = self._framebuffer(total_w, total_h, normals)
        prog, vao = self._normals_program() if normals else (self.prog, self.vao)
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
        for r, (x, y), (first, count) in zip(requests, tiles, spans, strict=True):
            if not count:
                continue
            fbo.viewport = (x, y, r.width, r.height)
            prog["u_view"].write(np.asarray(r.view, dtype=np.float32).tobytes())
            prog["u_proj"].write(np.asarray(r.projection, dtype=np.float32).tobytes())
            prog["u_shift"].value = (1.0 / r.width, 1.0 / r.height)
            vao.render_indirect(self.indirect, mode=moderngl.TRIANGLES, count=count, first=first)
        area = (0, 0, total_w, total_h)
        rgba = np.frombuffer(fbo.read(area, components=4, attachment=0, dtype="f1"), np.uint8)
        lin = np.frombuffer(fbo.read(area, components=1, attachment=1, dtype="f4"), np.float32)
        seg = None
        if any(r.segmentation for r in requests):
            seg = np.frombuffer(fbo.read(area, components=1, attachment=2, dtype="i4"), np.int32)
        rgba = rgba.reshape(total_h, total_w, 4)
        lin = lin.reshape(total_h, total_w)
        seg_all = seg.reshape(total_h, total_w) if seg is not None else None
        nrm_all = None
        if normals:
            nrm = np.frombuffer(fbo.read(area, components=3, attachment=3, dtype="f4"), np.float32)
            nrm_all = nrm.reshape(total_h, total_w, 3)
        frames: list[RawFrame] = []
        for r, (x, y) in zip(requests, tiles, strict=True):
            rows = slice(y, y + r.height)
            cols = slice(x, x + r.width)
            out_rgba = np.ascontiguousarray(rgba[rows, cols][::-1])
            z = _zbuffer(lin[rows, cols][::-1], r.projection)
            out_seg = np.ascontiguousarray(seg_all[rows, cols][::-1]) if r.segmentation and seg_all is not None \
                else None
            if r.normals and nrm_all is not None:
                frames.append(GlFrame(out_rgba, z, out_seg, np.ascontiguousarray(nrm_all[rows, cols][::-1])))
            else:
                frames.append(RawFrame(out_rgba, z, out_seg))
        return frames

    def forget(self, client: int) -> None:
        """Drop ``client``'s scene (its geometry stays cached for other clients)."""
        self.clients.pop(client, None)

    def invalidate(self, client: int) -> None:
        """Rebuild ``client``'s scene at its next render."""
        self.state(client).force_rebuild = True


def _camera_position(view: Sequence[float]) -> np.ndarray:
    """World position of the camera of a column-major view matrix."""
    m = np.asarray(view, dtype=np.float64).reshape(4, 4).T
    return -m[:3, :3].T @ m[:3, 3]


def near_far(projection: Sequence[float]) -> tuple[float, float]:
    """Near and far planes of a pybullet (OpenGL, column-major) perspective projection matrix."""
    near = projection[14] / (projection[10] - 1.0)
    far = projection[14] / (projection[10] + 1.0)
    return float(near), float(far)


def _zbuffer(linear: np.ndarray, projection: Sequence[float]) -> np.ndarray:
    """Linear eye depth (0 = background) -> pybullet's float32 z-buffer (1.0 = background), in float64."""
    near, far = near_far(projection)
    d = linear.astype(np.float64)
    hit = d > 0
    z = np.ones_like(d)
    dh = d[hit]
    z[hit] = far * (dh - near) / ((far - near) * dh)
    return z.astype(np.float32)


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


_renderer: GlRenderer | None = None


def renderer() -> GlRenderer:
    """The process's shared renderer (created on first use)."""
    global _renderer
    if _renderer is None:
        _renderer = GlRenderer()
    return _renderer


def release() -> None:
    """Free every GL object and the process's EGL context (scenes are rebuilt by the next render).

    Lets pybullet's EGL plugin start later in this process; ``GlBackend.close`` calls it when the last one closes.
    """
    global _renderer
    _renderer = None
    glc.release_context()


def render_batch(requests: Sequence[GlRequest]) -> list[RawFrame]:
    """Render many cameras of many pybullet clients in one GL pass with one readback.

    Args:
        requests: the cameras, in any order; several may share a client.

    Returns:
        One :class:`~pixelrig.render.backends.RawFrame` per request, in order, as TinyRenderer would return it.

    Raises:
        RendererUnavailable: no OpenGL 4.3 EGL context can be made here.
        ValueError: an image is larger than 16384 pixels a side, or the batch does not fit one framebuffer.
    """
    return renderer().render(requests)
