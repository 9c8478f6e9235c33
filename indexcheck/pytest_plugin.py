"""The pytest plugin's former module path. The plugin is :mod:`indexcheck.cli.pytest_plugin`
(the ``pytest11`` entry point names it); an environment installed before it moved still
names this module in its entry point until reinstalled; it loads the plugin through pytest's
own ``pytest_plugins``. The plugin loads by itself once indexcheck is installed: naming it
with ``-p`` as well registers it twice (pytest refuses), unless autoloading is off
(``-p no:indexcheck`` or ``PYTEST_DISABLE_PLUGIN_AUTOLOAD=1``)."""

pytest_plugins = ["indexcheck.cli.pytest_plugin"]
