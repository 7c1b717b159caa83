"""Moving a model between apps without touching its table (state-only migrations).

The model's content type is renamed in place, so the permissions granted on it and the admin's
history of its rows stay attached to it.
"""


def content_type_move(*, old_app: str, new_app: str, model: str):
    """A RunPython function that renames ``old_app.model``'s content type to ``new_app.model``
    (nothing to do on a fresh database, whose content types are made after migrating)."""

    def forwards(apps, schema_editor):
        content_types = apps.get_model("contenttypes", "ContentType").objects.using(schema_editor.connection.alias)
        if not content_types.filter(app_label=new_app, model=model).exists():
            content_types.filter(app_label=old_app, model=model).update(app_label=new_app)

    def backwards(apps, schema_editor):
        content_types = apps.get_model("contenttypes", "ContentType").objects.using(schema_editor.connection.alias)
        if not content_types.filter(app_label=old_app, model=model).exists():
            content_types.filter(app_label=new_app, model=model).update(app_label=old_app)

    return forwards, backwards
