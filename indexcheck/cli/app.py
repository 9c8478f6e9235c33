"""The ``indexcheck`` click group: config file, error mapping and exit codes.

Exit codes: 0 passed, 1 check failed, 2 usage or bad input, 3 could not finish.
Errors are one line on stderr; ``INDEXCHECK_DEBUG=1`` re-raises for a traceback.
"""

from __future__ import annotations

import logging
import sys
import tomllib
from pathlib import Path
from typing import Any

import click

from .. import __version__, api
from ..api import hookimpl, require_file
from ..errors import EXIT_INPUT, EXIT_OK, InputError
from .command import EXIT_STOPPED, one_line, one_line_errors
from .examples import add_examples
from .guard import CONFIG_META
from .option_types import finite_floats
from .options import add_limit_options, add_wait_options
from .signals import EXIT_BROKEN_PIPE, quiet_stdout, settle, stopped_by

CONFIG_FILE = "indexcheck.toml"
_did_you_mean = api.did_you_mean
_OWN_CONFIG = "indexcheck.own-config"
CONFIG_HELP = (
    f"Config file with option defaults (default: ./{CONFIG_FILE}, else the "
    "[tool.indexcheck] table of ./pyproject.toml)."
)


def _option_keys(cmd: click.Command) -> dict[str, click.Parameter]:
    """Config key (option name with underscores, or parameter name) -> its parameter."""
    keys: dict[str, click.Parameter] = {}
    for p in cmd.params:
        if not isinstance(p, click.Option) or p.name is None or "--config" in p.opts:
            continue
        keys[p.name] = p
        for opt in p.opts:
            if opt.startswith("--"):
                keys[opt[2:].replace("-", "_")] = p
    return keys


def _check_value(value: Any, param: click.Parameter, where: str) -> None:
    """Refuse a config value of the wrong type for its option, naming the key (exit 2)."""
    values = value if (param.multiple or param.nargs != 1) else [value]
    if (param.multiple or param.nargs != 1) and not isinstance(value, list):
        raise InputError(f"{where} must be a list")
    for v in values:
        kind = param.type
        if isinstance(param, click.Option) and param.is_flag:
            ok = isinstance(v, bool)
            wanted = "true or false"
        elif isinstance(kind, click.types._NumberParamTypeBase) and kind.name.startswith("int"):
            ok = isinstance(v, int) and not isinstance(v, bool)
            wanted = "an integer"
        elif kind.name == "float":
            ok = isinstance(v, int | float) and not isinstance(v, bool)
            wanted = "a number"
        else:
            ok = isinstance(v, str)
            wanted = "a string"
        if not ok:
            raise InputError(f"{where} must be {wanted}, got {v!r}")
        try:
            kind.convert(v, None, None)
        except click.BadParameter as exc:
            raise InputError(f"{where}: {exc.format_message()}") from None


def _load_config(path: Path | None) -> dict[str, Any]:
    """Option defaults from ``indexcheck.toml`` or ``pyproject.toml``'s ``[tool.indexcheck]``:
    a [defaults] table for every command, [check-index] etc. per command.

    Keys are option names with dashes or underscores (``min-cosine = 0.999``). Every table is
    read strictly: an unknown key (with a did-you-mean), a wrong type or a value out of range
    is bad input (exit 2) naming the key. ``[ci]`` is validated by :mod:`..commands.ci.config`.
    Returns click's ``default_map``: per command, and per subcommand inside a group.
    """
    try:
        if path is None:
            path = api.find_config()
            if path is None:
                return {}
        data = api.read_config(path)  # never a FIFO or /dev/zero; too deep is exit 2 too
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise InputError(f"cannot read {path}: {exc}; fix the TOML syntax") from None

    def norm(table: dict[str, Any]) -> dict[str, Any]:
        return {k.replace("-", "_"): v for k, v in table.items()}

    commands = {n: c for n, c in cli.commands.items() if not isinstance(c, click.Group)}
    by_command = {n: _option_keys(c) for n, c in commands.items()}
    everywhere: dict[str, click.Parameter] = {}
    for keys in by_command.values():
        everywhere = {**keys, **everywhere}
    tables = ["defaults", "ci", *commands]
    for name, table in data.items():
        if name not in tables:
            raise InputError(f"unknown table [{name}] in {path}" + _did_you_mean(name, tables))
        if not isinstance(table, dict):
            raise InputError(
                f"'{name}' in {path} must be a table ([{name}] with keys), not a value"
            )
        if name == "ci":
            continue
        known = everywhere if name == "defaults" else by_command[name]
        for key, value in table.items():
            k = key.replace("-", "_")
            if k not in known:
                names = sorted({o[2:] for p in known.values() for o in p.opts if o[:2] == "--"})
                raise InputError(
                    f"unknown key '{key}' in [{name}] of {path}" + _did_you_mean(key, names)
                )
            _check_value(value, known[k], f"'{key}' in [{name}] of {path}")

    defaults = norm(data.get("defaults", {}))
    default_map: dict[str, Any] = {}
    for name, cmd in cli.commands.items():
        table = data.get(name, {})
        merged = {**defaults, **(norm(table) if isinstance(table, dict) else {})}
        if isinstance(cmd, click.Group):  # a subcommand takes [defaults] only
            default_map[name] = {n: _by_param(c, defaults) for n, c in cmd.commands.items()}
        else:
            default_map[name] = _by_param(cmd, merged)
    return default_map


