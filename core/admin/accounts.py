"""Django's own admin of users and groups, on our CheckedInputAdmin (its list pages take forged
action rows and filters like ours)."""

from django.contrib import admin
from django.contrib.auth import admin as auth_admin
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from .helpers import CheckedInputAdmin

User = get_user_model()

for model in (User, Group):
    if admin.site.is_registered(model):
        admin.site.unregister(model)


@admin.register(User)
class UserAdmin(CheckedInputAdmin, auth_admin.UserAdmin):
    pass


@admin.register(Group)
class GroupAdmin(CheckedInputAdmin, auth_admin.GroupAdmin):
    pass
