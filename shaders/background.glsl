// Full-screen vertical gradient (one triangle, no vertex buffer); the floor fades into
// exactly this gradient, so the horizon has no seam.

#if defined VERTEX_SHADER

out vec2 v_uv;

void main() {
    vec2 p = vec2((gl_VertexID << 1) & 2, gl_VertexID & 2);
    v_uv = p;
    gl_Position = vec4(2.0 * p - 1.0, 1.0, 1.0);
}

#elif defined FRAGMENT_SHADER

uniform vec3 bg_top;
uniform vec3 bg_bottom;
in vec2 v_uv;
out vec4 frag;

void main() {
    frag = vec4(mix(bg_bottom, bg_top, v_uv.y), 1.0);
}

#endif
