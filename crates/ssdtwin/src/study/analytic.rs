//! Closed-form models the simulator is checked against.

/// Principal branch W₀ of the Lambert W function, for x ≥ −1/e.
pub fn lambert_w0(x: f64) -> f64 {
    assert!(x >= -(-1.0f64).exp() - 1e-12, "W0 is defined for x >= -1/e");
    // Initial guess, then Halley's iteration.
    let mut w = if x < 1.0 {
        let p = (2.0 * (1.0 + std::f64::consts::E * x)).max(0.0).sqrt();
        if p < 1e-9 {
            return -1.0; // the branch point x = −1/e
        }
        -1.0 + p - p * p / 3.0
    } else {
        x.ln() - x.ln().ln().max(0.0)
    };
    for _ in 0..64 {
        let ew = w.exp();
        let f = w * ew - x;
        let d = ew * (w + 1.0) - (w + 2.0) * f / (2.0 * w + 2.0);
        if d == 0.0 {
            break;
        }
        let next = w - f / d;
        if (next - w).abs() < 1e-15 * (1.0 + next.abs()) {
            return next;
        }
        w = next;
    }
    w
}

/// Steady-state write amplification of uniform random writes with FIFO
/// victim selection, `α = physical / logical` capacity (Hu et al. 2009,
/// Desnoyers 2012): `WAF = α / (α + W₀(−α·e^(−α)))`.
pub fn waf_fifo_uniform(alpha: f64) -> f64 {
    assert!(alpha > 1.0, "physical capacity must exceed logical capacity");
    alpha / (alpha + lambert_w0(-alpha * (-alpha).exp()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lambert_w_known_values() {
        assert!((lambert_w0(0.0)).abs() < 1e-12);
        assert!((lambert_w0(std::f64::consts::E) - 1.0).abs() < 1e-12);
        assert!((lambert_w0(-(-1.0f64).exp()) + 1.0).abs() < 1e-6);
        let w = lambert_w0(-0.2);
        assert!((w * w.exp() + 0.2).abs() < 1e-12);
    }

    #[test]
    fn waf_matches_closed_form_points() {
        // α = 1.1: W₀(−1.1·e^−1.1) ≈ −0.90625, so WAF ≈ 1.1 / 0.19375 ≈ 5.677.
        let w = waf_fifo_uniform(1.1);
        assert!((w - 5.677).abs() < 0.005, "{w}");
        // α = 1.25: W₀ ≈ −0.78579, WAF ≈ 2.6927.
        let w = waf_fifo_uniform(1.25);
        assert!((w - 2.6927).abs() < 0.005, "{w}");
        // Monotone and tending to 1 with large spare.
        assert!(waf_fifo_uniform(1.5) < waf_fifo_uniform(1.28));
        assert!((waf_fifo_uniform(20.0) - 1.0).abs() < 0.01);
    }
}
