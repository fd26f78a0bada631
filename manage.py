#!/usr/bin/env python
"""Django's command-line utility for pifarm."""

import os
import sys


def main():
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "pifarm.settings")
    from django.core.management import execute_from_command_line
    from django.db import DatabaseError

    try:
        execute_from_command_line(sys.argv)
    except DatabaseError:
        # A data directory not migrated yet, or a database server that is down, is the user's
        # to fix and deserves a sentence; any other database error is a bug: its traceback.
        # So is any error of migrate itself, which would otherwise be told to migrate.
        from pifarm.dbready import not_ready

        reason = None if sys.argv[1:2] == ["migrate"] else not_ready()
        if reason is None:
            raise
        sys.exit(f"manage.py {' '.join(sys.argv[1:2])}: {reason}")


if __name__ == "__main__":
    main()
