"""GLSL of the gl renderer: TinyRenderer's shading under a :class:`~pixelrig.render.lighting.Lighting` (ambient,
diffuse and specular coefficients, specular exponent 2 on the world-space reflection's z, the light's direction and
colour, colours truncated to integers) and its shadow test, its nearest, repeating texture lookup (from the meshes'
textures or from textures set at run time), linear eye depth and the segmentation value, all from one pass, in
variants (:func:`fragment`) that also write each fragment's world normal (its triangle's) to a fourth target, or
test shadows; and ``SHADOW_VERTEX``/``SHADOW_FRAGMENT``, TinyRenderer's shadow map: the scene from its shadow camera,
keeping each pixel's least clip-space z."""

VERTEX = """
#version 430
uniform mat4 u_view;
uniform mat4 u_proj;
uniform vec2 u_shift;      // half a pixel in NDC: TinyRenderer samples pixel corners, GL pixel centres
in vec3 in_pos;
in vec3 in_nrm;
in vec2 in_uv;
in vec4 in_m0;             // rows of the instance's 3x4 model matrix (link frame x visual frame)
in vec4 in_m1;
in vec4 in_m2;
in vec4 in_color;
in ivec4 in_meta;          // segmentation value, texel offset (-1: none), texture width, texture height
out vec3 v_nrm;
out vec3 v_world;
out vec2 v_uv;
out float v_depth;
flat out vec3 v_color;
flat out ivec4 v_meta;
void main() {
    vec4 p = vec4(in_pos, 1.0);
    vec3 world = vec3(dot(in_m0, p), dot(in_m1, p), dot(in_m2, p));
    v_nrm = vec3(dot(in_m0.xyz, in_nrm), dot(in_m1.xyz, in_nrm), dot(in_m2.xyz, in_nrm));
    v_world = world;
    v_uv = in_uv;
    vec4 eye = u_view * vec4(world, 1.0);
    v_depth = -eye.z;
    vec4 clip = u_proj * eye;
    clip.xy += u_shift * clip.w;
    gl_Position = clip;
    v_color = in_color.rgb;
    v_meta = in_meta;
}
"""

