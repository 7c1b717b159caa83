from django.contrib import admin

from . import corpus, crowd, jobs, release, scoring  # noqa: F401  (registers the ModelAdmins)

admin.site.site_header = "WellChosen administration"
admin.site.site_title = "WellChosen"
admin.site.index_title = "Datasets, annotation and releases"
