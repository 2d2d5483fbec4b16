"""The compiled real-time dynamics: articulated-body algorithm, forces, integrator,
contacts, events, the step, and the per-Slinky solver."""
