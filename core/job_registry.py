"""Job kinds: what each app's background jobs are, declared by the app that owns them.

A kind is a :class:`JobParams` dataclass (its name, label, queue and typed parameters, each
declared once with :func:`param`: its type, default and help) and a handler that runs it. The forms
that start a job (core.job_forms) and the command that runs it (core.commands) build their fields
and options from those declarations. Each app registers its kinds from its
``AppConfig.ready()``; ``core.tasks.run_job`` runs any of them by job id. Nothing in core names
another app's kinds, so adding a kind to an app touches only that app.
"""

import dataclasses
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Self

from django.conf import settings

from core.errors import UserError

QUEUES = ("default", "gpu")  # "gpu" is sent to settings.WELLCHOSEN_GPU_QUEUE


@dataclass(frozen=True)
class NextStep:
    """Where a finished job's work goes on: a link's words and address."""

    label: str
    url: str


@dataclass(frozen=True, kw_only=True)
class ParamSpec:
    """What a job parameter's forms and command options are built from, beside its type and default.

    ``help`` is said once, in lower case (a form shows it capitalised); ``choices`` are its allowed
    values, plain or as ``(value, label)`` (for a list, the allowed items). ``option`` is the
    command's name for it when that is not ``--<name>`` (a name without dashes is a positional
    argument, as a required path is by default); ``form_name`` is the form field's name when that
    is not the parameter's. ``form`` and ``command`` say whether the forms that start the job and
    its command ask for it (False: the page or the command gives it: an uploaded file's path, a row
    just created).
    ``path``: a file's path, resolved to an absolute one by the command. ``separator``: a list given
    to the command as one comma-separated value instead of a repeated option.
    """

    help: str
    label: str = ""
    choices: Sequence[str] | Sequence[tuple[str, str]] = ()
    option: str = ""
    form_name: str = ""
    form: bool = True
    command: bool = True
    path: bool = False
    separator: str = ""

    @property
    def choice_values(self) -> list[str]:
        return [c[0] if isinstance(c, tuple) else c for c in self.choices]

    @property
    def choice_pairs(self) -> list[tuple[str, str]]:
        return [c if isinstance(c, tuple) else (c, c) for c in self.choices]


def param(
    default: Any = dataclasses.MISSING, *, default_factory: Callable[[], Any] | Any = dataclasses.MISSING, **spec: Any
) -> Any:
    """A job parameter: a dataclass field with its default and its :class:`ParamSpec` (``help`` and
    the rest, as keywords), the one declaration that the forms and the command read."""
    return dataclasses.field(default=default, default_factory=default_factory, metadata={"param": ParamSpec(**spec)})


@dataclass(frozen=True)
class Param:
    """One declared parameter of a kind: its name, type, default (MISSING: required) and spec."""

    name: str
    hint: Any
    default: Any
    spec: ParamSpec

    @property
    def required(self) -> bool:
        return self.default is dataclasses.MISSING

    @property
    def value_type(self) -> Any:
        """The type without its None arm (``int | None`` -> int; ``list[str]`` stays)."""
        args = [arm for arm in typing.get_args(self.hint) if arm is not type(None)]
        if typing.get_origin(self.hint) in (typing.Union, types.UnionType) and len(args) == 1:
            return args[0]
        return self.hint

    @property
    def is_list(self) -> bool:
        return typing.get_origin(self.value_type) is list

    @property
    def item_type(self) -> Any:
        return typing.get_args(self.value_type)[0] if self.is_list else self.value_type

    @property
    def form_name(self) -> str:
        return self.spec.form_name or self.name


