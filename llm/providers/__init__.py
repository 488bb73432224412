"""Model providers: one module each, behind the interface of `base`, listed in `registry`."""
