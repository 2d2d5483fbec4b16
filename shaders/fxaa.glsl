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

void main() {
    // Unfiltered fetches of the centre and its diagonal neighbours. The renderer keeps
    // the scissor box a pixel inside the frame, so the offsets never leave the image.
    // No early exit for flat regions: a software rasterizer runs both sides anyway.
    ivec2 p = ivec2(gl_FragCoord.xy);
    vec3 m = texelFetch(image, p, 0).rgb;
    float lm = dot(m, LUMA);
    float nw = dot(texelFetchOffset(image, p, 0, ivec2(-1, 1)).rgb, LUMA);
    float ne = dot(texelFetchOffset(image, p, 0, ivec2(1, 1)).rgb, LUMA);
    float sw = dot(texelFetchOffset(image, p, 0, ivec2(-1, -1)).rgb, LUMA);
    float se = dot(texelFetchOffset(image, p, 0, ivec2(1, -1)).rgb, LUMA);
    float lo = min(lm, min(min(nw, ne), min(sw, se)));
    float top = max(lm, max(max(nw, ne), max(sw, se)));
    vec2 uv = gl_FragCoord.xy * texel;
    vec2 dir = vec2(-((nw + ne) - (sw + se)), (nw + sw) - (ne + se));
    float reduce = max((nw + ne + sw + se) * 0.03125, 1.0 / 128.0);
    float scale = 1.0 / (min(abs(dir.x), abs(dir.y)) + reduce);
    dir = clamp(dir * scale, vec2(-8.0), vec2(8.0)) * texel;
    // The two inner taps along the edge only (FXAA's wider pair costs a fifth of the
    // pass for little on wire a pixel or two wide).
    vec3 aa = 0.5 * (texture(image, uv - dir / 6.0).rgb + texture(image, uv + dir / 6.0).rgb);
    // Flat regions keep their pixel exactly.
    frag = vec4(top - lo < max(0.05, 0.125 * top) ? m : aa, 1.0);
}

#endif
