"""Measures of a discriminator as an instrument: detection and calibration scores, temperature scaling, bootstrap
intervals. Pure NumPy, so any experiment can use them on saved per-item files."""
