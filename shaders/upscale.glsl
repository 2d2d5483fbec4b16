// Dynamic resolution's stretch: the 3D picture drawn at a lower scale, sampled
// bilinearly over the full-size target (only inside the scissor box the renderer sets:
// the objects and their shadow; the rest is the full-size backdrop). The 2D layer is
// drawn over it afterwards, at full resolution. Also lays a second view into a corner
// of a window (viewer/gl/top_view.py): `origin` is where.

#if defined VERTEX_SHADER

void main() {
    vec2 p = vec2((gl_VertexID << 1) & 2, gl_VertexID & 2);
    gl_Position = vec4(2.0 * p - 1.0, 0.0, 1.0);
}

#elif defined FRAGMENT_SHADER

uniform sampler2D image;  // the small picture, covering the whole frame
uniform vec2 texel;  // 1 / the target's size
uniform vec2 origin;  // the picture's bottom-left corner in the target (0: the whole target)
out vec4 frag;

void main() {
    frag = vec4(texture(image, (gl_FragCoord.xy - origin) * texel).rgb, 1.0);
}

#endif
