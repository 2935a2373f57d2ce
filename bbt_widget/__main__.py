"""``python -m bbt_widget`` and the ``bbt-widget`` script: the command (:func:`cli.main`),
then the process ends at once with its exit code (:func:`exit_now`)."""

from .cli import main
from .cli_commands.process_exit import exit_now


def run() -> None:
    """Run the command on the command line's arguments and end the process with its code."""
    exit_now(main())


if __name__ == "__main__":
    run()
