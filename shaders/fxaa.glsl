// FXAA (Lottes' 3.11 "console" variant, 9 taps): the cheap anti-aliasing for software
// rasterizers, where 4x MSAA would triple the frame time.

#if defined VERTEX_SHADER

void main() {
    vec2 p = vec2((gl_VertexID << 1) & 2, gl_VertexID & 2);
    gl_Position = vec4(2.0 * p - 1.0, 0.0, 1.0);
}

#elif defined FRAGMENT_SHADER

uniform sampler2D image;
uniform vec2 texel;  // 1 / size
out vec4 frag;

const vec3 LUMA = vec3(0.299, 0.587, 0.114);

float luma_at(ivec2 p, ivec2 hi) {
    return dot(texelFetch(image, clamp(p, ivec2(0), hi), 0).rgb, LUMA);
}

void main() {
    // Unfiltered fetches for the edge test: most pixels stop there.
    ivec2 p = ivec2(gl_FragCoord.xy);
    ivec2 hi = textureSize(image, 0) - 1;
    vec3 m = texelFetch(image, p, 0).rgb;
    float lm = dot(m, LUMA);
    float nw = luma_at(p + ivec2(-1, 1), hi);
    float ne = luma_at(p + ivec2(1, 1), hi);
    float sw = luma_at(p + ivec2(-1, -1), hi);
    float se = luma_at(p + ivec2(1, -1), hi);
    float lo = min(lm, min(min(nw, ne), min(sw, se)));
    float top = max(lm, max(max(nw, ne), max(sw, se)));
    if (top - lo < max(0.05, 0.125 * top)) {
        frag = vec4(m, 1.0);  // flat region: nothing to smooth
        return;
    }
    vec2 uv = gl_FragCoord.xy * texel;
    vec2 dir = vec2(-((nw + ne) - (sw + se)), (nw + sw) - (ne + se));
    float reduce = max((nw + ne + sw + se) * 0.03125, 1.0 / 128.0);
    float scale = 1.0 / (min(abs(dir.x), abs(dir.y)) + reduce);
    dir = clamp(dir * scale, vec2(-8.0), vec2(8.0)) * texel;
    vec3 a = 0.5 * (texture(image, uv - dir / 6.0).rgb + texture(image, uv + dir / 6.0).rgb);
    vec3 b = 0.5 * a + 0.25 * (texture(image, uv - 0.5 * dir).rgb
                               + texture(image, uv + 0.5 * dir).rgb);
    float lb = dot(b, LUMA);
    frag = vec4((lb < lo || lb > top) ? a : b, 1.0);
}

#endif
