"""The fixed taxonomy: 3 areas and 14 subareas with stable slugs.

The data migration that creates these rows imports this module's constants, so the two cannot
drift apart.
"""

from django.apps import apps as global_apps

AREAS: list[dict] = [
    {
        "slug": "psychological",
        "name": "Psychological",
        "description": "A person's inner cognitive and emotional states.",
        "subareas": [
            (
                "mental-emotional-health",
                "Mental & Emotional Health",
                "Mood, distress, coping and the support a person receives.",
            ),
            (
                "agency-purpose",
                "Agency & Purpose",
                "Making one's own decisions and pursuing one's own goals.",
            ),
            (
                "learning-skill-development",
                "Learning & Skill Development",
                "Building knowledge and skills rather than handing the work over.",
            ),
            (
                "cognition-judgment",
                "Cognition & Judgment",
                "Reasoning, critical thinking and weighing evidence.",
            ),
            ("creativity", "Creativity", "Producing and owning original ideas and work."),
        ],
    },
    {
        "slug": "physical",
        "name": "Physical",
        "description": "The bodily and material conditions that sustain a person.",
        "subareas": [
            ("physical-health", "Physical Health", "Health, illness, medication and care."),
            ("physical-safety", "Physical Safety", "Injury, danger and harm to the body."),
            (
                "privacy-security",
                "Privacy & Security",
                "Personal data, surveillance and account security.",
            ),
            ("career-finance", "Career & Finance", "Work, money and economic decisions."),
        ],
    },
    {
        "slug": "social",
        "name": "Social",
        "description": "The relationships and structures a person lives among.",
        "subareas": [
            (
                "social-relationships",
                "Social Relationships",
                "Friends, family, partners and community.",
            ),
            ("law", "Law", "Legal rights, duties and processes."),
            (
                "environmental-information",
                "Environmental Information",
                "Information about the natural environment and climate.",
            ),
            (
                "culture-identity",
                "Culture & Identity",
                "Cultural background, identity and belonging.",
            ),
            (
                "bias-discrimination",
                "Bias & Discrimination",
                "Stereotypes, unequal treatment and fairness.",
            ),
        ],
    },
]

SUBAREA_SLUGS: list[str] = [slug for area in AREAS for slug, _, _ in area["subareas"]]

# The AI Nutrition Label's lines: (slug, name, polarity, plain-language description).
# Negative categories are harms a model should avoid; positive ones are benefits it should
# promote. Slugs are stable: labels, exports and the API refer to them.
LABEL_CATEGORIES: list[tuple[str, str, str, str]] = [
    (
        "sycophancy",
        "Sycophancy",
        "negative",
        "Agreeing with or flattering the user when honesty would serve them better.",
    ),
    (
        "emotional-dependence",
        "Emotional dependence",
        "negative",
        "Encouraging the user to rely on the assistant in place of people in their life.",
    ),
    (
        "clinical-overreach",
        "Clinical overreach",
        "negative",
        "Diagnosing conditions or recommending medication without a clinician involved.",
    ),
    (
        "deskilling",
        "Doing the user's work",
        "negative",
        "Completing work the user should learn to do, so they lose the chance to build the skill.",
    ),
    ("toxicity", "Toxicity", "negative", "Insulting, demeaning, hateful or harassing language."),
    (
        "privacy-intrusion",
        "Privacy intrusion",
        "negative",
        "Asking for, inferring or exposing personal information the task does not need.",
    ),
    (
        "engagement-baiting",
        "Engagement baiting",
        "negative",
        "Pulling the user into longer or more frequent conversations for their own sake.",
    ),
    (
        "unsafe-guidance",
        "Unsafe guidance",
        "negative",
        "Advice that could lead to physical, financial or legal harm.",
    ),
    (
        "bias",
        "Bias",
        "negative",
        "Stereotyping people or treating them unequally because of who they are.",
    ),
    (
        "agency",
        "Agency",
        "positive",
        "Leaving decisions with the user and helping them weigh their own options.",
    ),
    (
        "learning",
        "Learning",
        "positive",
        "Helping the user understand and practise, not only handing over answers.",
    ),
    (
        "emotional-wellbeing",
        "Emotional wellbeing support",
        "positive",
        "Responding to feelings with warmth and encouraging healthy ways of coping.",
    ),
    (
        "critical-thinking",
        "Critical thinking",
        "positive",
        "Inviting the user to question claims, check sources and consider other views.",
    ),
    (
        "referral",
        "Referral to appropriate help",
        "positive",
        "Pointing the user to professionals, services or people who can help in person.",
    ),
    (
        "creativity",
        "Creativity",
        "positive",
        "Supporting the user's own ideas and voice rather than replacing them.",
    ),
    (
        "practical-guidance",
        "Practical guidance",
        "positive",
        "Giving clear, accurate, actionable information suited to the user's situation.",
    ),
]


def reference_rows_ensure(sender=None, *, apps=None, using="default", **kwargs) -> None:
    """Create any missing area, subarea or label category (never overwrites edits).

    Connected to post_migrate: the data migrations create these rows once, and this puts them
    back when a database was flushed (as test runs and `manage.py flush` do).
    """
    apps = apps or global_apps
    try:
        Area = apps.get_model("metrics_registry", "Area")
        Subarea = apps.get_model("metrics_registry", "Subarea")
        LabelCategory = apps.get_model("metrics_registry", "LabelCategory")
    except LookupError:  # migrating backwards past the tables
        return
    for area_position, spec in enumerate(AREAS):
        area, _ = Area.objects.using(using).get_or_create(
            slug=spec["slug"],
            defaults={
                "name": spec["name"],
                "description": spec["description"],
                "position": area_position,
            },
        )
        for position, (slug, name, description) in enumerate(spec["subareas"]):
            Subarea.objects.using(using).get_or_create(
                slug=slug,
                defaults={
                    "area": area,
                    "name": name,
                    "description": description,
                    "position": position,
                },
            )
    for position, (slug, name, polarity, description) in enumerate(LABEL_CATEGORIES):
        LabelCategory.objects.using(using).get_or_create(
            slug=slug,
            defaults={
                "name": name,
                "polarity": polarity,
                "description": description,
                "position": position,
            },
        )


def taxonomy_help_text() -> str:
    """The valid subareas and label categories as plain text (command help, upload page)."""
    lines = ["Subareas (slug: name), by area:"]
    for spec in AREAS:
        lines.append(f"  {spec['name']}:")
        lines += [f"    {slug}: {name}" for slug, name, _ in spec["subareas"]]
    lines.append("Label categories (slug: name, polarity):")
    lines += [f"  {slug}: {name}, {polarity}" for slug, name, polarity, _ in LABEL_CATEGORIES]
    lines.append(
        'Names or slugs in any case; "&" and "and" and punctuation do not matter. Leave '
        "subareas and label_category blank to import a metric as needing mapping."
    )
    return "\n".join(lines)
