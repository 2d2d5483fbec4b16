// The cached overlay (viewer/overlay_cache.py) laid over the frame: its pixels,
// premultiplied by their alpha, blended with (one, one - source alpha), only inside
// the rectangles the overlay drew in.

#if defined VERTEX_SHADER

in vec2 in_pos;  // clip space

void main() {
    gl_Position = vec4(in_pos, 0.0, 1.0);
}

#elif defined FRAGMENT_SHADER

uniform sampler2D overlay;
out vec4 frag;

void main() {
    frag = texelFetch(overlay, ivec2(gl_FragCoord.xy), 0);
}

#endif
