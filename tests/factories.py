import factory
from allauth.account.models import EmailAddress
from django.contrib.auth import get_user_model

from core.roles import user_add_roles


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user{n}@example.org")
    email = factory.SelfAttribute("username")
    first_name = factory.Faker("first_name")
    password = factory.django.Password("correct-horse-battery")

    @factory.post_generation
    def roles(self, create, extracted, **kwargs):
        if create and extracted:
            from core.roles import Role

            user_add_roles(self, [Role(role) for role in extracted])

    @factory.post_generation
    def verified_email(self, create, extracted, **kwargs):
        if create and extracted is not False:
            EmailAddress.objects.create(user=self, email=self.email, verified=True, primary=True)
