"""Every choice label a person reads goes through translation.

A `models.TextChoices` / `IntegerChoices` label reaches pages through `get_FOO_display()`,
forms and templates; a plain English string there is English on a Spanish page, and no
catalogue check sees it (it was never marked). Every Choices class defined in the project's
apps, and every model field's `choices`, must hold lazy translations (`gettext_lazy` /
`pgettext_lazy`), which this module checks.

The classes are found at run time (`models.Choices`' subclasses), after importing every module
of the project's apps whose source defines one, so a class in a module no model imports (such
as `evaluations.evidence_support`) is checked too.
"""

import ast
import functools
import importlib
from collections.abc import Iterable
from pathlib import Path

from django.apps import apps
from django.conf import settings
from django.db import models
from django.utils.functional import Promise, lazy

ROOT = Path(settings.BASE_DIR)

# Model fields whose labels are not words to translate, each with its reason.
ALLOWED_FIELDS = {
    # The role's code ("expert_reviewer") is its own label, seen in the admin only; giving it
    # the role's words (`core.roles.ROLE_LABELS`) would change the migration.
    ("core.RoleChange", "role"),
    # The providers' own names, from the Django-free provider registry (`llm.providers`).
    ("llm.ModelConfiguration", "provider"),
}


def project_packages() -> list[str]:
    """The installed apps that live in this repository (not Django's nor a library's)."""
    return sorted(
        config.name for config in apps.get_app_configs() if Path(config.path).is_relative_to(ROOT)
    )


def _defines_choices(tree: ast.Module) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for base in node.bases:
                name = base.attr if isinstance(base, ast.Attribute) else getattr(base, "id", "")
                if name.endswith("Choices"):
                    return True
    return False


def modules_defining_choices(packages: Iterable[str]) -> list[str]:
    """The modules of `packages` whose source defines a Choices class (migrations skipped)."""
    found = []
    for package in packages:
        directory = ROOT / package.replace(".", "/")
        for path in sorted(directory.rglob("*.py")):
            relative = path.relative_to(ROOT)
            if "migrations" in relative.parts:
                continue
            source = path.read_text()
            if "Choices" in source and _defines_choices(ast.parse(source, str(relative))):
                found.append(".".join(relative.with_suffix("").parts).removesuffix(".__init__"))
    return found


def _all_subclasses(cls: type) -> list[type]:
    found = []
    for subclass in cls.__subclasses__():
        found += [subclass, *_all_subclasses(subclass)]
    return found


@functools.cache
def project_choices_classes() -> list[type[models.Choices]]:
    packages = project_packages()
    for module in modules_defining_choices(packages):
        importlib.import_module(module)
    prefixes = tuple(f"{package}." for package in packages)
    classes = {
        cls
        for cls in _all_subclasses(models.Choices)
        if cls.__module__.startswith(prefixes) and cls.__members__
    }
    return sorted(classes, key=lambda cls: (cls.__module__, cls.__qualname__))


def untranslated_labels(classes: Iterable[type[models.Choices]]) -> list[str]:
    """`module.Class.MEMBER: 'label'` for every member whose label is not a lazy translation."""
    return [
        f"{cls.__module__}.{cls.__qualname__}.{member.name}: {member.label!r}"
        for cls in classes
        for member in cls
        if not isinstance(member.label, Promise)
    ]


def untranslated_field_labels(fields: Iterable[tuple[str, models.Field]]) -> list[str]:
    """`app.Model.field: value -> 'label'` for every choice of the (model's label, field) pairs
    with a plain label."""
    return [
        f"{model}.{field.name}: {value!r} -> {label!r}"
        for model, field in fields
        for value, label in field.flatchoices
        if not isinstance(label, Promise)
    ]


def project_choice_fields() -> list[tuple[str, models.Field]]:
    packages = set(project_packages())
    return [
        (model._meta.label, field)
        for model in apps.get_models()
        if model._meta.app_config.name in packages
        for field in model._meta.get_fields()
        if getattr(field, "choices", None) and (model._meta.label, field.name) not in ALLOWED_FIELDS
    ]


def test_every_choice_label_goes_through_translation():
    classes = project_choices_classes()
    assert len(classes) > 20, [cls.__qualname__ for cls in classes]  # the walk found the project
    problems = untranslated_labels(classes)
    assert not problems, "Wrap these labels in gettext_lazy or pgettext_lazy:\n" + "\n".join(
        problems
    )


def test_every_model_field_choice_label_goes_through_translation():
    fields = project_choice_fields()
    assert len(fields) > 20, fields
    problems = untranslated_field_labels(fields)
    assert not problems, "Wrap these labels in gettext_lazy or pgettext_lazy:\n" + "\n".join(
        problems
    )


def test_the_allowed_fields_still_exist_with_choices():
    for label, name in ALLOWED_FIELDS:
        assert apps.get_model(label)._meta.get_field(name).choices, (label, name)


def test_the_walk_finds_classes_no_model_imports():
    names = {f"{cls.__module__}.{cls.__qualname__}" for cls in project_choices_classes()}
    assert "evaluations.evidence_support.GradeEvidence" in names
    assert "core.languages.TranslationProvenance" in names


# Lazy like a translation, without one (a test's words do not belong in the catalogue).
_lazy_text = lazy(str, str)


class _Mixed(models.TextChoices):
    TRANSLATED = "translated", _lazy_text("Translated")
    PLAIN = "plain", "Plain"


def test_the_checker_names_a_plain_label_by_class_and_member():
    assert untranslated_labels([_Mixed]) == [f"{__name__}._Mixed.PLAIN: 'Plain'"]


def test_the_field_checker_names_a_plain_label_by_model_and_field():
    kind = models.CharField(
        name="kind", max_length=5, choices=[("a", _lazy_text("Translated")), ("b", "Plain")]
    )
    assert untranslated_field_labels([("core.Thing", kind)]) == ["core.Thing.kind: 'b' -> 'Plain'"]


def test_the_walk_skips_classes_outside_the_project():
    assert _Mixed not in project_choices_classes()
