"""The pytest plugin's former module path. The plugin is :mod:`indexcheck.cli.pytest_plugin`
(the ``pytest11`` entry point names it); an environment installed before it moved still
names this module in its entry point until reinstalled, and ``-p indexcheck.pytest_plugin``
names it by hand: both load the plugin through pytest's own ``pytest_plugins``."""

pytest_plugins = ["indexcheck.cli.pytest_plugin"]
