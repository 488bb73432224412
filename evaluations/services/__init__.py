"""Evaluation services (writes). Import the module you need, e.g. `services.scenarios`."""
