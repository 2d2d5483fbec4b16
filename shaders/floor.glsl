// The floor: a large plane at y = floor_y with a faint tile grid, the Slinky's shadow,
// fading into the background gradient with distance so there is no hard horizon.
// SHADOWED: the small rectangle that can receive a shadow; the rest of the plane is
// drawn without the shadow lookup (texture taps are what a software rasterizer pays for).

#if defined VERTEX_SHADER

uniform mat4 vp;
uniform float floor_y;
uniform vec4 rect;     // x0, z0, x1, z1 of the drawn part of the plane, m
in vec2 in_xz;         // 0..1
out vec3 v_pos;

void main() {
    v_pos = vec3(mix(rect.x, rect.z, in_xz.x), floor_y, mix(rect.y, rect.w, in_xz.y));
    gl_Position = vp * vec4(v_pos, 1.0);
}

#elif defined FRAGMENT_SHADER

#include "common.glsl"

uniform vec2 centre;
uniform float fade;       // distance from the centre where the floor has faded out, m
uniform float viewport_h;
uniform float pixel_scale;  // the frame's pixels per output pixel (dynamic resolution)
uniform float tile;       // grid spacing, m
uniform vec3 bg_top;      // display colours of the background gradient
uniform vec3 bg_bottom;
// The floor is flat and matte, so its lit and shadowed colours are two constants
// (display values, computed on the CPU): the shader only blends them.
uniform vec3 floor_lit;
uniform vec3 floor_dark;
in vec3 v_pos;
out vec4 frag;

void main() {
#if defined SHADOWED
    float sh = shadow_at(v_pos, vec3(0.0, 1.0, 0.0));
#else
    float sh = 1.0;
#endif
    // Anti-aliased grid lines, about an output pixel wide whatever the distance (and
    // whatever the scale the frame is drawn at: the same grid after the upscale).
    vec2 g = v_pos.xz / tile;
    vec2 w = fwidth(g) * pixel_scale;
    vec2 line = 1.0 - smoothstep(vec2(0.0), 1.5 * w, abs(fract(g - 0.5) - 0.5));
    float grid = max(line.x, line.y) * (1.0 - smoothstep(0.2, 0.6, max(w.x, w.y)));
    vec3 c = mix(floor_dark, floor_lit, sh) * (1.0 - 0.1 * grid);
    vec3 bg = mix(bg_bottom, bg_top, gl_FragCoord.y / viewport_h);
    float f = smoothstep(0.35 * fade, fade, length(v_pos.xz - centre));
    frag = vec4(mix(c, bg, f), 1.0);
}

#endif