def _by_param(cmd: click.Command, values: dict[str, Any]) -> dict[str, Any]:
    """Config keys (option names: store, min_cosine) as click's parameter names."""
    alias = {
        opt.lstrip("-").replace("-", "_"): p.name
        for p in cmd.params
        for opt in getattr(p, "opts", [])
    }
    return {alias.get(k, k): v for k, v in values.items()}


def _config_given(ctx: click.Context, param: click.Parameter, value: Path | None) -> None:
    """A command's own ``--config``: read before its other options, so the file's values
    are their defaults (the group's ``--config`` does the same for every command)."""
    if value is None:
        return
    api.require_file(value, "config file", "check --config")
    names: list[str] = []
    here: click.Context | None = ctx
    while here is not None and here.parent is not None:
        names.append(here.info_name or "")
        here = here.parent
    found: Any = _load_config(value)
    for name in reversed(names):
        found = found.get(name, {}) if isinstance(found, dict) else {}
    ctx.default_map = found
    ctx.meta[CONFIG_META] = value


def add_config_option(cmd: click.Command) -> None:
    """Give ``cmd`` (and every subcommand of a group) ``--config FILE``, unless it has its
    own (``ci`` reads its [ci] table from its ``--config``)."""
    if isinstance(cmd, click.Group):
        for sub in cmd.commands.values():
            add_config_option(sub)
        return
    if any("--config" in getattr(p, "opts", ()) for p in cmd.params):
        return
    cmd.params.append(
        click.Option(
            ["--config"],
            type=click.Path(dir_okay=False, path_type=Path),
            is_eager=True,
            expose_value=False,
            callback=_config_given,
            help=CONFIG_HELP,
        )
    )


class Group(click.Group):
    """Maps every error to its exit code and one line on stderr; never a traceback, unless
    ``INDEXCHECK_DEBUG=1`` asks for one (the exit code stays the error's own)."""

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        finite_floats(cmd)
        add_wait_options(cmd)
        add_limit_options(cmd)
        add_config_option(cmd)
        add_examples(cmd)
        super().add_command(cmd, name)

    def invoke(self, ctx: click.Context) -> Any:
        with one_line_errors(ctx):
            return self._invoke_once(ctx)

    def _invoke_once(self, ctx: click.Context) -> Any:
        # the command's own --config replaces the one found in the working directory
        protected = ctx._protected_args if hasattr(ctx, "_protected_args") else ctx.protected_args
        rest = [*protected, *ctx.args]
        ctx.meta[_OWN_CONFIG] = any(a == "--config" or a.startswith("--config=") for a in rest)
        try:
            return super().invoke(ctx)
        finally:
            api.set_waiting()  # --timeout/--max-wait hold for this run only
            api.set_record_limit(None)

    def main(self, *args: Any, standalone_mode: bool = True, **kwargs: Any) -> Any:  # type: ignore[override]
        """click's main, but usage errors are one line: ``error: ...; see CMD --help``."""
        code = EXIT_OK
        try:
            rv = super().main(*args, standalone_mode=False, **kwargs)
        except click.UsageError as exc:
            path = exc.ctx.command_path.split() if exc.ctx is not None else []
            where = " ".join(["indexcheck", *path[1:]])  # the same under CliRunner
            message = exc.format_message()
            message = one_line(message[:1].lower() + message[1:]).rstrip(".")
            click.echo(f"error: {message}; see {where} --help", err=True)
            code, rv = EXIT_INPUT, None
        except click.ClickException as exc:
            click.echo(f"error: {one_line(exc.format_message())}", err=True)
            code, rv = (exc.exit_code if exc.exit_code != 1 else EXIT_INPUT), None
        except click.Abort as exc:  # a signal while the options were parsed
            stop = stopped_by(exc)
            click.echo(stop.message if stop else "interrupted", err=True)
            code, rv = (stop.exit_code if stop else EXIT_STOPPED), None
        else:
            if isinstance(rv, int) and not isinstance(rv, bool):
                code = rv
        if standalone_mode:
            sys.exit(code)
        return rv


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="indexcheck")
@click.option(
    "--config",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help=CONFIG_HELP,
)
@click.pass_context
def cli(ctx: click.Context, config: Path | None) -> None:
    """Prove a RAG vector index is right before users pay for it being wrong."""
    if config is not None:  # a FIFO or a device is refused unread, saying what it is
        require_file(config, "config file", "check --config")
    if config is None and ctx.meta.get(_OWN_CONFIG):
        return  # the command reads its own --config
    ctx.default_map = _load_config(config)
    found = config or api.find_config()
    if found is not None:
        ctx.meta[CONFIG_META] = found