FRAGMENT = """
#version 430
layout(std430, binding = 0) readonly buffer Texels { uint texels[]; };
layout(std430, binding = 1) readonly buffer SetTexels { uint set_texels[]; };
uniform vec3 u_light;        // unit direction towards the light
uniform vec3 u_light_color;
uniform vec3 u_coefficients; // ambient, diffuse, specular
#ifdef WITH_SHADOWS
uniform int u_shadows;
uniform mat4 u_light_clip;   // world -> the shadow camera's clip space (its projection is the camera's)
uniform ivec4 u_shadow_tile; // the shadow map's pixels of this camera: x, y, width, height
uniform sampler2D u_shadow_map;
#endif
in vec3 v_nrm;
in vec3 v_world;
in vec2 v_uv;
in float v_depth;
flat in vec3 v_color;
flat in ivec4 v_meta;
layout(location = 0) out vec4 f_color;
layout(location = 1) out float f_depth;
layout(location = 2) out int f_seg;
#ifdef WITH_NORMALS
layout(location = 3) out vec4 f_normal;
#endif
void main() {
    // a zero normal marks flat-shaded meshes (OBJ without normals, STL): use the face normal, which for a front
    // face (the only ones drawn) is the cross product of the screen-space derivatives of the world position
    vec3 bn = dot(v_nrm, v_nrm) > 0.0 ? normalize(v_nrm) : normalize(cross(dFdx(v_world), dFdy(v_world)));
    vec3 r = normalize(bn * (dot(bn, u_light) * 2.0) - u_light);
    float rz = max(r.z, 0.0);
    float specular = rz * rz;
    float diffuse = max(0.0, dot(bn, u_light));
    vec3 tex = vec3(255.0);
    if (v_meta.y != -1) {  // >= 0: a mesh's texture at that texel; <= -2: a texture set at run time, at -2 - y
        vec2 uv = fract(v_uv);
        int x = min(int(uv.x * float(v_meta.z)), v_meta.z - 1);
        int y = min(int(uv.y * float(v_meta.w)), v_meta.w - 1);
        uint t = v_meta.y >= 0 ? texels[v_meta.y + y * v_meta.z + x] : set_texels[-2 - v_meta.y + y * v_meta.z + x];
        tex = vec3(float(t & 255u), float((t >> 8) & 255u), float((t >> 16) & 255u));
    }
    float shadow = 1.0;
#ifdef WITH_SHADOWS
    if (u_shadows != 0) {
        // TinyRenderer's test: the shadow camera's viewport position of this point (no half-pixel shift: its map
        // sampled pixel corners), clamped to the map, and lit where the map's nearest clip z is beyond this
        // point's viewport depth less 0.05
        vec4 lc = u_light_clip * vec4(v_world, 1.0);
        vec2 half_size = 0.5 * vec2(u_shadow_tile.zw);
        vec2 pos = (half_size * lc.xy + half_size * lc.w) / lc.w;
        float depth = 0.5 * lc.z + 0.5 * lc.w;
        ivec2 texel = ivec2(clamp(pos, vec2(0.0), vec2(u_shadow_tile.zw - 1)));
        float nearest = texelFetch(u_shadow_map, u_shadow_tile.xy + texel, 0).r;
        shadow = -nearest < -depth + 0.05 ? 1.0 : 0.8;
    }
#endif
    vec3 c = floor(tex * v_color);
    vec3 lit = floor(u_coefficients.x * c
                     + shadow * (u_coefficients.y * diffuse + u_coefficients.z * specular) * c * u_light_color);
    f_color = vec4(min(lit, vec3(255.0)) / 255.0, 1.0);
    f_depth = v_depth;
    f_seg = v_meta.x;
#ifdef WITH_NORMALS
    // the drawn triangle's own normal (not the shading normal: TinyRenderer's primitives shade with normals from
    // their origin, which a cylinder's flat cap does not have), so normals describe the same surface as depth
    vec3 face = cross(dFdx(v_world), dFdy(v_world));
    f_normal = vec4(dot(face, face) > 0.0 ? normalize(face) : vec3(0.0), 0.0);
#endif
}
"""



def fragment(normals: bool = False, shadows: bool = False) -> str:
    """The fragment shader's variant: with ``normals``, a world-normal output at location 3 (the drawn triangle's unit
    normal, from the screen-space derivatives of the world position: exact for a plane); with ``shadows``, the
    shadow test (``u_shadows`` says per camera whether it casts any). A pass without shadows uses the variant
    without the test: llvmpipe runs every branch of a shader for every fragment, so the test costs a quarter of
    the rasterising even where no camera casts shadows, and a shadow factor of 1 changes no pixel."""
    defines = "".join(f"#define {name}\n" for name, on in (("WITH_NORMALS", normals), ("WITH_SHADOWS", shadows))
                      if on)
    return FRAGMENT.replace("#version 430\n", "#version 430\n" + defines, 1)

SHADOW_VERTEX = """
#version 430
uniform mat4 u_view;       // the shadow camera's
uniform mat4 u_proj;       // the camera's projection (TinyRenderer draws its shadow map with it)
uniform vec2 u_shift;      // half a pixel: TinyRenderer samples pixel corners, GL pixel centres
in vec3 in_pos;
in vec4 in_m0;
in vec4 in_m1;
in vec4 in_m2;
out float v_clip_z;
void main() {
    vec4 p = vec4(in_pos, 1.0);
    vec4 clip = u_proj * (u_view * vec4(dot(in_m0, p), dot(in_m1, p), dot(in_m2, p), 1.0));
    v_clip_z = clip.z;
    clip.xy += u_shift * clip.w;
    gl_Position = clip;
}
"""

SHADOW_FRAGMENT = """
#version 430
in float v_clip_z;
layout(location = 0) out float f_clip_z;
void main() {
    f_clip_z = v_clip_z;  // the depth test keeps the nearest surface's, whose clip z is the least
}
"""
