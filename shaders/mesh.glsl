// Plain lit triangles: holders (posts, clamp plates) and stairs.
// Colour alpha is the shininess: 0 matte wood, 1 polished metal; above 1 the triangle
// glows (unlit, bright: the hover marker). DEPTH_ONLY: shadow pass.

#if defined VERTEX_SHADER

uniform mat4 vp;
in vec3 in_pos;
in vec3 in_normal;
in vec4 in_colour;
out vec3 v_pos;
out vec3 v_normal;
out vec4 v_colour;

void main() {
    v_pos = in_pos;
    v_normal = in_normal;
    v_colour = in_colour;
    gl_Position = vp * vec4(in_pos, 1.0);
}

#elif defined FRAGMENT_SHADER

#if defined DEPTH_ONLY
void main() {}
#else
#include "common.glsl"

in vec3 v_pos;
in vec3 v_normal;
in vec4 v_colour;
out vec4 frag;

void main() {
    vec3 N = normalize(v_normal);
    vec3 V = normalize(eye - v_pos);
    vec3 H = normalize(light_dir + V);
    float sh = shadow_at(v_pos, N);
    vec3 a = to_linear(v_colour.rgb);  // per-vertex display colour
    if (v_colour.a > 1.0) {
        frag = vec4(tonemap(a * (2.0 + 0.5 * max(dot(N, V), 0.0))), 1.0);
        return;
    }
    float gloss = v_colour.a;
    // Shadows keep a quarter of the key light, as on the floor (a soft studio).
    vec3 c = a * (KEY * max(dot(N, light_dir), 0.0) * (0.25 + 0.75 * sh) + ambient(N)
                  + FILL * max(dot(N, FILL_DIR), 0.0));
    c += KEY * pow(max(dot(N, H), 0.0), mix(16.0, 90.0, gloss)) * mix(0.08, 0.8, gloss) * sh;
    c += gloss * 0.3 * a * environment(reflect(-V, N));
    frag = vec4(tonemap(c), 1.0);
}
#endif

#endif