class _Commands:
    """What ``register_commands`` hands a plugin: ``add_command`` that never lets a plugin
    replace a command already registered (a built-in or another plugin's)."""

    def __init__(self, group: click.Group, owner: str) -> None:
        self.group, self.owner = group, owner

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        name = name or cmd.name
        if name is None:
            return
        if name in self.group.commands:
            logging.getLogger("indexcheck").warning(
                "plugin %s: a command named %r exists already; not replaced", self.owner, name
            )
            return
        self.group.add_command(cmd, name)


@hookimpl
def register_commands(cli: Any) -> None:
    """The built-in commands, registered through the same hook as a plugin's."""
    from .check_answers import check_answers_cmd
    from .check_index import check_index_cmd
    from .ci import ci_cmd
    from .compare_ann import compare_ann_cmd
    from .completion import completion_cmd
    from .diagnose import diagnose_cmd
    from .diff_index import diff_index_cmd
    from .embed import embed_cmd
    from .judge import judge_cmd
    from .model import model_group
    from .probe_scale import convert_threshold_cmd, probe_scale_cmd
    from .questions import questions_group
    from .repair import repair_cmd
    from .sheet import sheet_group
    from .sweep_threshold import sweep_threshold_cmd
    from .traces import traces_group

    for cmd in (
        check_answers_cmd,
        check_index_cmd,
        compare_ann_cmd,
        ci_cmd,
        completion_cmd,
        diagnose_cmd,
        diff_index_cmd,
        embed_cmd,
        judge_cmd,
        sheet_group,
        model_group,
        probe_scale_cmd,
        convert_threshold_cmd,
        questions_group,
        repair_cmd,
        sweep_threshold_cmd,
        traces_group,
    ):
        cli.add_command(cmd)


_BUILTIN = "indexcheck.cli"


def _register() -> None:
    pm = api.plugin_manager()
    this = sys.modules[__name__]
    if pm.get_plugin(_BUILTIN) is None:
        pm.register(this, name=_BUILTIN)
    # built-ins first, so that no plugin can take a built-in command's name
    impls = sorted(pm.hook.register_commands.get_hookimpls(), key=lambda i: i.plugin is not this)
    for impl in impls:
        owner = pm.get_name(impl.plugin) or repr(impl.plugin)
        impl.function(cli=_Commands(cli, owner))


_register()


def main() -> None:
    try:
        cli.main(prog_name="indexcheck", standalone_mode=True)
    except SystemExit as exc:
        code = exc.code
    except BrokenPipeError:  # stdout closed by its reader outside any command: quietly
        code = EXIT_BROKEN_PIPE
    settle()  # a signal from now on would only change the exit code
    try:
        sys.stdout.flush()  # what is still buffered: its reader may be gone too
    except BrokenPipeError:
        code = EXIT_BROKEN_PIPE
    if code == EXIT_BROKEN_PIPE:
        quiet_stdout()
    sys.exit(code)


__all__ = ["EXIT_INPUT", "cli", "main"]
