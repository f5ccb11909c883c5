"""`geofence` on PATH (and `python -m geofence`): runs the packaged command with
the same arguments, replacing this process, so exit codes, standard streams
and signals are the command's own."""
import os
import sys

from . import binary_path


def main() -> None:
    os.execv(binary_path(), [binary_path(), *sys.argv[1:]])


if __name__ == "__main__":
    main()
