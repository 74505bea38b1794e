"""viz: turns compiler_bridge models into views (DOT, SVG, plots, panels); no parsing."""
