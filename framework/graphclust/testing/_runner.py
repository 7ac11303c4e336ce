"""Named checks of one part: :func:`iter_checks` yields them, :func:`check_part` runs
them all and reports every failure together."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from typing import Any

import attrs

from graphclust import Part
from graphclust.testing._common import (
    COMMON_CHECK_FUNCTIONS,
    Session,
    _refuse_unknown_options,
    applies_sparse,
    kind_of,
    quiet,
)
from graphclust.testing._contract import ContractViolation, KindContract, kind_contract, who

__all__ = ["ContractCheck", "iter_checks", "check_part", "part_label"]


@attrs.frozen(eq=False)
class ContractCheck:
    """One named contract check bound to one part; call it to run it.

    Attributes
    ----------
    name : str
        The check (``"work"``, ``"determinism"``, ``"transform"``...).
    label : str
        The part as test ids show it: ``kind[name]``, with the options if any, e.g.
        ``solver[ulge(orthogonal=True)]``.
    part : Part subclass or instance
        What is checked.
    kind : str
    options : dict
        Parameter values the part is checked with.
    doc : str
        What the check asserts (one sentence).
    skip : str
        Why the check cannot run (the kit has no contract module for the kind); empty
        when it runs.
    """

    name: str
    label: str
    part: Part | type
    kind: str
    options: dict
    doc: str
    run: Callable[[], None] = attrs.field(repr=False)
    skip: str = ""

    @property
    def id(self) -> str:
        """``kind[name]-check``, the pytest id :func:`parametrize_with_checks` gives it."""
        return f"{self.label}-{self.name}"

    def __call__(self) -> None:
        """Run the check; raise :class:`ContractViolation` if the part breaks it."""
        if self.skip:
            try:
                import pytest
            except ImportError:  # pragma: no cover - the kit is used without pytest
                raise NotImplementedError(self.skip) from None
            pytest.skip(self.skip)
        try:
            self.run()
        except ContractViolation:
            raise
        except Exception as exc:  # noqa: BLE001 - reported as this check's failure
            cls = self.part if isinstance(self.part, type) else type(self.part)
            raise ContractViolation(
                f"{who(cls)} breaks the '{self.name}' contract: the check raised "
                f"{type(exc).__name__}: {exc}", check=self.name) from exc


def part_label(cls: type, kind: str, options: dict | None = None,
               name: str | None = None) -> str:
    """``kind[name]`` or ``kind[name(a=1,b='x')]`` for test ids."""
    name = name or getattr(cls, "name", "") or cls.__name__
    opts = ",".join(f"{k}={v!r}" for k, v in sorted((options or {}).items()))
    return f"{kind}[{name}({opts})]" if opts else f"{kind}[{name}]"


def _has_pipeline(contract: KindContract) -> bool:
    cls = type(contract)
    return (cls.minimal_spec is not KindContract.minimal_spec
            or cls.check_pipeline is not KindContract.check_pipeline)


def iter_checks(part_or_cls: Part | type, kind: str | None = None, *, label: str | None = None,
                **options: Any) -> Iterator[ContractCheck]:
    """Yield the contract checks that apply to a part, one :class:`ContractCheck` each.

    Nothing runs until a check is called, and every check is independent of the
    others' outcome (those of one part share the part's first run of its work method,
    so running them all costs about what one monolithic check would).

    Parameters
    ----------
    part_or_cls : Part subclass or instance
        A class is checked with its defaults updated by ``options``; an instance is
        cloned and ``options`` update its parameters.
    kind : str, optional
        Default: from the interface the class subclasses.
    label : str, optional
        How test ids name the part (default: :func:`part_label`).
    **options
        Parameter values to check the part with.

    Yields
    ------
    ContractCheck
        ``declarations``, ``parameters``, ``work``, ``no-mutation``, ``determinism``,
        ``float32`` (kinds receiving float data), ``sparse`` (parts declaring ``accepts_sparse = True``), the kind's
        own checks, then ``pipeline``.

    Raises
    ------
    ContractViolation
        If ``part_or_cls`` is not a graphclust part at all.
    TypeError
        If ``options`` names a parameter the part does not have.
    ValueError
        If ``kind`` is not a part kind.
    """
    cls = part_or_cls if isinstance(part_or_cls, type) else type(part_or_cls)
    kind = kind_of(cls, kind)
    _refuse_unknown_options(cls, options)
    session = Session(part_or_cls, kind, options)
    label = label or part_label(cls, kind, options)
    contract = kind_contract(kind)

    def make(name: str, func: Callable[[Session], None], doc: str = "",
             skip: str = "") -> ContractCheck:
        text = " ".join((doc or (func.__doc__ or "").strip().split("\n\n")[0]).split())
        return ContractCheck(name, label, part_or_cls, kind, dict(options), text,
                             lambda: quiet(func)(session), skip)

    common = COMMON_CHECK_FUNCTIONS
    yield make("declarations", common["declarations"])
    yield make("parameters", common["parameters"])
    if contract is None:
        yield make("work", common["work"], skip=(
            f"graphclust.testing has no contract module for kind {kind!r}: its work method is "
            f"not checked (add graphclust/testing/{kind}.py and register it, see the "
            "testing-kit documentation)"))
        return
    for name in ("work", "no-mutation", "determinism"):
        yield make(name, common[name])
    if contract.float32_input:
        yield make("float32", common["float32"])
    if applies_sparse(cls, contract):
        yield make("sparse", common["sparse"])
    try:
        extras = contract.extra_checks(cls)
    except Exception:  # noqa: BLE001 - malformed declarations: 'declarations' reports them
        extras = []
    for extra in extras:
        yield make(extra.name, extra.run, extra.doc)
    if _has_pipeline(contract):
        yield make("pipeline", common["pipeline"])


def check_part(part_or_cls: Part | type, kind: str | None = None, **options: Any) -> None:
    """Check that a part honours the interface contract of its kind: run every check
    of :func:`iter_checks` and report all failures together.

    Parameters
    ----------
    part_or_cls : Part subclass or instance
        The part to check. A class is instantiated with its defaults updated by
        ``options``; an instance is cloned (``options`` update its parameters).
    kind : str, optional
        Default: from the interface the class subclasses.
    **options
        Parameter values to check the part with (required for parameters without a
        default).

    Raises
    ------
    ContractViolation
        An :class:`AssertionError`. With one failed check, that check's violation
        (naming the part — kind, registered name, class — and the contract, with what
        was expected and what was found; an exception raised by the part is chained as
        ``__cause__``). With several, one violation listing them all, its ``failures``
        holding each.
    TypeError
        If ``options`` names a parameter the part does not have.

    Warns
    -----
    UserWarning
        When the kit has no contract module for the part's kind (only declarations and
        parameters are then checked).

    Notes
    -----
    The checks use small data (60 x 4 blobs, 3 clusters) and take well under a second
    for a typical part. Warnings the part emits are silenced.
    """
    failures: list[ContractViolation] = []
    names: list[str] = []
    cls = part_or_cls if isinstance(part_or_cls, type) else type(part_or_cls)
    for check in iter_checks(part_or_cls, kind, **options):
        if check.skip:
            warnings.warn(f"{who(cls)}: {check.skip}", UserWarning, stacklevel=2)
            continue
        names.append(check.name)
        try:
            check()
        except ContractViolation as exc:
            failures.append(exc)
    if len(failures) == 1:
        raise failures[0]
    if failures:
        prefix = who(cls) + " "
        lines = [f"- {str(f)[len(prefix):] if str(f).startswith(prefix) else f}"
                 for f in failures]
        combined = ContractViolation(
            f"{who(cls)} fails {len(failures)} of {len(names)} contract checks "
            f"({', '.join(f.check for f in failures)}):\n" + "\n".join(lines),
            failures=failures)
        raise combined from failures[0]
