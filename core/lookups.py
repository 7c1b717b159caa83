"""``in`` on integer columns, alike on every database: a number outside the column's range matches
no row. Django does this for ``exact`` and the comparisons (IntegerFieldOverflow); for ``in``,
SQLite raises OverflowError on such a number (an id list posted to a form or an admin action
is enough), where PostgreSQL answers with no row."""

from django.db.models import IntegerField
from django.db.models.lookups import In


class IntegerFieldInRange(In):
    """``in`` that leaves out the numbers the column cannot hold (all of them: no row)."""

    def process_rhs(self, compiler, connection):
        if not self.rhs_is_direct_value():
            return super().process_rhs(compiler, connection)
        low, high = connection.ops.integer_field_range(self.lhs.output_field.get_internal_type())
        given = self.rhs
        self.rhs = [
            value
            for value in given
            if not isinstance(value, int) or ((low is None or value >= low) and (high is None or value <= high))
        ]
        try:
            return super().process_rhs(compiler, connection)  # an empty list: EmptyResultSet, no row
        finally:
            self.rhs = given


def integer_lookups_register() -> None:
    IntegerField.register_lookup(IntegerFieldInRange)