@dataclass(frozen=True, kw_only=True)
class JobParams:
    """Typed parameters of one job kind, stored as JSON on the Job row.

    Subclasses set ``kind`` (the name stored in ``Job.kind``), ``label``, ``queue`` and
    ``start_permission`` and declare their parameters as fields of JSON types (str, int, float,
    bool, None, lists of them); a field's default is the one default of that parameter, read by
    the admin form and the management command through :meth:`default`.
    """

    kind: ClassVar[str]
    label: ClassVar[str]
    queue: ClassVar[str] = "default"
    # The model permission ("app.codename") of the page or action that starts a job of this kind;
    # retrying a failed one from its page needs it too (None: only the jobs' own permission).
    start_permission: ClassVar[str | None] = None

    def to_json(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Self:
        """Parameters from a Job row; an unknown or missing field, or a value of the wrong type,
        is a UserError naming it (a job created by hand in the database, or by older code)."""
        if not isinstance(data, dict):
            raise UserError(f"{cls.kind} job: parameters must be a JSON object, not {type(data).__name__}")
        fields = {f.name: f for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - set(fields))
        if unknown:
            raise UserError(f"{cls.kind} job: unknown parameter(s) {', '.join(unknown)}")
        hints = typing.get_type_hints(cls)
        values = {}
        for name, field in fields.items():
            if name not in data:
                if field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING:
                    raise UserError(f"{cls.kind} job: parameter {name} is missing")
                continue
            values[name] = _checked(cls.kind, name, data[name], hints[name])
        return cls(**values)

    def summary(self, result: dict[str, Any]) -> str:
        """One paragraph saying what a successful job of this kind did, from its ``result``
        ("Imported 100 dialogues (92 questions) from dialogues_test.txt; 8 lines skipped.").
        Empty: the job page shows the result's scalar facts as a table instead."""
        return ""

    def next_step(self, result: dict[str, Any]) -> NextStep | None:
        """The page where the work of a successful job of this kind goes on (a dataset's page, the
        test set it built, the evaluation it ran); None for none."""
        return None

    @classmethod
    def params(cls) -> list[Param]:
        """Every parameter of the kind, in declaration order; one declared without :func:`param`
        is an error (it would have no help)."""
        hints = typing.get_type_hints(cls)
        declared = []
        for field in dataclasses.fields(cls):
            spec = field.metadata.get("param")
            if spec is None:
                raise TypeError(f"{cls.__name__}.{field.name}: declare it with core.job_registry.param(...)")
            declared.append(Param(field.name, hints[field.name], cls._field_default(field), spec))
        return declared

    @classmethod
    def param_get(cls, name: str) -> Param:
        return next(p for p in cls.params() if p.name == name)

    @classmethod
    def form_params(cls) -> list[Param]:
        """The parameters the forms that start a job of this kind ask for."""
        return [p for p in cls.params() if p.spec.form]

    @classmethod
    def command_params(cls) -> list[Param]:
        """The parameters the command that runs a job of this kind takes as options."""
        return [p for p in cls.params() if p.spec.command]

    @staticmethod
    def _field_default(field: dataclasses.Field) -> Any:
        if field.default_factory is not dataclasses.MISSING:
            return field.default_factory()
        return field.default

    @classmethod
    def default(cls, name: str) -> Any:
        """The default of parameter ``name`` (for a form's initial value or a command's default)."""
        field = next(f for f in dataclasses.fields(cls) if f.name == name)
        if field.default_factory is not dataclasses.MISSING:
            return field.default_factory()
        if field.default is dataclasses.MISSING:
            raise KeyError(f"{cls.kind}: parameter {name} has no default")
        return field.default


# handler(params, job, progress) -> result: the kind's JobParams, the core.models.Job row and its
# core.services.jobs.JobProgress (not imported here: those modules import this one).
Handler = Callable[[Any, Any, Any], dict]
# shard_handler(params, job, shard, progress) -> result dict: one part of a sharded job's work, the
# core.models.JobShard row (its ``params`` say which part) and a core.services.job_shards.ShardProgress.
ShardHandler = Callable[[Any, Any, Any, Any], dict]
# What a kind registers for its shards: one handler (its one stage, "") or {stage: handler} for a
# kind whose job runs several stages of shards (JobShard.stage).
ShardHandlers = ShardHandler | Mapping[str, ShardHandler]


@dataclass(frozen=True)
class JobKind:
    params: type[JobParams]
    handler: Handler  # handler(params, job, progress) -> result dict
    # The kind's work on one shard of each stage, for a handler that splits its work
    # (core.services.job_shards): {stage: shard handler}; empty for a kind that does not.
    shard_handlers: Mapping[str, ShardHandler] = dataclasses.field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.params.kind

    @property
    def label(self) -> str:
        return self.params.label

    @property
    def queue(self) -> str:
        return self.params.queue

    @property
    def start_permission(self) -> str | None:
        return self.params.start_permission

    def shard_handler(self, stage: str) -> ShardHandler:
        """The kind's work on one shard of ``stage``; a UserError when it has none."""
        try:
            return self.shard_handlers[stage]
        except KeyError:
            stage_text = f" of stage {stage!r}" if stage else ""
            raise UserError(f"job kind {self.name!r} has no shard handler{stage_text}") from None


_kinds: dict[str, JobKind] = {}


def job_kind_register(
    *, params: type[JobParams], handler: Handler, shard_handler: ShardHandlers | None = None
) -> JobKind:
    """Declare a job kind (``shard_handler``: its work on one shard, when its handler splits the
    work; a mapping {stage: handler} when it splits it in several stages). The same class again (a
    second ``ready()``) is registered again with the handlers given; another class under a taken
    name is an error."""
    if params.queue not in QUEUES:
        raise ValueError(f"job kind {params.kind!r}: queue must be one of {QUEUES}, not {params.queue!r}")
    existing = _kinds.get(params.kind)
    if existing is not None and existing.params is not params:
        raise ValueError(f"job kind {params.kind!r} is registered already by {existing.params.__module__}")
    kind = JobKind(params=params, handler=handler, shard_handlers=_by_stage(shard_handler))
    _kinds[params.kind] = kind
    return kind


def _by_stage(shard_handler: ShardHandlers | None) -> dict[str, ShardHandler]:
    if shard_handler is None:
        return {}
    if isinstance(shard_handler, Mapping):
        return dict(shard_handler)
    return {"": shard_handler}


def job_kinds_register(
    handlers: Mapping[type[JobParams], Handler], shard_handlers: Mapping[type[JobParams], ShardHandlers] | None = None
) -> None:
    """Declare an app's job kinds, ``{params class: handler}``, and the shard handlers of those that
    split their work (called from its AppConfig.ready()): a handler, or {stage: handler}."""
    shard_handlers = shard_handlers or {}
    unknown = [params.kind for params in shard_handlers if params not in handlers]
    if unknown:
        raise ValueError(f"shard handlers for kinds without a handler: {', '.join(unknown)}")
    for params, handler in handlers.items():
        job_kind_register(params=params, handler=handler, shard_handler=shard_handlers.get(params))


def job_kind_unregister(name: str) -> None:
    _kinds.pop(name, None)


def job_kind_get(name: str) -> JobKind:
    try:
        return _kinds[name]
    except KeyError:
        raise UserError(f"unknown job kind {name!r} (no installed app declares it)") from None


def job_kind_queue(name: str) -> str:
    """The Celery queue of a kind's messages (its job's and its shards'). Jobs that want a GPU
    (encoding a repository, scoring with a language model) go to settings.WELLCHOSEN_GPU_QUEUE."""
    queue = job_kind_get(name).queue
    return settings.WELLCHOSEN_GPU_QUEUE if queue == "gpu" else queue


def job_kind_is_registered(name: str) -> bool:
    return name in _kinds


def job_kind_label(name: str) -> str:
    kind = _kinds.get(name)
    return kind.label if kind else name


def job_kinds_all() -> list[JobKind]:
    return sorted(_kinds.values(), key=lambda kind: kind.name)


def _checked(kind: str, name: str, value: Any, hint: Any) -> Any:
    """``value`` if it is of the declared JSON type (an int where a float is declared is taken)."""
    if _conforms(value, hint):
        return value
    raise UserError(f"{kind} job: parameter {name} has the wrong type ({value!r})")


def _conforms(value: Any, hint: Any) -> bool:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_conforms(value, arm) for arm in typing.get_args(hint))
    if hint is type(None):
        return value is None
    if origin is list:
        (item,) = typing.get_args(hint) or (Any,)
        return isinstance(value, list) and all(_conforms(v, item) for v in value)
    if hint is Any:
        return True
    if hint is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, hint)
