from django.contrib import admin

from . import jobs  # noqa: F401  (registers the ModelAdmin)

admin.site.site_header = "WellChosen administration"
admin.site.site_title = "WellChosen"
admin.site.index_title = "Datasets, annotation and test sets"
