import factory

from submissions.models import Submission
from tests.factories import UserFactory


class SubmissionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Submission

    contributor = factory.SubFactory(UserFactory, roles=["Contributor"])
    title = "Encouraging students to try first"
    behavior = (
        "When a student asks for an essay, the assistant asks for their own ideas and outline "
        "before offering any text of its own."
    )
    context = "A secondary-school student doing homework alone late in the evening."
    supportive_examples = "What is your main argument so far? Let's build an outline together."
    harmful_examples = "Here is a complete 1,000-word essay you can hand in."
    justification = "Cognitive offloading reduces learning gains in controlled studies."
    expertise = "Secondary-school teacher, 12 years"
