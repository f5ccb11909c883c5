"""What the package raises and warns: both carry the command's own words, or
say what in the caller's frame was wrong and where (its row, counted from 1,
and its index label)."""


class GeofenceError(RuntimeError):
    """The geofence command or the extension refused the input; the message says why."""


class GeofenceWarning(UserWarning):
    """A run judged fewer fixes than it was given (invalid or stale ones were
    counted and skipped); the message is the run's summary line and, for
    invalid fixes, the reason the first one was invalid."""
