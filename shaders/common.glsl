// Lights, studio environment, shadow lookup and tone mapping shared by the lit programs.
// Lighting runs in linear light; the *_lin uniforms are the scene's display colours
// already linearised on the CPU (a pow per pixel is dear on a software rasterizer).
// SHADOW_TAPS (define): 1 = one hardware 2x2 PCF lookup, 4 = four of them, 0 = none.

uniform vec3 eye;
uniform vec3 light_dir;  // unit vector toward the key light
uniform vec3 bg_top_lin;
uniform vec3 bg_bottom_lin;
uniform vec3 floor_lin;
uniform sampler2DShadow shadow_map;
uniform mat4 light_vp;
uniform float shadow_texel;  // 1 / shadow-map size
uniform float shadow_offset; // normal offset, m (about a texel in world units)
uniform float shadow_bias;   // depth bias, in light-depth units

const vec3 KEY = vec3(1.0, 0.96, 0.90) * 2.4;
const vec3 FILL_DIR = vec3(-0.6626, 0.3313, 0.6716);
const vec3 FILL = vec3(0.55, 0.62, 0.78) * 0.55;

vec3 to_linear(vec3 c) { return c * c; }  // gamma 2, the inverse of tonemap's sqrt

// x^64 and x^128 by squaring: cheaper than pow() and exact enough for highlights.
float pow64(float x) { x *= x; x *= x; x *= x; x *= x; x *= x; return x * x; }
float pow128(float x) { x = pow64(x); return x * x; }

// What a mirror sees: the background's gradient above, the floor below, and two big
// soft boxes (key and fill) that give polished metal its bright bands.
vec3 environment(vec3 d) {
    vec3 sky = mix(bg_bottom_lin, bg_top_lin, smoothstep(-0.05, 0.8, d.y));
    vec3 ground = floor_lin * 0.3;
    vec3 c = mix(ground, sky, smoothstep(-0.15, 0.03, d.y));
    c += vec3(4.0) * smoothstep(0.80, 0.96, dot(d, light_dir));
    c += vec3(1.4) * smoothstep(0.70, 0.93, dot(d, FILL_DIR));
    // A bright strip along the horizon, like a studio's light wall: the rims of the
    // coils, which face sideways, catch it and read as polished.
    c += vec3(0.9) * smoothstep(0.3, 0.0, abs(d.y - 0.08));
    return c;
}

// Hemisphere ambient: sky from above, floor bounce from below.
vec3 ambient(vec3 n) {
    return mix(floor_lin * 0.25, bg_top_lin * 0.6 + 0.08, n.y * 0.5 + 0.5);
}

float shadow_at(vec3 p, vec3 n) {
#if SHADOW_TAPS == 0
    return 1.0;
#endif
    // Normal offset (not only a depth bias) keeps thin wire free of acne.
    vec4 q = light_vp * vec4(p + n * shadow_offset, 1.0);
    vec3 c = q.xyz / q.w * 0.5 + 0.5;
    if (any(lessThan(c, vec3(0.0))) || any(greaterThan(c, vec3(1.0)))) return 1.0;
    c.z -= shadow_bias;
#if SHADOW_TAPS == 1
    return texture(shadow_map, c);
#else
    float s = 0.0;
    s += texture(shadow_map, c + vec3(-0.5, -0.5, 0.0) * shadow_texel);
    s += texture(shadow_map, c + vec3(0.5, -0.5, 0.0) * shadow_texel);
    s += texture(shadow_map, c + vec3(-0.5, 0.5, 0.0) * shadow_texel);
    s += texture(shadow_map, c + vec3(0.5, 0.5, 0.0) * shadow_texel);
    return 0.25 * s;
#endif
}

// Filmic curve (Narkowicz's ACES fit), then display gamma 2 (sqrt: pow is dear).
vec3 tonemap(vec3 c) {
    c = clamp((c * (2.51 * c + 0.03)) / (c * (2.43 * c + 0.59) + 0.14), 0.0, 1.0);
    return sqrt(c);
}
