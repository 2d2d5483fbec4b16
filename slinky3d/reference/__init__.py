"""The reference integrator: a deliberately independent yardstick for the real-time
solver (dense mass matrix, adaptive DOP853, dense LCP, the pairwise rule)."""
