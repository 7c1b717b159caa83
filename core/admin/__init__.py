from django.contrib import admin

from . import accounts, jobs, login_attempts  # noqa: F401  (register their ModelAdmins)

admin.site.site_header = "WellChosen administration"
admin.site.site_title = "WellChosen"
admin.site.index_title = "Datasets, annotation and test sets"
