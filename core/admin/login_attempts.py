"""django-axes' list of counted login failures (an attempt's row is deleted to unlock that login at
once). Its one action deletes the expired rows, so it needs the permission to delete them, as every
admin action that changes something does here."""

from axes.admin import AccessAttemptAdmin
from axes.models import AccessAttempt
from django.contrib import admin


class LoginAttemptAdmin(AccessAttemptAdmin):
    @admin.action(description="Clean up expired attempts", permissions=["delete"])
    def cleanup_expired_attempts(self, request, queryset):
        return super().cleanup_expired_attempts(request, queryset)


if admin.site.is_registered(AccessAttempt):  # AXES_ENABLE_ADMIN
    admin.site.unregister(AccessAttempt)
    admin.site.register(AccessAttempt, LoginAttemptAdmin)
