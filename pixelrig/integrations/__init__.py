"""Glue for RL libraries (optional: imported only when used; the core never imports them)."""
