"""What is drawn into the 3D scene besides the Slinky and its props: the centre of mass
and its free-fall parabola, the collapse front, coils coloured by stretch."""
