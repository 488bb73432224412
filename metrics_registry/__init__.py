"""The registry: the taxonomy (areas, subareas, label categories), metrics and their versions,
benchmarks and frozen releases.

Published releases are immutable (database triggers as well as services). Imports only
``core``; apps above learn of a release being published through ``core.events``.
"""
