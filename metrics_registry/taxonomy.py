"""The fixed taxonomy: 3 areas and 14 subareas with stable slugs.

The data migration that creates these rows imports this module's constants, so the two cannot
drift apart.
"""

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
