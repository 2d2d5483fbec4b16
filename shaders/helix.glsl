// The Slinky: every half hoop a half turn of flat helical wire.
// Instanced: the template holds one half turn in parameter space (s, a, b) and each
// instance is one half hoop (midpoint C, bar direction u, bulge b, position along,
// impact flash 0..1: the coils that just hit light up for a moment; a tint: a display
// colour and how much of it replaces the material's, e.g. the colour by stretch).
// P(s) = C - R cos(s) u + R sin(s) b (a planar Slinky's b = +-z); the numpy twin is
// slinky3d.viewer.helix.extrude.
// Defines: STEEL or PLASTIC picks the material (a branch on a uniform would run both
// sides on a software rasterizer); PRECOMPUTED takes finished vertices instead (the
// numpy-extrusion benchmark); DEPTH_ONLY is the shadow pass.

#if defined VERTEX_SHADER

uniform mat4 vp;
#if defined PRECOMPUTED
in vec3 in_pos;
in vec3 in_normal;
in vec3 in_tangent;
in float in_along;
#else
uniform float R;
uniform float half_width;
uniform float half_thick;
// World size of one pixel at unit distance (0: off). Far away the wire is thinner
// than a pixel and would break into dots; it is kept at least MIN_PIXELS wide instead.
uniform float pixel_size;
uniform vec3 eye;
const float MIN_PIXELS = 0.9;
in vec3 in_vert;   // s, a (radial -1..1), b (thickness -1..1)
in vec2 in_face;   // outward face normal in the (radial, thickness) basis
in vec3 in_hoop;   // per instance: C, the bar's midpoint
in vec3 in_bar;    // per instance: u, the bar's unit direction
in vec3 in_bulge;  // per instance: b, the unit bulge (toward the apex)
in vec2 in_hoop2;  // per instance: position along the Slinky (0..1), flash
in vec4 in_tint;   // per instance: display rgb, amount 0..1
#endif

out vec3 v_pos;
out vec3 v_normal;
out vec3 v_tangent;
out float v_along;
out float v_flash;
out vec4 v_tint;

void main() {
#if defined PRECOMPUTED
    v_pos = in_pos;
    v_normal = in_normal;
    v_tangent = in_tangent;
    v_along = in_along;
    v_flash = 0.0;
    v_tint = vec4(0.0);
#else
    float s = in_vert.x;
    vec3 u = in_bar;
    vec3 b = in_bulge;
    // Thickness axis, the half hoop's plane's normal b x u: mirror images (a planar
    // Slinky's alternate bulges) get mirrored axes, which keeps the winding.
    vec3 n = cross(b, u);
    float cs = cos(s);
    float sn = sin(s);
    vec3 radial = -cs * u + sn * b;
    v_tangent = sn * u + cs * b;
    vec3 centre = in_hoop + R * radial;
    float least = 0.5 * MIN_PIXELS * pixel_size * distance(centre, eye);
    v_pos = centre + max(half_width, least) * in_vert.y * radial
            + max(half_thick, least) * in_vert.z * n;
    v_normal = in_face.x * radial + in_face.y * n;
    v_along = in_hoop2.x;
    v_flash = in_hoop2.y;
    v_tint = in_tint;
#endif
    gl_Position = vp * vec4(v_pos, 1.0);
}

#elif defined FRAGMENT_SHADER

#if defined DEPTH_ONLY
void main() {}
#else
#include "common.glsl"

uniform vec3 albedo_lin;  // plastic colour, linear
uniform int rainbow;

in vec3 v_pos;
in vec3 v_normal;
in vec3 v_tangent;
in float v_along;
in float v_flash;
in vec4 v_tint;
out vec4 frag;
// An impact lights its coils up in their own colour (a glow of the albedo, added),
// so that the hue stays the material's and only the brightness tells of the hit.
const float FLASH_GAIN = 1.2;

vec3 hue(float h) {
    vec3 k = clamp(abs(mod(h * 6.0 + vec3(0.0, 4.0, 2.0), 6.0) - 3.0) - 1.0, 0.0, 1.0);
    return mix(vec3(1.0), k, 0.85);
}

void main() {
    vec3 N = normalize(v_normal);
    vec3 V = normalize(eye - v_pos);
    vec3 L = light_dir;
    vec3 H = normalize(L + V);
    float ndl = max(dot(N, L), 0.0);
    float sh = shadow_at(v_pos, N);
    vec3 refl = environment(reflect(-V, N));
#if defined STEEL
    // Brushed steel: mostly a mirror of the studio, plus a highlight stretched across
    // the wire (Kajiya-Kay on the wire's tangent) for the brushed sheen.
    vec3 base = mix(vec3(0.86, 0.87, 0.90), to_linear(v_tint.rgb), v_tint.a);
    float th = dot(normalize(v_tangent), H);
    float aniso = pow64(sqrt(max(1.0 - th * th, 0.0)));
    vec3 c = base * (0.85 * refl + 0.12 * ambient(N))
             + base * KEY * (0.1 + 1.8 * aniso) * (ndl * sh);
    vec3 glow = base;
#else
    // Glossy plastic: coloured diffuse, a sharp white highlight, Fresnel reflection.
    vec3 a = rainbow == 1 ? to_linear(hue(0.83 * v_along)) : albedo_lin;
    a = mix(a, to_linear(v_tint.rgb), v_tint.a);
    float f = 1.0 - max(dot(N, V), 0.0);
    float f2 = f * f;
    float fres = 0.04 + 0.96 * f2 * f2 * f;
    vec3 diffuse = a * (KEY * ndl * sh + FILL * max(dot(N, FILL_DIR), 0.0) + ambient(N));
    float spec = pow128(max(dot(N, H), 0.0)) * 1.2 * sh;
    vec3 c = diffuse * (1.0 - fres) + KEY * spec + 0.5 * fres * refl;
    vec3 glow = a;
#endif
    c += FLASH_GAIN * v_flash * glow;
    frag = vec4(tonemap(c), 1.0);
}
#endif

#endif
