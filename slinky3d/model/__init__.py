"""The static model, numpy only: parameters, chain kinematics and energy, static shapes."""
