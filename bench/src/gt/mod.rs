//! Ground truth from repair trajectories (`swex gt build`).
